// What a package does to its clients and transports, gathered before
// HP016 judges them.

package clienttimeout

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/types/typeutil"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
)

// scanned is what the whole package does to clients and transports,
// gathered before the literals and calls are judged.
type scanned struct {
	// timeoutSet: variables and fields whose .Timeout is assigned a
	// non-zero value somewhere (http.DefaultClient's object included), or
	// that are overwritten whole (*c = *original).
	timeoutSet map[types.Object]bool
	// headerBound: variables and fields that are given a Transport with
	// ResponseHeaderTimeout set (in its literal, by an assignment, or by a
	// function of the package that returns one).
	headerBound map[types.Object]bool
	// boundedFuncs: functions of the package (or package variables holding
	// a function literal) that return such a Transport.
	boundedFuncs map[types.Object]bool
	// defaultAlias: variables defined as http.DefaultClient and never
	// assigned anything else (client := http.DefaultClient).
	defaultAlias map[types.Object]bool
}

func scan(info *types.Info, in *inspector.Inspector) *scanned {
	s := &scanned{timeoutSet: map[types.Object]bool{}, headerBound: map[types.Object]bool{}, boundedFuncs: map[types.Object]bool{}, defaultAlias: map[types.Object]bool{}}
	setters := s.scanFuncs(info, in)
	notAlias := map[types.Object]bool{}
	assign := func(lhs, rhs ast.Expr, define bool) {
		if star, ok := ast.Unparen(lhs).(*ast.StarExpr); ok && nethttp.IsNamed(info.TypeOf(star), "net/http", "Client") {
			// *c = *original: the whole client is replaced, Timeout included.
			if o := nethttp.RootObj(info, star.X); o != nil {
				s.timeoutSet[o] = true
			}
		}
		if sel, ok := ast.Unparen(lhs).(*ast.SelectorExpr); ok && rhs != nil && set(info, rhs) {
			switch {
			case sel.Sel.Name == "Timeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Client"):
				if o := nethttp.RootObj(info, sel.X); o != nil {
					s.timeoutSet[o] = true
				}
			case sel.Sel.Name == "ResponseHeaderTimeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Transport"):
				if o := nethttp.RootObj(info, sel.X); o != nil {
					s.headerBound[o] = true
				}
			}
		}
		o := nethttp.RootObj(info, lhs)
		if o == nil || rhs == nil {
			return
		}
		if s.bounded(info, rhs) {
			s.headerBound[o] = true
		}
		if v, ok := o.(*types.Var); ok && !v.IsField() && nethttp.IsPtrTo(v.Type(), "net/http", "Client") {
			if define && isDefaultClient(info, rhs) {
				s.defaultAlias[o] = true
			} else {
				notAlias[o] = true
			}
		}
	}
	for c := range in.Root().Preorder((*ast.AssignStmt)(nil), (*ast.ValueSpec)(nil), (*ast.UnaryExpr)(nil), (*ast.CallExpr)(nil)) {
		switch n := c.Node().(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var r ast.Expr
				switch {
				case len(n.Lhs) == len(n.Rhs):
					r = n.Rhs[i]
				case len(n.Rhs) == 1 && i == 0: // t, err := newTransport()
					if call, ok := ast.Unparen(n.Rhs[0]).(*ast.CallExpr); ok && s.bounded(info, call) {
						r = call
					}
				}
				define := false
				if id, ok := l.(*ast.Ident); ok && info.Defs[id] != nil {
					define = true
				}
				assign(l, r, define)
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				var r ast.Expr
				if len(n.Names) == len(n.Values) {
					r = n.Values[i]
				}
				assign(id, r, true)
			}
		case *ast.UnaryExpr: // &c: anything may be stored through it
			if o := nethttp.RootObj(info, n.X); o != nil && n.Op == token.AND {
				notAlias[o] = true
			}
		case *ast.CallExpr: // configure(c), where configure sets c.Timeout
			fn, _ := typeutil.Callee(info, n).(*types.Func)
			for i, a := range n.Args {
				if fn != nil && setters[fn][i] {
					if o := nethttp.RootObj(info, a); o != nil {
						s.timeoutSet[o] = true
					}
				}
			}
		}
	}
	for o := range notAlias {
		delete(s.defaultAlias, o)
	}
	return s
}

// scanFuncs records the package's functions that return a Transport with
// ResponseHeaderTimeout set (in s.boundedFuncs), and returns, for each
// function, the parameters (by index) whose Timeout its body sets.
func (s *scanned) scanFuncs(info *types.Info, in *inspector.Inspector) map[*types.Func]map[int]bool {
	setters := map[*types.Func]map[int]bool{}
	type function struct {
		obj  types.Object // *types.Func, or the variable holding a literal
		sig  *types.Signature
		body *ast.BlockStmt
	}
	var funcs []function
	for c := range in.Root().Preorder((*ast.FuncDecl)(nil), (*ast.ValueSpec)(nil)) {
		switch n := c.Node().(type) {
		case *ast.FuncDecl:
			if fn, _ := info.Defs[n.Name].(*types.Func); fn != nil && n.Body != nil {
				funcs = append(funcs, function{fn, fn.Signature(), n.Body})
			}
		case *ast.ValueSpec: // var DefaultTransport = func(...) (*http.Transport, error) {...}
			for i, id := range n.Names {
				if i >= len(n.Values) {
					break
				}
				if lit, ok := ast.Unparen(n.Values[i]).(*ast.FuncLit); ok {
					if sig, ok := info.TypeOf(lit).(*types.Signature); ok && info.Defs[id] != nil {
						funcs = append(funcs, function{info.Defs[id], sig, lit.Body})
					}
				}
			}
		}
	}
	for _, f := range funcs {
		fn, _ := f.obj.(*types.Func)
		params := f.sig.Params()
		bound := map[types.Object]bool{} // locals holding a bounded Transport
		var results []ast.Expr
		ast.Inspect(f.body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ReturnStmt:
				results = append(results, n.Results...)
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					var r ast.Expr
					if len(n.Lhs) == len(n.Rhs) {
						r = n.Rhs[i]
					}
					if lit := transportLit(info, r); lit != nil && set(info, fix.FieldValue(lit, "ResponseHeaderTimeout")) {
						if o := nethttp.RootObj(info, l); o != nil {
							bound[o] = true
						}
					}
					sel, ok := ast.Unparen(l).(*ast.SelectorExpr)
					if !ok || (r != nil && !set(info, r)) {
						continue
					}
					switch {
					case sel.Sel.Name == "ResponseHeaderTimeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Transport"):
						if o := nethttp.RootObj(info, sel.X); o != nil {
							bound[o] = true
						}
					case sel.Sel.Name == "Timeout" && nethttp.IsNamed(info.TypeOf(sel.X), "net/http", "Client") && fn != nil:
						for j := range params.Len() {
							if nethttp.RootObj(info, sel.X) == params.At(j) {
								if setters[fn] == nil {
									setters[fn] = map[int]bool{}
								}
								setters[fn][j] = true
							}
						}
					}
				}
			}
			return true
		})
		for _, r := range results {
			if lit := transportLit(info, r); lit != nil && set(info, fix.FieldValue(lit, "ResponseHeaderTimeout")) {
				s.boundedFuncs[f.obj] = true
			}
			if o := nethttp.RootObj(info, r); o != nil && bound[o] {
				s.boundedFuncs[f.obj] = true
			}
		}
	}
	return setters
}

// bounded reports whether a Transport value e is known to bound the wait
// for the response head: a Transport literal with ResponseHeaderTimeout, a
// call of a function of the package that returns one, or a variable or
// field given one. Any other transport, a parameter or a wrapping
// RoundTripper included, is taken to bound nothing: on the code measured
// (vet/README.md), one such transport in seventeen set it.
func (s *scanned) bounded(info *types.Info, e ast.Expr) bool {
	if e == nil {
		return false
	}
	if lit := transportLit(info, e); lit != nil {
		return set(info, fix.FieldValue(lit, "ResponseHeaderTimeout"))
	}
	if call, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		fn := typeutil.Callee(info, call)
		return fn != nil && s.boundedFuncs[fn]
	}
	o := nethttp.RootObj(info, e)
	return o != nil && s.headerBound[o]
}
