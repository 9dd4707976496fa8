// Package percall finds http.Transports built, used for a request and
// dropped within one function call: the shape behind HP001 (no connection
// reuse) and HP010 (a TLS handshake per call). A transport that is stored
// (in a field, a package variable, a sync.Once, behind a nil check),
// returned, or handed to other code is long-lived as far as we can tell, and
// is not reported.
package percall

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Transport is one per-call transport construction.
type Transport struct {
	Construct ast.Expr   // &http.Transport{...}, new(http.Transport), t.Clone()
	TLS       []ast.Expr // TLS configs attached to it: literal field or t.TLSClientConfig = x
}

// Find returns the per-call transports of the package's non-test code.
func Find(pass *analysis.Pass) []Transport {
	var out []Transport
	for _, f := range pass.Files {
		if rule.IsTestFile(pass, f.Pos()) {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || nethttp.IsMainOrInit(pass.Pkg, fd) || nethttp.IsTestFunc(fd) {
				continue
			}
			for _, tv := range inFunc(pass, fd.Body) {
				if tv.used && !tv.escapes && !tv.reused && !dialsPerCall(tv.t.Construct) {
					out = append(out, *tv.t)
				}
			}
		}
	}
	return out
}

// IsConstruct reports whether e builds a new *http.Transport.
func IsConstruct(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	switch e := e.(type) {
	case *ast.CompositeLit:
		return nethttp.IsNamed(info.TypeOf(e), "net/http", "Transport")
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok && id.Name == "new" && len(e.Args) == 1 {
			return nethttp.IsNamed(info.TypeOf(e.Args[0]), "net/http", "Transport")
		}
		return nethttp.IsMethod(nethttp.Callee(info, e), "net/http", "Transport", "Clone")
	}
	return false
}

type tvar struct {
	t       *Transport
	escapes bool
	used    bool
	reused  bool // used in a loop that does not build it: many requests per build
}

func inFunc(pass *analysis.Pass, body *ast.BlockStmt) []*tvar {
	info := pass.TypesInfo
	byVar := map[*types.Var]*tvar{} // transport and client locals -> their transport
	var all []*tvar
	guarded := lazyRegions(pass, body)
	inGuard := func(n ast.Node) bool {
		for _, g := range guarded {
			if g.Pos() <= n.Pos() && n.End() <= g.End() {
				return true
			}
		}
		return false
	}
	// transportOf returns the per-call transport an expression denotes: a
	// construction, a tracked local, or a client literal holding either.
	var transportOf func(e ast.Expr) *tvar
	newT := func(e ast.Expr) *tvar {
		tv := &tvar{t: &Transport{Construct: e}}
		if lit := litOf(e); lit != nil {
			for _, el := range lit.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "TLSClientConfig" {
						tv.t.TLS = append(tv.t.TLS, kv.Value)
					}
				}
			}
		}
		all = append(all, tv)
		return tv
	}
	transportOf = func(e ast.Expr) *tvar {
		e = ast.Unparen(e)
		if IsConstruct(info, e) {
			if inGuard(e) {
				return nil
			}
			return newT(e)
		}
		if v := nethttp.ObjOf(info, e); v != nil {
			return byVar[v]
		}
		lit := litOf(e)
		if lit == nil || !nethttp.IsNamed(info.TypeOf(lit), "net/http", "Client") {
			return nil
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Transport" {
					return transportOf(kv.Value)
				}
			}
		}
		return nil
	}
	// One pass in source order: assignments define locals; calls use them.
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		stack = append(stack, n) // escapes and loopedOver want n on top
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if i >= len(n.Rhs) || len(n.Lhs) != len(n.Rhs) {
					break
				}
				tv := transportOf(n.Rhs[i])
				if tv == nil {
					continue
				}
				if sel, ok := ast.Unparen(l).(*ast.SelectorExpr); ok && sel.Sel.Name == "Transport" {
					// client.Transport = t: the client now carries t.
					if v := nethttp.ObjOf(info, sel.X); v != nil && nethttp.IsLocal(v) {
						byVar[v] = tv
						continue
					}
				}
				v := nethttp.ObjOf(info, l)
				if v == nil || !nethttp.IsLocal(v) {
					tv.escapes = true // stored in a field or a package variable
					continue
				}
				byVar[v] = tv
			}
			// t.TLSClientConfig = cfg
			if len(n.Lhs) == 1 && len(n.Rhs) == 1 {
				if sel, ok := ast.Unparen(n.Lhs[0]).(*ast.SelectorExpr); ok && sel.Sel.Name == "TLSClientConfig" {
					if tv := byVar[nethttp.ObjOf(info, sel.X)]; tv != nil {
						tv.t.TLS = append(tv.t.TLS, n.Rhs[0])
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) && len(n.Names) == len(n.Values) {
					if tv := transportOf(n.Values[i]); tv != nil {
						if v, ok := info.Defs[name].(*types.Var); ok {
							byVar[v] = tv
						}
					}
				}
			}
		case *ast.CallExpr:
			fn := nethttp.Callee(info, n)
			sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
			if ok && (nethttp.IsMethod(fn, "net/http", "Client", "Do", "Get", "Post", "PostForm", "Head") ||
				nethttp.IsMethod(fn, "net/http", "Transport", "RoundTrip")) {
				if tv := transportOf(sel.X); tv != nil {
					tv.used = true
					tv.reused = tv.reused || loopedOver(stack, tv.t.Construct)
				}
			}
		case *ast.Ident:
			v, _ := info.Uses[n].(*types.Var)
			if tv := byVar[v]; tv != nil && escapes(stack) {
				tv.escapes = true
			}
		}
		return true
	})
	return all
}

// loopedOver reports whether the node at the top of stack runs in a for or
// range loop that does not contain construct: the transport built once
// serves every iteration (coredns's health checker polls with one client).
func loopedOver(stack []ast.Node, construct ast.Expr) bool {
	for i := len(stack) - 1; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			if construct.Pos() < n.Pos() || construct.End() > n.End() {
				return true
			}
		case *ast.FuncLit:
			return false
		}
	}
	return false
}

// escapes reports whether the identifier at the top of stack hands its value
// to other code: returned, passed as an argument, stored, captured by a go
// statement, sent on a channel.
func escapes(stack []ast.Node) bool {
	id := stack[len(stack)-1]
	switch p := stack[len(stack)-2].(type) {
	case *ast.SelectorExpr:
		return false // t.Field, c.Do(...)
	case *ast.CallExpr:
		for _, a := range p.Args {
			if a == id {
				return true
			}
		}
		return false
	case *ast.AssignStmt:
		for i, r := range p.Rhs {
			if r != id {
				continue
			}
			// client.Transport = t keeps t within the call (tracked).
			if i < len(p.Lhs) {
				if sel, ok := p.Lhs[i].(*ast.SelectorExpr); ok && sel.Sel.Name == "Transport" {
					return false
				}
			}
			return true
		}
		return false
	case *ast.KeyValueExpr:
		// Transport: t inside an http.Client literal is tracked by transportOf;
		// any other literal stores it.
		if len(stack) >= 3 {
			if k, ok := p.Key.(*ast.Ident); ok && k.Name == "Transport" {
				return false
			}
		}
		return p.Value == id
	case *ast.ReturnStmt, *ast.SendStmt, *ast.CompositeLit, *ast.UnaryExpr:
		return true
	}
	return false
}

// dialsPerCall reports whether the transport literal dials through a
// function literal (Dial, DialContext, DialTLS, DialTLSContext): a closure
// over per-call state, such as httputil.DumpRequestOut's in-memory pipe,
// makes the transport single-use by design.
func dialsPerCall(e ast.Expr) bool {
	lit := litOf(e)
	if lit == nil {
		return false
	}
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && strings.HasPrefix(k.Name, "Dial") {
				if _, ok := ast.Unparen(kv.Value).(*ast.FuncLit); ok {
					return true
				}
			}
		}
	}
	return false
}

// litOf returns the composite literal of e or &e.
func litOf(e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, _ := e.(*ast.CompositeLit)
	return lit
}

// lazyRegions returns the bodies of lazy-initialisation guards in body: if
// statements testing "x == nil", and function literals run by sync.Once.Do,
// sync.OnceFunc, sync.OnceValue(s).
func lazyRegions(pass *analysis.Pass, body *ast.BlockStmt) []ast.Node {
	info := pass.TypesInfo
	var out []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt:
			if b, ok := ast.Unparen(n.Cond).(*ast.BinaryExpr); ok && b.Op == token.EQL {
				if id, ok := ast.Unparen(b.Y).(*ast.Ident); ok && id.Name == "nil" {
					out = append(out, n.Body)
				}
			}
		case *ast.CallExpr:
			fn := nethttp.Callee(info, n)
			if nethttp.IsMethod(fn, "sync", "Once", "Do") || nethttp.IsFunc(fn, "sync", "OnceFunc", "OnceValue", "OnceValues") {
				for _, a := range n.Args {
					if lit, ok := a.(*ast.FuncLit); ok {
						out = append(out, lit)
					}
				}
			}
		}
		return true
	})
	return out
}
