// Package serverlit finds the http.Server values a package builds with a
// composite literal and works out which fields end up set, in the literal or
// by an assignment after it (srv.ReadHeaderTimeout = d, s.srv.IdleTimeout =
// d anywhere in the package). HP009 and HP013 share it, so neither repeats
// gosec G112's false positive on timeouts set after the literal.
package serverlit

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Server is one http.Server composite literal.
type Server struct {
	Lit     *ast.CompositeLit
	File    *ast.File
	set     map[string]bool
	Escapes bool // handed to code we cannot see (returned, passed, stored elsewhere)
}

// Set reports whether field is set to something other than a constant zero,
// in the literal or after it.
func (s *Server) Set(field string) bool { return s.set[field] }

// Find returns the http.Server literals of non-test files in the package.
func Find(pass *analysis.Pass) []*Server {
	info := pass.TypesInfo
	later := map[types.Object]map[string]bool{} // storage -> fields assigned anywhere
	escaped := map[types.Object]bool{}
	var out []*Server
	var dests []types.Object
	in := inspector.New(pass.Files)
	for c := range in.Root().Preorder((*ast.AssignStmt)(nil), (*ast.CompositeLit)(nil), (*ast.CallExpr)(nil), (*ast.ReturnStmt)(nil)) {
		switch n := c.Node().(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				sel, ok := ast.Unparen(l).(*ast.SelectorExpr)
				if !ok || !nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Server") {
					continue
				}
				if i < len(n.Rhs) && isZero(info, n.Rhs[i]) {
					continue
				}
				if o := nethttp.RootObj(info, sel.X); o != nil {
					if later[o] == nil {
						later[o] = map[string]bool{}
					}
					later[o][sel.Sel.Name] = true
				}
			}
			// srv2 := srv, x.srv = srv: the server now lives elsewhere too.
			for _, r := range n.Rhs {
				if o := nethttp.RootObj(info, r); o != nil && nethttp.IsNamed(info.TypeOf(r), "net/http", "Server") {
					escaped[o] = true
				}
			}
		case *ast.CallExpr:
			fn := nethttp.Callee(info, n)
			if nethttp.IsFunc(fn, "golang.org/x/net/http2", "ConfigureServer") {
				continue
			}
			for _, a := range n.Args {
				if o := nethttp.RootObj(info, a); o != nil && nethttp.IsNamed(info.TypeOf(a), "net/http", "Server") {
					escaped[o] = true
				}
			}
		case *ast.ReturnStmt:
			for _, r := range n.Results {
				if o := nethttp.RootObj(info, r); o != nil && nethttp.IsNamed(info.TypeOf(r), "net/http", "Server") {
					escaped[o] = true
				}
			}
		case *ast.CompositeLit:
			if !nethttp.IsNamed(info.TypeOf(n), "net/http", "Server") || rule.IsTestFile(pass, n.Pos()) {
				continue
			}
			if _, isStruct := info.TypeOf(n).Underlying().(*types.Struct); !isStruct {
				continue
			}
			s := &Server{Lit: n, set: map[string]bool{}, File: fileOf(c)}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok && !isZero(info, kv.Value) {
					if k, ok := kv.Key.(*ast.Ident); ok {
						s.set[k.Name] = true
					}
				}
			}
			dest, esc := destination(info, c)
			s.Escapes = esc
			out = append(out, s)
			dests = append(dests, dest)
		}
	}
	for i, s := range out {
		if d := dests[i]; d != nil {
			for f := range later[d] {
				s.set[f] = true
			}
			s.Escapes = s.Escapes || escaped[d]
		}
	}
	return out
}

// destination returns the storage the literal at c is assigned to, and
// whether the literal escapes directly (returned, passed to a function).
func destination(info *types.Info, c inspector.Cursor) (types.Object, bool) {
	lit := c.Node()
	p := c.Parent()
	if u, ok := p.Node().(*ast.UnaryExpr); ok {
		lit = u
		p = p.Parent()
	}
	for {
		if _, ok := p.Node().(*ast.ParenExpr); !ok {
			break
		}
		lit = p.Node()
		p = p.Parent()
	}
	switch n := p.Node().(type) {
	case *ast.AssignStmt:
		for i, r := range n.Rhs {
			if r == lit && i < len(n.Lhs) {
				return nethttp.RootObj(info, n.Lhs[i]), false
			}
		}
	case *ast.ValueSpec:
		for i, r := range n.Values {
			if r == lit && i < len(n.Names) {
				return info.ObjectOf(n.Names[i]), false
			}
		}
	case *ast.SelectorExpr:
		return nil, false // (&http.Server{...}).ListenAndServe()
	case *ast.KeyValueExpr, *ast.CompositeLit:
		// A field of a larger literal: its field object is the storage.
		if kv, ok := n.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				return info.ObjectOf(k), false
			}
		}
		return nil, true
	}
	return nil, true
}

func fileOf(c inspector.Cursor) *ast.File {
	for p := range c.Enclosing((*ast.File)(nil)) {
		return p.Node().(*ast.File)
	}
	return nil
}

func isZero(info *types.Info, e ast.Expr) bool {
	v, ok := nethttp.IntConst(info, e)
	return ok && v == 0
}
