// Package undrainedbody defines HP012 undrained-body: a client response
// body closed without being read to EOF. Bytes left unread cost the
// connection: Go 1.26's Transport closes it, Go 1.27's drains up to 256 KiB
// itself but only after Close returns, often too late for the next request.
package undrainedbody

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/httpfacts"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP012 undrained-body.
var Rule = rule.Rule{
	ID:       "HP012",
	Name:     "undrained-body",
	Exercise: 12,
	Summary:  "response body closed without being read to EOF",
	Help: "Go's http.Transport puts a connection back in the idle pool when the response body was read to EOF " +
		"before Close; a Read that returns the last bytes with io.EOF counts, so a small body that " +
		"json.Decoder's first Read takes whole is reused (lab 000-12, \"only a newline unread\"). With bytes " +
		"left unread, Close costs the connection on Go 1.26 (closed: lab 000-12 opens one per request with 4 KB " +
		"of NDJSON left, none when drained; 002-drain the same over HTTP/1.1); Go 1.27's Transport drains up " +
		"to 256 KiB itself, for at most 50 ms, but after Close has returned, so a request sent right away often " +
		"dials anew (74 connections for 200 such requests measured on Go 1.27.3, README). Drain a bounded rest " +
		"before Close: io.CopyN(io.Discard, resp.Body, 64<<10) (64 KiB, hotpath's client's bound: past it a " +
		"new connection costs less than the read); hotpath's client.New drains on Close by itself " +
		"(client.DrainBody). Not flagged: bodies read with io.ReadAll or io.Copy, HEAD requests, requests " +
		"whose method is decided outside the function (a parameter, a field: it may be a HEAD), code that " +
		"handles 204/304, and bodies handed to helpers that drain them or whose behaviour is unknown. " +
		"Fix: the drain before a Close statement, or a deferred Close wrapped with it.",
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
		var fixes []analysis.SuggestedFix
		if f, ok := drainFix(pass, fd, v, st.closes[0]); ok {
			fixes = append(fixes, f)
		}
		advice := "drain a bounded rest first: io.CopyN(io.Discard, " + v.Name() + ".Body, " + drainBound + ")"
		if importsHotpathClient(pass, fd) {
			advice += ", or send with hotpath's client.New(), which drains on Close (client.DrainBody)"
		}
		rule.Report(pass, Rule, st.closes[0], v.Name()+".Body is closed before EOF: bytes left unread cost the connection "+
			"(Go 1.26 closes it; Go 1.27 drains up to 256 KiB after Close returns, often too late for the next request); "+advice, fixes...)
	}
}

// drainBound is the most the suggested drain reads: hotpath's client's
// DefaultDrainMaxBytes. Past it a new connection costs less than the read.
const drainBound = "64<<10"

// importsHotpathClient reports whether fd's file imports hotpath's client
// package, whose New and DrainBody drain bodies on Close.
func importsHotpathClient(pass *analysis.Pass, fd *ast.FuncDecl) bool {
	for _, f := range pass.Files {
		if f.FileStart <= fd.Pos() && fd.Pos() <= f.FileEnd {
			return fix.ImportName(f, "github.com/hotpathhq/hotpath/client") != ""
		}
	}
	return false
}

// drainFix drains a bounded rest before the Close at close, when close is
// v.Body.Close() as a statement (the drain goes on the line before) or
// deferred (defer func() { drain; close }(), offered only when v is not
// assigned again after the defer: the closure reads v when it runs).
func drainFix(pass *analysis.Pass, fd *ast.FuncDecl, v *types.Var, closeNode ast.Node) (analysis.SuggestedFix, bool) {
	call, ok := closeNode.(*ast.CallExpr)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr) // X.Body.Close
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	body, ok := ast.Unparen(sel.X).(*ast.SelectorExpr) // X.Body
	if !ok || nethttp.ObjOf(pass.TypesInfo, body.X) != v {
		return analysis.SuggestedFix{}, false
	}
	var stmt ast.Stmt
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ExprStmt:
			if n.X == call {
				stmt = n
			}
		case *ast.DeferStmt:
			if n.Call == call {
				stmt = n
			}
		}
		return stmt == nil
	})
	if stmt == nil {
		return analysis.SuggestedFix{}, false
	}
	var file *ast.File
	for _, f := range pass.Files {
		if f.FileStart <= fd.Pos() && fd.Pos() <= f.FileEnd {
			file = f
		}
	}
	if file == nil {
		return analysis.SuggestedFix{}, false
	}
	ioName, edits, ok := fix.PackageName(pass, file, stmt.Pos(), "io")
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	bodySrc := fix.Source(pass.Fset, body)
	drain := ioName + ".CopyN(" + ioName + ".Discard, " + bodySrc + ", " + drainBound + ")"
	switch stmt := stmt.(type) {
	case *ast.ExprStmt:
		indent := strings.Repeat("\t", max(pass.Fset.Position(stmt.Pos()).Column-1, 0))
		edits = append(edits, analysis.TextEdit{Pos: stmt.Pos(), End: stmt.Pos(), NewText: []byte(drain + "\n" + indent)})
	case *ast.DeferStmt:
		if assignedAfter(pass.TypesInfo, fd.Body, v, stmt.End()) {
			return analysis.SuggestedFix{}, false
		}
		text := "defer func() {\n" + drain + "\n" + fix.Source(pass.Fset, call) + "\n}()"
		edits = append(edits, analysis.TextEdit{Pos: stmt.Pos(), End: stmt.End(), NewText: []byte(text)})
	}
	return analysis.SuggestedFix{Message: "Drain up to 64 KiB of the body before closing it", TextEdits: edits}, true
}

// assignedAfter reports whether v is assigned anywhere in body after pos.
func assignedAfter(info *types.Info, body *ast.BlockStmt, v *types.Var, pos token.Pos) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || as.Pos() < pos {
			return !found
		}
		for _, l := range as.Lhs {
			if nethttp.ObjOf(info, l) == v {
				found = true
			}
		}
		return !found
	})
	return found
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
