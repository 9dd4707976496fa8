// Package undrainedbody defines HP012 undrained-body: a client response
// body closed without being read to EOF, which makes the Transport throw the
// connection away instead of returning it to the keep-alive pool.
package undrainedbody

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/httpfacts"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP012 undrained-body.
var Rule = rule.Rule{
	ID:       "HP012",
	Name:     "undrained-body",
	Exercise: 12,
	Summary:  "response body closed without being drained",
	Help: "http.Transport returns a connection to the idle pool only when the response body was read to EOF " +
		"before Close. Closing after a partial read (json.Decoder.Decode, a status check) discards the " +
		"connection, and the next request pays a new TCP (and TLS) handshake. Drain before closing: " +
		"io.Copy(io.Discard, resp.Body), bounded with io.CopyN if bodies can be large. Not flagged: bodies " +
		"read with io.ReadAll or io.Copy, HEAD requests, requests whose method is decided outside the " +
		"function (a parameter, a field: it may be a HEAD), code that handles 204/304, and bodies handed " +
		"to helpers that drain them or whose behaviour is unknown.",
}

// Analyzer reports HP012.
var Analyzer = rule.New(Rule, run, httpfacts.Analyzer)

func run(pass *analysis.Pass) error {
	facts := pass.ResultOf[httpfacts.Analyzer].(*httpfacts.Facts)
	for _, f := range pass.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				checkFunc(pass, facts, fd)
			}
		}
	}
	return nil
}

// state is what one function does with one response variable.
type state struct {
	closes             []ast.Node // where the body is closed
	drained, escapes   bool
	head, noBodyStatus bool
	unknownMethod      bool // a request built elsewhere: it may be a HEAD
}

func checkFunc(pass *analysis.Pass, facts *httpfacts.Facts, fd *ast.FuncDecl) {
	info, body := pass.TypesInfo, fd.Body
	resps := map[*types.Var]*state{}
	var order []*types.Var
	// 1. Response variables assigned from client calls.
	ast.Inspect(body, func(n ast.Node) bool {
		var lhs []ast.Expr
		var rhs []ast.Expr
		switch n := n.(type) {
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
			v := nethttp.ObjOf(info, l)
			if v == nil || !nethttp.IsLocal(v) || !nethttp.IsResponse(v.Type()) {
				continue
			}
			var r ast.Expr
			switch {
			case len(rhs) == 1:
				r = rhs[0]
			case i < len(rhs):
				r = rhs[i]
			}
			st := resps[v]
			if st == nil {
				st = &state{}
				resps[v] = st
				order = append(order, v)
			}
			if id, ok := ast.Unparen(r).(*ast.Ident); ok && id.Name == "nil" {
				continue
			}
			m := httpfacts.NotSource
			if call, ok := ast.Unparen(r).(*ast.CallExpr); ok {
				m = facts.Source(call, fd)
			}
			switch m {
			case httpfacts.NotSource:
				st.escapes = true // from somewhere we do not model
			case httpfacts.Head:
				st.head = true
			case httpfacts.Unknown:
				st.unknownMethod = true
			}
		}
		return true
	})
	if len(resps) == 0 {
		return
	}
	if mentionsHEAD(info, body) {
		return
	}
	// 2. Every use of each response variable.
	ast.PreorderStack(body, nil, func(n ast.Node, stack []ast.Node) bool {
		stack = append(stack, n) // use wants the identifier on top
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		v, _ := info.Uses[id].(*types.Var)
		st := resps[v]
		if st == nil {
			return true
		}
		use(pass, facts, st, stack)
		return true
	})
	for _, v := range order {
		st := resps[v]
		if len(st.closes) == 0 || st.drained || st.escapes || st.head || st.noBodyStatus || st.unknownMethod {
			continue
		}
		rule.Report(pass, Rule, st.closes[0], v.Name()+".Body is closed without being drained, so the connection is not reused: "+
			"drain it first with io.Copy(io.Discard, "+v.Name()+".Body)")
	}
}

// use classifies one use of a response variable; stack ends at its identifier.
func use(pass *analysis.Pass, facts *httpfacts.Facts, st *state, stack []ast.Node) {
	info := pass.TypesInfo
	at := len(stack) - 1
	parent := func(k int) ast.Node {
		if at-k < 0 {
			return nil
		}
		return stack[at-k]
	}
	p := parent(1)
	switch p := p.(type) {
	case *ast.AssignStmt:
		for _, l := range p.Lhs {
			if l == stack[at] {
				return // a definition, seen in step 1
			}
		}
		st.escapes = true
		return
	case *ast.ValueSpec:
		for _, n := range p.Names {
			if n == stack[at] {
				return
			}
		}
		st.escapes = true
		return
	case *ast.BinaryExpr:
		if p.Op == token.EQL || p.Op == token.NEQ {
			return // resp == nil
		}
	case *ast.CallExpr:
		argUse(pass, facts, st, p, stack[at].(ast.Expr), true)
		return
	case *ast.SelectorExpr:
		switch p.Sel.Name {
		case "Body":
			bodyUse(pass, facts, st, stack[:at])
		case "StatusCode":
			if b, ok := parent(2).(*ast.BinaryExpr); ok {
				other := b.Y
				if other == p {
					other = b.X
				}
				if c, ok := nethttp.IntConst(info, other); ok && (c == 204 || c == 304) {
					st.noBodyStatus = true
				}
			}
			if sw, ok := parent(2).(*ast.SwitchStmt); ok && sw.Tag == p {
				ast.Inspect(sw.Body, func(n ast.Node) bool {
					if e, ok := n.(ast.Expr); ok {
						if c, ok := nethttp.IntConst(info, e); ok && (c == 204 || c == 304) {
							st.noBodyStatus = true
						}
					}
					return true
				})
			}
		case "Write":
			st.drained = true // resp.Write(w) copies the whole body
		}
		return
	}
	if _, ok := p.(*ast.SelectorExpr); !ok {
		st.escapes = true // returned, stored, sent: someone else owns it
	}
}

// bodyUse classifies a use of resp.Body; stack ends at the selector.
func bodyUse(pass *analysis.Pass, facts *httpfacts.Facts, st *state, stack []ast.Node) {
	sel := stack[len(stack)-1].(*ast.SelectorExpr)
	p := stack[len(stack)-2]
	switch p := p.(type) {
	case *ast.SelectorExpr: // resp.Body.Close / resp.Body.Read
		switch p.Sel.Name {
		case "Close":
			if call, ok := stack[len(stack)-3].(*ast.CallExpr); ok && call.Fun == p {
				st.closes = append(st.closes, call)
				return
			}
		case "Read":
			return // a partial read
		}
		st.escapes = true
	case *ast.CallExpr:
		argUse(pass, facts, st, p, sel, false)
	case *ast.BinaryExpr:
		// resp.Body != nil
	default:
		st.escapes = true // assigned, returned, replaced: not ours to judge
	}
}

// argUse classifies passing the response (isResp) or its body to call.
func argUse(pass *analysis.Pass, facts *httpfacts.Facts, st *state, call *ast.CallExpr, arg ast.Expr, isResp bool) {
	info := pass.TypesInfo
	if call.Fun == arg {
		st.escapes = true
		return
	}
	if !isResp {
		if _, ok := httpfacts.DrainedReader(info, call); ok {
			st.drained = true
			return
		}
		fn := nethttp.Callee(info, call)
		if nethttp.IsFunc(fn, "encoding/json", "NewDecoder") || nethttp.IsFunc(fn, "encoding/xml", "NewDecoder") {
			return // decodes one value, leaves the rest unread
		}
	}
	u, known := facts.CallUse(call)
	if !known {
		st.escapes = true // an unknown helper owns it now
		return
	}
	for i, a := range call.Args {
		if a != arg || i >= 64 {
			continue
		}
		switch {
		case u.Drains&(1<<i) != 0:
			st.drained = true
		case u.Closes&(1<<i) != 0:
			st.closes = append(st.closes, call)
		default:
			st.escapes = true
		}
	}
}

// mentionsHEAD reports whether body builds a HEAD request ("HEAD" or
// http.MethodHead passed to http.NewRequest*): its response has no body.
func mentionsHEAD(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && !found {
			if s, ok := nethttp.StringConst(info, e); ok && s == "HEAD" {
				found = true
			}
		}
		return !found
	})
	return found
}
