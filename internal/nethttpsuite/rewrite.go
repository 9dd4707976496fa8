package nethttpsuite

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// skipBodies makes each function skip names (a helper taking t) skip its
// test with the reason given.
func skipBodies(f *ast.File, skip map[string]string) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv != nil {
			continue
		}
		why, ok := skip[fd.Name.Name]
		if !ok {
			continue
		}
		fd.Body = &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
			Fun:  &ast.SelectorExpr{X: ast.NewIdent("t"), Sel: ast.NewIdent("Skip")},
			Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: strconv.Quote("nethttpsuite: not applicable: " + why)}},
		}}}}
	}
}

// stubLinknamed gives a body to the functions the tests declare without
// one, to be linked by //go:linkname to net/http's internals (Go 1.27's
// HTTP/3 hooks): outside net/http there is nothing to link to, so each
// panics if a test reaches it. The modes that use them are not run here.
func stubLinknamed(f *ast.File) {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body != nil {
			continue
		}
		fd.Doc = nil
		// Their results name x/net/quic's Endpoint: the shim's stand-in.
		astutil.Apply(fd.Type, func(c *astutil.Cursor) bool {
			if sel, ok := c.Node().(*ast.SelectorExpr); ok && exprString(sel) == "quic.Endpoint" {
				c.Replace(ast.NewIdent("quicEndpoint"))
			}
			return true
		}, nil)
		fd.Body = &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: &ast.CallExpr{
			Fun:  ast.NewIdent("panic"),
			Args: []ast.Expr{&ast.BasicLit{Kind: token.STRING, Value: strconv.Quote("nethttpsuite: " + fd.Name.Name + " links to net/http's internals")}},
		}}}}
	}
	// The directives sit in the file's comments too: drop them.
	for _, cg := range f.Comments {
		var kept []*ast.Comment
		for _, c := range cg.List {
			if !strings.HasPrefix(c.Text, "//go:linkname") {
				kept = append(kept, c)
			}
		}
		cg.List = kept
	}
}

// rewriteImports points the imports the tests make of net/http's internal
// packages and of httptest at the copies.
func rewriteImports(f *ast.File, paths map[string]string) {
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if to, ok := paths[p]; ok {
			imp.Path.Value = strconv.Quote(to)
		}
	}
}

// rewriteSwapped makes every server start in f the swap package's: the
// type Server (except in type assertions: what a handler finds under
// http.ServerContextKey stays an *http.Server) and the package-level
// Serve functions, whether f imports net/http with a dot or by name.
// Names of net/http's export_test.go that the shim provides lose their
// qualifier: the shim declares them in the test package itself.
func rewriteSwapped(f *ast.File, swapPath string, shim map[string]bool) {
	dot, named := netHTTPImport(f)
	// Nodes that do not name a package-level server: selectors' fields,
	// composite-literal keys, declared names, type assertions' types.
	skip := map[ast.Node]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			skip[n.Sel] = true
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				skip[id] = true
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil {
				ast.Inspect(n.Type, func(m ast.Node) bool {
					if m != nil {
						skip[m] = true
					}
					return true
				})
			}
		case *ast.FuncDecl:
			skip[n.Name] = true
		case *ast.Field:
			for _, id := range n.Names {
				skip[id] = true
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				skip[id] = true
			}
		}
		return true
	})
	used := false
	swapSel := func(name string) ast.Expr {
		used = true
		return &ast.SelectorExpr{X: ast.NewIdent("swap"), Sel: ast.NewIdent(name)}
	}
	astutil.Apply(f, func(c *astutil.Cursor) bool {
		if skip[c.Node()] {
			return true
		}
		switch n := c.Node().(type) {
		case *ast.CallExpr:
			// ts.Config.ExportAllConnsByState() → connsByState(ts)
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ExportAllConnsByState" && len(n.Args) == 0 {
				if cfg, ok := sel.X.(*ast.SelectorExpr); ok && cfg.Sel.Name == "Config" {
					c.Replace(&ast.CallExpr{Fun: ast.NewIdent("connsByState"), Args: []ast.Expr{cfg.X}})
					return false
				}
			}
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok || named == "" || id.Name != named {
				return true
			}
			if slices.Contains(swapped, n.Sel.Name) {
				c.Replace(swapSel(n.Sel.Name))
				return false
			}
			if shim[n.Sel.Name] {
				c.Replace(ast.NewIdent(n.Sel.Name))
				return false
			}
		case *ast.Ident:
			if dot && slices.Contains(swapped, n.Name) {
				c.Replace(swapSel(n.Name))
			}
		}
		return true
	}, nil)
	if used {
		addImport(f, "swap", swapPath)
	}
}

// rewriteTransports wraps every *http.Transport f builds (&Transport{…},
// new(Transport), and the result of a Clone method) in swap.Transport,
// which makes it send through the swapped client.
func rewriteTransports(f *ast.File, swapPath string) {
	dot, named := netHTTPImport(f)
	isTransport := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return dot && e.Name == "Transport"
		case *ast.SelectorExpr:
			id, ok := e.X.(*ast.Ident)
			return ok && named != "" && id.Name == named && e.Sel.Name == "Transport"
		}
		return false
	}
	used := false
	wrap := func(c *astutil.Cursor, fn string, e ast.Expr) {
		used = true
		c.Replace(&ast.CallExpr{Fun: &ast.SelectorExpr{X: ast.NewIdent("swap"), Sel: ast.NewIdent(fn)}, Args: []ast.Expr{e}})
	}
	astutil.Apply(f, nil, func(c *astutil.Cursor) bool {
		switch n := c.Node().(type) {
		case *ast.UnaryExpr:
			if cl, ok := n.X.(*ast.CompositeLit); ok && n.Op == token.AND && isTransport(cl.Type) {
				wrap(c, "Transport", n)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 && isTransport(n.Args[0]) {
				wrap(c, "Transport", n)
			}
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Clone" && len(n.Args) == 0 {
				wrap(c, "Clone", sel.X)
			}
			// req.WithT(t) (net/http's export_test.go) → withT(req, t).
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithT" && len(n.Args) == 1 {
				c.Replace(&ast.CallExpr{Fun: ast.NewIdent("withT"), Args: []ast.Expr{sel.X, n.Args[0]}})
				return true
			}
			// tr.RegisterProtocol(s, rt) → swap.RegisterProtocol(tr, s, rt):
			// the swapped client consults it too.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "RegisterProtocol" && len(n.Args) == 2 {
				used = true
				c.Replace(&ast.CallExpr{
					Fun:  &ast.SelectorExpr{X: ast.NewIdent("swap"), Sel: ast.NewIdent("RegisterProtocol")},
					Args: append([]ast.Expr{sel.X}, n.Args...),
				})
			}
		}
		return true
	})
	if used {
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == swapPath {
				return
			}
		}
		addImport(f, "swap", swapPath)
	}
}

// netHTTPImport reports how f imports net/http: with a dot, and/or under
// a name ("" when not by name).
func netHTTPImport(f *ast.File) (dot bool, named string) {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "net/http" {
			switch {
			case imp.Name == nil:
				named = "http"
			case imp.Name.Name == ".":
				dot = true
			default:
				named = imp.Name.Name
			}
		}
	}
	return dot, named
}

func addImport(f *ast.File, name, path string) {
	spec := &ast.ImportSpec{Name: ast.NewIdent(name), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(path)}}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			gd.Specs = append(gd.Specs, spec)
			f.Imports = append(f.Imports, spec)
			return
		}
	}
}

// declaredNames lists the top-level names a Go source declares.
func declaredNames(src string) map[string]bool {
	f, err := parser.ParseFile(token.NewFileSet(), "shim.go", src, parser.SkipObjectResolution)
	if err != nil {
		panic(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				}
			}
		}
	}
	return names
}
