// Package nethttpsuite runs Go's own net/http tests against hotpath: the
// server tests against hotpath's server, the client tests against
// hotpath's client.Transport.
//
// The tests are not committed here: Generate copies them at test time from
// the installed Go ($GOROOT/src/net/http: serve_test.go,
// clientserver_test.go, sniff_test.go, fs_test.go,
// responsecontroller_test.go and the helpers they share), with
// net/http/httptest and the internal packages they import, into a package
// of this module. One rewrite is made: every http.Server the tests (and
// httptest) start, and the package-level Serve, ServeTLS, ListenAndServe
// and ListenAndServeTLS, become the swap package's, which is
// hotpath's server.Server, or net/http's own when built with the tag
// nethttp. The test bodies stay as Go wrote them, so the same units run on
// both servers, and every difference is one a user could hit after the
// one-line swap.
//
// The client suite (ClientSuite: clientserver_test.go, transport_test.go,
// client_test.go) keeps net/http's servers and swaps the client: every
// *http.Transport the tests and httptest build (and DefaultTransport)
// sends its http:// and https:// requests through a client.Transport made
// by client.FromHTTPTransport from that *http.Transport's fields when the
// request is sent; the *http.Transport itself serves what client.Transport
// hands to its Fallback (registered with RegisterProtocol, which
// net/http's transport consults first, and whose CloseIdleConnections
// reaches ours).
//
// A few test units reach into net/http's internals through its
// export_test.go (hooks, the Transport's connection pool, unexported
// functions). What can be expressed with the public API is provided by a
// shim (shim.go.txt); a test that needs more is left out, and the report
// lists it with the first name it could not resolve.
package nethttpsuite

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"
)

// TestFiles are the net/http test files whose server tests run here.
var TestFiles = []string{
	"serve_test.go",
	"clientserver_test.go",
	"sniff_test.go",
	"fs_test.go",
	"responsecontroller_test.go",
}

// helperFiles hold what those files share: TestMain, the run harness's
// helpers, the fake network of the synctest tests.
var helperFiles = []string{
	"main_test.go",
	"netconn_test.go",
}

// ClientTestFiles are the net/http test files whose client tests run here.
var ClientTestFiles = []string{
	"clientserver_test.go",
	"transport_test.go",
	"client_test.go",
}

// Suite says which of net/http's tests a generated package holds and what
// it swaps.
type Suite struct {
	Files  []string // net/http's test files copied
	Client bool     // swap the client (servers stay net/http's), not the server
	// Skip names helper functions (with a parameter t *testing.T) whose
	// body becomes t.Skip(reason): what they test does not apply to the
	// swapped side, on either build.
	Skip map[string]string
}

// The suites.
var (
	ServerSuite = Suite{Files: TestFiles}
	ClientSuite = Suite{Files: ClientTestFiles, Client: true, Skip: map[string]string{
		"runCancelTestTransport": "Transport.CancelRequest: deprecated since Go 1.6 (net/http's says it cannot " +
			"cancel HTTP/2 requests and may become a no-op); client.Transport has none: the request's context " +
			"or Request.Cancel cancels",
	}}
)

// swapped are the net/http names that start a server: each use in the
// copied tests and in httptest becomes the swap package's.
var swapped = []string{"Server", "Serve", "ServeTLS", "ListenAndServe", "ListenAndServeTLS"}

//go:embed shim.go.txt
var shimSource string

//go:embed swap_hotpath.go.txt
var swapHotpath string

//go:embed swap_nethttp.go.txt
var swapNethttp string

//go:embed shim_client.go.txt
var shimClientSource string

//go:embed swap_client.go.txt
var swapClient string

//go:embed swap_client_hotpath.go.txt
var swapClientHotpath string

//go:embed swap_client_nethttp.go.txt
var swapClientNethttp string

//go:embed httptest_extra.go.txt
var httptestExtra string

//go:embed testenv.go.txt
var testenvSource string

// Generated describes one generated suite.
type Generated struct {
	Dir       string            // the generated package's directory
	Package   string            // its import path
	Dropped   map[string]string // test or helper left out → the first error that left it out
	ServerRun map[string]bool   // top-level tests that start a server (directly or through a helper)
	Files     []string          // the copied test files
}

// Generate writes the server suite into dir, a new directory inside the
// module whose import path is pkgPath, from goroot's net/http.
func Generate(goroot, dir, pkgPath string) (*Generated, error) {
	return GenerateSuite(ServerSuite, goroot, dir, pkgPath)
}

// GenerateSuite writes suite s into dir, a new directory inside the
// module whose import path is pkgPath, from goroot's net/http.
func GenerateSuite(s Suite, goroot, dir, pkgPath string) (*Generated, error) {
	src := filepath.Join(goroot, "src", "net", "http")
	g := &Generated{Dir: dir, Package: pkgPath, Dropped: map[string]string{}, ServerRun: map[string]bool{}}
	swapPath := pkgPath + "/swap"
	// rewrite makes f start the swapped servers, and, in the client
	// suite, send through the swapped transports.
	rewrite := func(f *ast.File, shim map[string]bool) {
		rewriteSwapped(f, swapPath, shim)
		if s.Client {
			rewriteTransports(f, swapPath)
		}
	}

	// Support packages: httptest, its test certificate, the chunked
	// writer the tests use, a testenv with what the tests call.
	if err := copyPackage(filepath.Join(src, "httptest"), filepath.Join(dir, "httptest"), map[string]string{
		"net/http/internal/testcert": pkgPath + "/testcert",
		"internal/nettest":           pkgPath + "/nettest",
	}, func(f *ast.File) { rewrite(f, nil) }); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "httptest", "conns_by_state.go"), httptestExtra); err != nil {
		return nil, err
	}
	if err := copyPackage(filepath.Join(src, "internal", "testcert"), filepath.Join(dir, "testcert"), nil, nil); err != nil {
		return nil, err
	}
	if err := copyPackage(filepath.Join(src, "internal"), filepath.Join(dir, "internal"), nil, nil); err != nil {
		return nil, err
	}
	// Go 1.27's httptest and tests use Go's internal fake network
	// (internal/nettest, on internal/gate): copied too where they exist.
	internals := map[string]string{}
	for _, p := range []string{"gate", "nettest"} {
		from := filepath.Join(goroot, "src", "internal", p)
		if _, err := os.Stat(from); err != nil {
			continue
		}
		internals["internal/"+p] = pkgPath + "/" + p
	}
	for p, to := range internals {
		if err := copyPackage(filepath.Join(goroot, "src", p), filepath.Join(dir, filepath.Base(to)), internals, nil); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(dir, "testenv", "testenv.go"), testenvSource); err != nil {
		return nil, err
	}
	swaps := map[string]string{"swap_hotpath.go": swapHotpath, "swap_nethttp.go": swapNethttp}
	if s.Client {
		swaps = map[string]string{"swap.go": swapClient, "swap_hotpath.go": swapClientHotpath, "swap_nethttp.go": swapClientNethttp}
	}
	for name, content := range swaps {
		if err := writeFile(filepath.Join(dir, "swap", name), content); err != nil {
			return nil, err
		}
	}
	// fs_test.go serves files from testdata/.
	if err := os.CopyFS(filepath.Join(dir, "testdata"), os.DirFS(filepath.Join(src, "testdata"))); err != nil {
		return nil, err
	}

	imports := map[string]string{
		"net/http/httptest":          pkgPath + "/httptest",
		"net/http/internal/testcert": pkgPath + "/testcert",
		"net/http/internal":          pkgPath + "/internal",
		"internal/testenv":           pkgPath + "/testenv",
		"internal/synctest":          "testing/synctest",
		"internal/nettest":           pkgPath + "/nettest",
	}
	shimNames := declaredNames(shimSource)
	if s.Client {
		maps.Copy(shimNames, declaredNames(shimClientSource))
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range append(slices.Clone(s.Files), helperFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(src, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		f.Name.Name = "suite"
		stubLinknamed(f)
		skipBodies(f, s.Skip)
		rewriteImports(f, imports)
		rewrite(f, shimNames)
		files[name] = f
		g.Files = append(g.Files, name)
	}
	shim := strings.ReplaceAll(shimSource, "SWAP_PATH", swapPath)
	shim = strings.ReplaceAll(shim, "HTTPTEST_PATH", pkgPath+"/httptest")
	if err := writeFile(filepath.Join(dir, "shim_test.go"), shim); err != nil {
		return nil, err
	}
	if s.Client {
		shim := strings.ReplaceAll(shimClientSource, "SWAP_PATH", swapPath)
		if err := writeFile(filepath.Join(dir, "shim_client_test.go"), shim); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(dir, "doc.go"), "// Package suite is generated by internal/nethttpsuite: net/http's server tests.\npackage suite\n"); err != nil {
		return nil, err
	}

	lib, err := newHelperLibrary(src, append(slices.Clone(s.Files), helperFiles...), imports, func(f *ast.File) { rewrite(f, shimNames) })
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, helpersFile), lib.source()); err != nil {
		return nil, err
	}
	files[helpersFile] = nil

	// Leave out what does not compile outside net/http, until all does.
	imp := importer.ForCompiler(token.NewFileSet(), "source", nil).(types.ImporterFrom)
	for round := 0; ; round++ {
		if err := writeFiles(fset, dir, files); err != nil {
			return nil, err
		}
		// Check what was written: positions are the files' as printed.
		errs, parsed, err := typeErrors(dir, imp)
		if err != nil {
			return nil, err
		}
		fset = parsed.fset
		for name := range files {
			files[name] = parsed.files[name]
		}
		if len(errs) == 0 {
			break
		}
		if round == 30 {
			return nil, fmt.Errorf("nethttpsuite: still %d type errors after %d rounds, first: %v", len(errs), round, errs[0])
		}
		// A helper another of net/http's test files declares is copied
		// in; what remains undefined leaves out what uses it.
		progress := false
		if lib.resolve(errs) {
			progress = true
			files[helpersFile] = nil // rewritten from lib next round
			if err := writeFile(filepath.Join(dir, helpersFile), lib.source()); err != nil {
				return nil, err
			}
			continue
		}
		for _, e := range errs {
			name := filepath.Base(e.pos.Filename)
			f := files[name]
			if f == nil {
				return nil, fmt.Errorf("nethttpsuite: error outside the copied tests: %v", e)
			}
			if dropAt(fset, f, e, g.Dropped) {
				progress = true
			}
			if name == helpersFile {
				lib.forget(g.Dropped)
			}
		}
		if !progress {
			return nil, fmt.Errorf("nethttpsuite: cannot resolve %v", errs[0])
		}
	}
	g.serverTests(files)
	return g, nil
}

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

type typeError struct {
	pos token.Position
	msg string
}

func (e typeError) String() string { return fmt.Sprintf("%s: %s", e.pos, e.msg) }

// typeErrors type-checks the generated test package: every error, where
// the compiler would stop at ten. imp is reused from round to round, so
// the dependencies are checked once.
func typeErrors(dir string, imp types.Importer) ([]typeError, parsedDir, error) {
	fset := token.NewFileSet()
	parsed := parsedDir{fset, map[string]*ast.File{}}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, parsed, err
	}
	var errs []typeError
	var files []*ast.File
	for _, path := range names {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, parsed, err
		}
		files = append(files, f)
		parsed.files[filepath.Base(path)] = f
		// The type checker imports Go's internal packages, the go
		// command does not: each such import is an error here.
		for _, imp := range f.Imports {
			if ip, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(ip, "internal/") || strings.Contains(ip, "/internal/") && !strings.HasPrefix(ip, "github.com/hotpathhq/") {
				errs = append(errs, typeError{fset.Position(imp.Pos()), "use of internal package " + ip + " not allowed"})
			}
		}
	}
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			if te, ok := err.(types.Error); ok {
				errs = append(errs, typeError{te.Fset.Position(te.Pos), te.Msg})
			}
		},
	}
	conf.Check("suite", fset, files, nil)
	return errs, parsed, nil
}

type parsedDir struct {
	fset  *token.FileSet
	files map[string]*ast.File
}

// dropAt removes from f the top-level declaration (or import) that holds
// the error, recording why. It reports whether anything was removed.
func dropAt(fset *token.FileSet, f *ast.File, e typeError, dropped map[string]string) bool {
	var kept []ast.Decl
	removed := false
	for _, d := range f.Decls {
		from, to := fset.Position(d.Pos()), fset.Position(d.End())
		if e.pos.Line < from.Line || e.pos.Line > to.Line {
			kept = append(kept, d)
			continue
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			// An import left unused by what was removed.
			var specs []ast.Spec
			for _, s := range gd.Specs {
				if fset.Position(s.Pos()).Line != e.pos.Line {
					specs = append(specs, s)
				}
			}
			removed = len(specs) != len(gd.Specs)
			gd.Specs = specs
			kept = append(kept, d)
			continue
		}
		if gd, ok := d.(*ast.GenDecl); ok && len(gd.Specs) > 1 {
			var specs []ast.Spec
			for _, s := range gd.Specs {
				sf, st := fset.Position(s.Pos()), fset.Position(s.End())
				if e.pos.Line >= sf.Line && e.pos.Line <= st.Line {
					dropped[specName(s)] = e.msg
					removed = true
					continue
				}
				specs = append(specs, s)
			}
			gd.Specs = specs
			kept = append(kept, d)
			continue
		}
		dropped[declName(d)] = e.msg
		removed = true
	}
	f.Decls = kept
	return removed
}

func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			return fmt.Sprintf("(%s).%s", exprString(d.Recv.List[0].Type), d.Name.Name)
		}
		return d.Name.Name
	case *ast.GenDecl:
		if len(d.Specs) > 0 {
			return specName(d.Specs[0])
		}
	}
	return "?"
}

func specName(s ast.Spec) string {
	switch s := s.(type) {
	case *ast.TypeSpec:
		return s.Name.Name
	case *ast.ValueSpec:
		return s.Names[0].Name
	}
	return "?"
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = format.Node(&b, token.NewFileSet(), e)
	return b.String()
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

// serverTests finds the top-level tests that start a server: those that
// reach, directly or through package-level helpers, a swapped name or
// httptest's server constructors.
func (g *Generated) serverTests(files map[string]*ast.File) {
	refs := map[string]map[string]bool{} // function → names it uses
	starts := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			// A method is known by its name alone: a test that calls
			// any method of that name counts as reaching it.
			uses := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					uses[n.Name] = true
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && (id.Name == "swap" || id.Name == "httptest" && strings.Contains(n.Sel.Name, "Server")) {
						starts[fd.Name.Name] = true
					}
				}
				return true
			})
			refs[fd.Name.Name] = uses
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, uses := range refs {
			if starts[fn] {
				continue
			}
			for u := range uses {
				if starts[u] {
					starts[fn] = true
					changed = true
					break
				}
			}
		}
	}
	for fn := range refs {
		if strings.HasPrefix(fn, "Test") && fn != "TestMain" && starts[fn] {
			g.ServerRun[fn] = true
		}
	}
}

func writeFiles(fset *token.FileSet, dir string, files map[string]*ast.File) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if files[n] == nil {
			continue
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, files[n]); err != nil {
			return fmt.Errorf("nethttpsuite: printing %s: %w", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// copyPackage copies the non-test Go files of a package, rewriting its
// imports, and then each file with rewrite when it is set (httptest: its
// servers, and in the client suite its transports).
func copyPackage(from, to string, imports map[string]string, rewrite func(*ast.File)) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(from, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rewriteImports(f, imports)
		if rewrite != nil {
			rewrite(f)
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, f); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(to, e.Name()), b.String()); err != nil {
			return err
		}
	}
	return nil
}
