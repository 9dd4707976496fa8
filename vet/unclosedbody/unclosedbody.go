// Package unclosedbody defines HP015 unclosed-body: a client response whose
// body is never closed, which leaks the connection (and its goroutines)
// instead of returning it to the keep-alive pool.
//
// The rule is off by default: bodyclose covers it and is widely installed.
// Ask for it by name (hotpath vet --rules HP015), with hotpath vet --all, or
// with -unclosedbody under hotpath-vet.
package unclosedbody

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/httpfacts"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP015 unclosed-body.
var Rule = rule.Rule{
	ID:           "HP015",
	Name:         "unclosed-body",
	Exercise:     12,
	OffByDefault: true,
	Summary:      "response body never closed",
	Help: "A client response body that is never closed keeps its connection busy: the Transport cannot reuse it, " +
		"and its read and write goroutines live until the server closes the connection. Every request then " +
		"dials anew, and a busy client leaks file descriptors. Close it on every path once the error is nil: " +
		"defer resp.Body.Close(), after draining it if the connection is to be reused (HP012). Not flagged: " +
		"responses returned, stored in fields, globals or collections, passed to code that closes them or " +
		"whose behaviour is unknown, bodies handed to unknown code, and bodies closed anywhere in the " +
		"function (in a closure or a helper too). Off by default: bodyclose covers it; enable it with " +
		"--rules HP015 or --all.",
}

// Analyzer reports HP015.
var Analyzer = rule.New(Rule, run, httpfacts.Analyzer)

func run(pass *analysis.Pass) error {
	facts := pass.ResultOf[httpfacts.Analyzer].(*httpfacts.Facts)
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && !nethttp.IsTestFunc(fd) {
				checkFunc(pass, facts, fd)
			}
		}
	}
	return nil
}

// state is what one function does with one response variable.
type state struct {
	def             ast.Node // the first client call assigned to it
	closed, escapes bool
}

func checkFunc(pass *analysis.Pass, facts *httpfacts.Facts, fd *ast.FuncDecl) {
	info, body := pass.TypesInfo, fd.Body
	sig := signatureVars(info, fd)
	resps := map[*types.Var]*state{}
	var order []*types.Var
	isSource := func(e ast.Expr) (*ast.CallExpr, bool) {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		return call, ok && facts.Source(call, fd) != httpfacts.NotSource
	}
	// dropped reports a client call whose response is thrown away. Direct
	// RoundTrip calls are left alone: code that low-level often talks to a
	// fake connection whose reply has no body (net/http/httputil's dump).
	dropped := func(e ast.Expr, how string) {
		call, ok := isSource(e)
		if !ok || nethttp.IsMethod(nethttp.Callee(info, call), "net/http", "Transport", "RoundTrip") ||
			nethttp.IsMethod(nethttp.Callee(info, call), "net/http", "RoundTripper", "RoundTrip") {
			return
		}
		rule.Report(pass, Rule, call, "the response is "+how+", so its body is never closed and the connection leaks: "+
			"keep it and defer resp.Body.Close()")
	}
	// 1. Response variables assigned from client calls, and responses dropped.
	ast.Inspect(body, func(n ast.Node) bool {
		var lhs, rhs []ast.Expr
		switch n := n.(type) {
		case *ast.ExprStmt:
			dropped(n.X, "discarded")
			return true
		case *ast.AssignStmt:
			lhs, rhs = n.Lhs, n.Rhs
		case *ast.ValueSpec:
			for _, id := range n.Names {
				lhs = append(lhs, id)
			}
			rhs = n.Values
		default:
			return true
		}
		for i, l := range lhs {
			var r ast.Expr
			switch {
			case len(rhs) == 1:
				r = rhs[0]
			case len(rhs) == len(lhs):
				r = rhs[i]
			}
			if id, ok := l.(*ast.Ident); ok && id.Name == "_" && (len(rhs) == len(lhs) || i == 0) {
				if r != nil && nethttp.IsResponse(info.TypeOf(r)) || len(rhs) == 1 && len(lhs) == 2 && i == 0 {
					dropped(r, "assigned to _")
				}
				continue
			}
			v := nethttp.ObjOf(info, l)
			if v == nil || !nethttp.IsLocal(v) || !nethttp.IsResponse(v.Type()) {
				continue
			}
			st := resps[v]
			if st == nil {
				st = &state{}
				resps[v] = st
				order = append(order, v)
			}
			if sig[v] {
				st.escapes = true // a parameter or result: the caller's
			}
			if id, ok := ast.Unparen(r).(*ast.Ident); ok && id.Name == "nil" {
				continue
			}
			call, ok := isSource(r)
			switch {
			case !ok || (len(rhs) != 1 && len(rhs) != len(lhs)) || (len(rhs) == 1 && len(lhs) > 1 && i != 0):
				st.escapes = true // from somewhere we do not model
			case st.def == nil:
				st.def = call
			}
		}
		return true
	})
	if len(resps) == 0 {
		return
	}
	// 2. Every use of each response variable.
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v, _ := info.Uses[id].(*types.Var)
		st := resps[v]
		if st == nil || st.escapes {
			return true
		}
		use(info, facts, st, append(stack, n))
		return true
	})
	for _, v := range order {
		st := resps[v]
		if st.def == nil || st.closed || st.escapes {
			continue
		}
		rule.Report(pass, Rule, st.def, v.Name()+".Body is never closed, so the connection leaks and is not reused: "+
			"defer "+v.Name()+".Body.Close() once err is nil")
	}
}

// signatureVars returns the parameters and results of fd and of every
// function literal in it: responses there belong to a caller.
func signatureVars(info *types.Info, fd *ast.FuncDecl) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	add := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				if v, ok := info.Defs[n].(*types.Var); ok {
					out[v] = true
				}
			}
		}
	}
	add(fd.Recv)
	ast.Inspect(fd, func(n ast.Node) bool {
		if ft, ok := n.(*ast.FuncType); ok {
			add(ft.Params)
			add(ft.Results)
		}
		return true
	})
	return out
}

// use classifies one use of a response variable; stack ends at its identifier.
func use(info *types.Info, facts *httpfacts.Facts, st *state, stack []ast.Node) {
	at := len(stack) - 1
	id := stack[at].(*ast.Ident)
	switch p := stack[at-1].(type) {
	case *ast.AssignStmt:
		for _, l := range p.Lhs {
			if l == id {
				return // a definition, seen in step 1
			}
		}
	case *ast.ValueSpec:
		for _, n := range p.Names {
			if n == id {
				return
			}
		}
	case *ast.BinaryExpr:
		if p.Op == token.EQL || p.Op == token.NEQ {
			return // resp == nil
		}
	case *ast.CallExpr:
		argUse(info, facts, st, p, id)
		return
	case *ast.SelectorExpr:
		switch p.Sel.Name {
		case "Body":
			bodyUse(info, facts, st, stack[:at])
		case "Write":
			st.closed = true // resp.Write(w) copies and closes the body
		}
		return // resp.StatusCode, resp.Header, resp.Cookies()
	}
	st.escapes = true // returned, stored, sent, wrapped: someone else owns it
}

// bodyUse classifies a use of resp.Body; stack ends at the selector.
func bodyUse(info *types.Info, facts *httpfacts.Facts, st *state, stack []ast.Node) {
	sel := stack[len(stack)-1].(*ast.SelectorExpr)
	switch p := stack[len(stack)-2].(type) {
	case *ast.SelectorExpr: // resp.Body.Close() / resp.Body.Read(p)
		call, called := stack[len(stack)-3].(*ast.CallExpr)
		called = called && call.Fun == p
		switch {
		case p.Sel.Name == "Close" && called:
			st.closed = true
			return
		case p.Sel.Name == "Read" && called:
			return
		}
	case *ast.CallExpr:
		argUse(info, facts, st, p, sel)
		return
	case *ast.BinaryExpr:
		if p.Op == token.EQL || p.Op == token.NEQ {
			return // resp.Body != nil
		}
	}
	st.escapes = true // assigned, returned, replaced, a method value: not ours to judge
}

// argUse classifies passing the response or its body (arg) to call: known
// readers that never close, helpers whose facts say they close it, and
// everything else, which may close it.
func argUse(info *types.Info, facts *httpfacts.Facts, st *state, call *ast.CallExpr, arg ast.Expr) {
	if call.Fun == arg {
		st.escapes = true
		return
	}
	fn := nethttp.Callee(info, call)
	if src, ok := httpfacts.DrainedReader(info, call); (ok && ast.Unparen(src) == arg) || nonClosing(fn) {
		return // reads it, never closes it
	}
	u, known := facts.CallUse(call)
	if !known {
		st.escapes = true // an unknown helper may close it
		return
	}
	for i, a := range call.Args {
		if a != arg || i >= 64 {
			continue
		}
		if u.Closes&(1<<i) != 0 {
			st.closed = true
		} else if u.Drains&(1<<i) == 0 {
			st.escapes = true // known helper, but it neither closes nor drains this argument
		}
	}
}

// nonClosing reports whether fn is a standard-library function known to
// read a reader without ever closing it or keeping it past the call.
func nonClosing(fn *types.Func) bool {
	return nethttp.IsFunc(fn, "encoding/json", "NewDecoder") ||
		nethttp.IsFunc(fn, "encoding/xml", "NewDecoder") ||
		nethttp.IsFunc(fn, "io", "LimitReader")
}
