// Package httpfacts is the analyzer the hotpath vet rules share to see
// through helpers. For every function it exports facts saying which
// parameters (bodies, responses) it closes or drains, and whether it returns
// an *http.Response straight from the client with the body untouched, so
// that "defer closeBody(resp.Body)" and "resp, err := c.get(url)" are judged
// by what the helper does, not flagged blindly.
package httpfacts

import (
	"go/ast"
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
)

// BodyUse is the fact exported for a function that closes or drains some
// of its parameters: bit i of Closes (Drains) is set when parameter i, an
// io.Reader/io.Closer or an *http.Response, is closed (read to EOF).
type BodyUse struct {
	Closes, Drains uint64
}

// AFact marks BodyUse as an analysis fact.
func (*BodyUse) AFact() {}

func (f *BodyUse) String() string { return "bodyuse" }

// ResponseSource is the fact exported for a function that returns an
// *http.Response obtained from the client with its body not yet read, so
// callers own the body just as if they had called Client.Do. Param is the
// parameter (a method string or an *http.Request) that decides the request's
// method, or -1 when the function sends a known method other than HEAD.
type ResponseSource struct{ Param int }

// AFact marks ResponseSource as an analysis fact.
func (*ResponseSource) AFact() {}

func (f *ResponseSource) String() string { return "responsesource" }

// Facts answers the rules' questions about calls, using facts about
// functions in this package and its dependencies.
type Facts struct {
	pass *analysis.Pass
	use  map[*types.Func]*BodyUse
	src  map[*types.Func]int // ResponseSource facts of this package
}

// Analyzer computes the facts; rules list it in Requires and get *Facts.
var Analyzer = &analysis.Analyzer{
	Name:       "hotpathfacts",
	Doc:        "computes which functions close or drain bodies and which return fresh *http.Response values (facts for hotpath vet rules)",
	Run:        run,
	ResultType: reflect.TypeFor[*Facts](),
	FactTypes:  []analysis.Fact{new(BodyUse), new(ResponseSource)},
}

// Use returns what fn does with its parameters, and whether that is known.
func (f *Facts) Use(fn *types.Func) (BodyUse, bool) {
	if fn == nil {
		return BodyUse{}, false
	}
	if u, ok := f.use[fn]; ok {
		return *u, true
	}
	if fn.Pkg() != f.pass.Pkg {
		var u BodyUse
		if f.pass.ImportObjectFact(fn, &u) {
			return u, true
		}
	}
	return BodyUse{}, false
}

// sourceParam reports whether fn has a ResponseSource fact and, if so,
// which parameter carries the method of the request it sends (-1: a known
// method other than HEAD).
func (f *Facts) sourceParam(fn *types.Func) (int, bool) {
	if p, ok := f.src[fn]; ok {
		return p, true
	}
	if fn.Pkg() != f.pass.Pkg {
		var s ResponseSource
		if f.pass.ImportObjectFact(fn, &s) {
			return s.Param, true
		}
	}
	return 0, false
}

func run(pass *analysis.Pass) (any, error) {
	f := &Facts{pass: pass, use: map[*types.Func]*BodyUse{}, src: map[*types.Func]int{}}
	var decls []*ast.FuncDecl
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				decls = append(decls, fd)
			}
		}
	}
	// Helpers call helpers: iterate to a fixed point (bounded; facts only grow).
	for round := 0; round < 4; round++ {
		changed := false
		for _, fd := range decls {
			fn, _ := pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if fn == nil {
				continue
			}
			if u := f.bodyUse(fd.Body, fn.Signature()); u.Closes|u.Drains != 0 {
				old := f.use[fn]
				if old == nil || *old != u {
					f.use[fn] = &u
					changed = true
				}
			}
			if p, ok := f.returnsSource(fd, fn); ok {
				if old, had := f.src[fn]; !had || old != p {
					f.src[fn] = p
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	for fn, u := range f.use {
		pass.ExportObjectFact(fn, u)
	}
	for fn, p := range f.src {
		pass.ExportObjectFact(fn, &ResponseSource{Param: p})
	}
	return f, nil
}

// CallUse returns what the function call calls (a declared function or a
// function literal called in place) does with its parameters, and whether
// that is known.
func (f *Facts) CallUse(call *ast.CallExpr) (BodyUse, bool) {
	if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
		return f.LitUse(lit), true
	}
	return f.Use(nethttp.Callee(f.pass.TypesInfo, call))
}

// LitUse returns what a function literal does with its parameters, for
// "defer func(b io.ReadCloser) { ... }(resp.Body)".
func (f *Facts) LitUse(lit *ast.FuncLit) BodyUse {
	sig, ok := f.pass.TypesInfo.TypeOf(lit).(*types.Signature)
	if !ok {
		return BodyUse{}
	}
	return f.bodyUse(lit.Body, sig)
}

// bodyUse computes which parameters of a function are closed and drained.
func (f *Facts) bodyUse(body *ast.BlockStmt, sig *types.Signature) BodyUse {
	params := sig.Params()
	idx := map[*types.Var]int{}
	for i := 0; i < params.Len() && i < 64; i++ {
		p := params.At(i)
		if nethttp.IsResponse(p.Type()) || isReaderOrCloser(p.Type()) {
			idx[p] = i
		}
	}
	var u BodyUse
	if len(idx) == 0 {
		return u
	}
	info := f.pass.TypesInfo
	// param returns the parameter index e denotes: p, or p.Body for a response p.
	param := func(e ast.Expr) (int, bool) {
		e = ast.Unparen(e)
		if sel, ok := e.(*ast.SelectorExpr); ok && sel.Sel.Name == "Body" {
			e = sel.X
		}
		v := nethttp.ObjOf(info, e)
		i, ok := idx[v]
		return i, ok
	}
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Close" && len(call.Args) == 0 {
			if i, ok := param(sel.X); ok {
				u.Closes |= 1 << i
			}
		}
		if src, ok := DrainedReader(info, call); ok {
			if i, ok := param(src); ok {
				u.Drains |= 1 << i
			}
		}
		if hu, ok := f.Use(nethttp.Callee(info, call)); ok {
			for j, a := range call.Args {
				if i, ok := param(a); ok && j < 64 {
					if hu.Closes&(1<<j) != 0 {
						u.Closes |= 1 << i
					}
					if hu.Drains&(1<<j) != 0 {
						u.Drains |= 1 << i
					}
				}
			}
		}
		return true
	})
	return u
}

// DrainedReader reports whether call reads a reader to EOF (io.ReadAll,
// ioutil.ReadAll, io.Copy, io.CopyBuffer, io.CopyN as a bounded drain) and
// returns that reader.
func DrainedReader(info *types.Info, call *ast.CallExpr) (ast.Expr, bool) {
	fn := nethttp.Callee(info, call)
	switch {
	case nethttp.IsFunc(fn, "io", "ReadAll"), nethttp.IsFunc(fn, "io/ioutil", "ReadAll"):
		if len(call.Args) == 1 {
			return call.Args[0], true
		}
	case nethttp.IsFunc(fn, "io", "Copy", "CopyBuffer", "CopyN"):
		if len(call.Args) >= 2 {
			return call.Args[1], true
		}
	}
	return nil, false
}

// returnsSource reports whether every *http.Response fd returns comes
// straight from a client call, with the body never touched in fd, and which
// parameter decides the request's method (-1: a known method, not HEAD).
// Functions returning HEAD responses, or responses to requests built where
// fd cannot see, get no fact.
func (f *Facts) returnsSource(fd *ast.FuncDecl, fn *types.Func) (int, bool) {
	res := fn.Signature().Results()
	k := -1
	for i := 0; i < res.Len(); i++ {
		if nethttp.IsResponse(res.At(i).Type()) {
			k = i
		}
	}
	if k < 0 {
		return 0, false
	}
	info := f.pass.TypesInfo
	r := newResolver(f, fd)
	var o origin
	source := func(e ast.Expr) bool {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return false
		}
		c := r.call(call)
		o = join(o, c)
		return c.m != NotSource
	}
	vars := map[*types.Var]bool{} // locals returned as the response
	good, seen := true, false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			switch {
			case len(n.Results) == 1 && res.Len() > 1:
				good = good && source(n.Results[0])
				seen = true
			case len(n.Results) == res.Len():
				e := ast.Unparen(n.Results[k])
				if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
					return true
				}
				v := nethttp.ObjOf(info, e)
				if v == nil || !nethttp.IsLocal(v) {
					good = false
					return true
				}
				vars[v] = true
				seen = true
			default:
				good = false // naked return: give up
			}
		}
		return true
	})
	if !good || !seen {
		return 0, false
	}
	// Every assignment to a returned local is a source call; its body unused.
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				v := nethttp.ObjOf(info, l)
				if !vars[v] {
					continue
				}
				var rhs ast.Expr
				if len(n.Rhs) == 1 {
					rhs = n.Rhs[0]
				} else if i < len(n.Rhs) {
					rhs = n.Rhs[i]
				}
				good = good && source(rhs)
			}
		case *ast.SelectorExpr:
			if vars[nethttp.ObjOf(info, n.X)] && n.Sel.Name == "Body" {
				good = false
			}
		}
		return good
	})
	switch {
	case !good:
		return 0, false
	case o.m == WithBody:
		return -1, true
	case o.m == Unknown && o.param >= 0:
		return o.param, true
	}
	return 0, false
}

// isReaderOrCloser reports whether t is an interface with a Read or Close
// method (io.Reader, io.ReadCloser, io.Closer and friends).
func isReaderOrCloser(t types.Type) bool {
	it, ok := t.Underlying().(*types.Interface)
	if !ok {
		return false
	}
	for i := 0; i < it.NumMethods(); i++ {
		switch it.Method(i).Name() {
		case "Read", "Close":
			return true
		}
	}
	return false
}
