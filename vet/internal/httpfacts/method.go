package httpfacts

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
)

// Method is what is known, at a call site, about the HTTP method of the
// request whose response the call returns.
type Method int

// The methods a response source can have. Only WithBody responses are worth
// judging: a HEAD response has no body, and a response to a request built
// somewhere else (a parameter, a field, a helper) may be one.
const (
	NotSource Method = iota // not a fresh client response
	Unknown                 // a client response to a request built elsewhere
	Head                    // a HEAD request: no body to drain
	WithBody                // a request with a known method other than HEAD
)

// Source reports whether call returns a fresh *http.Response that the caller
// must close, and what is known about its request's method, looking for the
// request's construction in fd (the function that contains call).
func (f *Facts) Source(call *ast.CallExpr, fd *ast.FuncDecl) Method {
	r := newResolver(f, fd)
	return r.call(call).m
}

// origin is a resolved method: m, or, when param >= 0, whatever the caller
// passes as parameter param (a method string or an *http.Request).
type origin struct {
	m     Method
	param int
}

var (
	unknown  = origin{Unknown, -1}
	withBody = origin{WithBody, -1}
)

// join merges the origins of two definitions of the same value: they must
// agree, or nothing is known.
func join(a, b origin) origin {
	switch {
	case a.m == NotSource:
		return b
	case a == b:
		return a
	}
	return unknown
}

// resolver finds, inside one function, how requests and method strings
// were built.
type resolver struct {
	f      *Facts
	info   *types.Info
	scope  ast.Node
	params map[*types.Var]int
}

func newResolver(f *Facts, fd *ast.FuncDecl) *resolver {
	r := &resolver{f: f, info: f.pass.TypesInfo, params: map[*types.Var]int{}}
	if fd == nil {
		return r
	}
	r.scope = fd.Body
	if fn, ok := r.info.Defs[fd.Name].(*types.Func); ok {
		ps := fn.Signature().Params()
		for i := 0; i < ps.Len(); i++ {
			r.params[ps.At(i)] = i
		}
	}
	return r
}

// call resolves a call that may return a client response.
func (r *resolver) call(call *ast.CallExpr) origin {
	fn := nethttp.Callee(r.info, call)
	switch {
	case fn == nil:
		return origin{NotSource, -1}
	case nethttp.IsFunc(fn, "net/http", "Head"), nethttp.IsMethod(fn, "net/http", "Client", "Head"):
		return origin{Head, -1}
	case nethttp.IsFunc(fn, "net/http", "Get", "Post", "PostForm"),
		nethttp.IsMethod(fn, "net/http", "Client", "Get", "Post", "PostForm"):
		return withBody
	case nethttp.IsMethod(fn, "net/http", "Client", "Do"),
		nethttp.IsMethod(fn, "net/http", "Transport", "RoundTrip"),
		nethttp.IsMethod(fn, "net/http", "RoundTripper", "RoundTrip"):
		if len(call.Args) != 1 {
			return unknown
		}
		return r.request(call.Args[0], 0)
	}
	p, ok := r.f.sourceParam(fn)
	switch {
	case !ok:
		return origin{NotSource, -1}
	case p < 0:
		return withBody
	case p < len(call.Args):
		return r.value(call.Args[p], 0)
	}
	return unknown
}

// value resolves the method carried by e: a method string or a request.
func (r *resolver) value(e ast.Expr, depth int) origin {
	t := r.info.TypeOf(e)
	if nethttp.IsRequest(t) {
		return r.request(e, depth)
	}
	if b, ok := t.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
		return r.method(e, depth)
	}
	return unknown
}

// method resolves a method string.
func (r *resolver) method(e ast.Expr, depth int) origin {
	if s, ok := nethttp.StringConst(r.info, e); ok {
		if strings.EqualFold(s, "HEAD") {
			return origin{Head, -1}
		}
		return withBody // "" means GET
	}
	return r.variable(e, depth, r.method)
}

// request resolves the method of an *http.Request expression.
func (r *resolver) request(e ast.Expr, depth int) origin {
	e = ast.Unparen(e)
	if depth > 4 {
		return unknown
	}
	switch e := e.(type) {
	case *ast.CallExpr:
		fn := nethttp.Callee(r.info, e)
		switch {
		case nethttp.IsFunc(fn, "net/http", "NewRequest") && len(e.Args) == 3:
			return r.method(e.Args[0], depth+1)
		case nethttp.IsFunc(fn, "net/http", "NewRequestWithContext") && len(e.Args) == 4:
			return r.method(e.Args[1], depth+1)
		case nethttp.IsMethod(fn, "net/http", "Request", "WithContext", "Clone"):
			if sel, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr); ok {
				return r.request(sel.X, depth+1)
			}
		}
		return unknown
	case *ast.UnaryExpr:
		lit, ok := ast.Unparen(e.X).(*ast.CompositeLit)
		if e.Op != token.AND || !ok || !nethttp.IsNamed(r.info.TypeOf(lit), "net/http", "Request") {
			return unknown
		}
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Method" {
					return r.method(kv.Value, depth+1)
				}
			}
		}
		return withBody // no Method: GET
	}
	return r.variable(e, depth, r.request)
}

// variable resolves a local variable through every assignment to it in the
// function, and, for a request, every assignment to its Method field. A
// parameter that is never reassigned resolves to itself, for callers to
// resolve through the ResponseSource fact.
func (r *resolver) variable(e ast.Expr, depth int, resolve func(ast.Expr, int) origin) origin {
	v := nethttp.ObjOf(r.info, e)
	if v == nil || !nethttp.IsLocal(v) || r.scope == nil || depth > 4 {
		return unknown
	}
	var o origin
	defs := 0
	ast.Inspect(r.scope, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Method" && nethttp.ObjOf(r.info, sel.X) == v && len(n.Rhs) == len(n.Lhs) {
					o = join(o, r.method(n.Rhs[i], depth+1)) // req.Method = ...
					continue
				}
				if nethttp.ObjOf(r.info, l) != v {
					continue
				}
				defs++
				switch {
				case n.Tok != token.ASSIGN && n.Tok != token.DEFINE:
					o = unknown // method += "..."
				case len(n.Rhs) == len(n.Lhs):
					o = join(o, resolve(n.Rhs[i], depth+1))
				case i == 0 && len(n.Rhs) == 1:
					o = join(o, resolve(n.Rhs[0], depth+1)) // req, err := http.NewRequest(...)
				default:
					o = unknown
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if r.info.Defs[id] != v {
					continue
				}
				defs++
				switch {
				case len(n.Values) == 0:
					if !nethttp.IsRequest(v.Type()) {
						o = join(o, withBody) // var method string: "" means GET
					} else {
						defs-- // var req *http.Request: nil until assigned
					}
				case len(n.Values) == len(n.Names):
					o = join(o, resolve(n.Values[i], depth+1))
				case i == 0 && len(n.Values) == 1:
					o = join(o, resolve(n.Values[0], depth+1))
				default:
					o = unknown
				}
			}
		case *ast.UnaryExpr:
			if n.Op == token.AND && nethttp.ObjOf(r.info, n.X) == v {
				o = unknown // &method: set elsewhere
			}
		case *ast.RangeStmt:
			if nethttp.ObjOf(r.info, n.Key) == v || (n.Value != nil && nethttp.ObjOf(r.info, n.Value) == v) {
				o = unknown
			}
		}
		return true
	})
	if i, ok := r.params[v]; ok {
		if defs == 0 && o.m == NotSource {
			return origin{Unknown, i}
		}
		return unknown
	}
	if defs == 0 {
		return unknown
	}
	return o
}
