// Package readheadertimeout defines HP013 read-header-timeout: a server that
// waits forever for request headers (slowloris).
package readheadertimeout

import (
	"go/ast"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
	"github.com/hotpathhq/hotpath/vet/internal/serverlit"
)

// Rule is HP013 read-header-timeout.
var Rule = rule.Rule{
	ID:       "HP013",
	Name:     "read-header-timeout",
	Exercise: 13,
	Summary:  "server without ReadHeaderTimeout (or ReadTimeout)",
	Help: "With ReadHeaderTimeout and ReadTimeout both zero a server waits forever for a request's headers: " +
		"slowloris clients hold a goroutine and buffers each by sending a byte a minute. Set " +
		"ReadHeaderTimeout (a few seconds); it bounds only the headers, so streaming uploads keep working. " +
		"http.ListenAndServe, ListenAndServeTLS, Serve and ServeTLS use a Server with no timeouts at all. " +
		"A zero ReadHeaderTimeout falls back to ReadTimeout, so a server with ReadTimeout is not flagged, " +
		"nor one whose timeout is set after the literal.",
}

// Analyzer reports HP013.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	for _, s := range serverlit.Find(pass) {
		if s.Escapes || s.Set("ReadHeaderTimeout") || s.Set("ReadTimeout") {
			continue
		}
		var fixes []analysis.SuggestedFix
		if f, ok := s.TimeoutsFix(pass); ok {
			fixes = append(fixes, f)
		}
		rule.Report(pass, Rule, s.Lit, "http.Server has no ReadHeaderTimeout (nor ReadTimeout): a slow client can hold a connection open forever before sending its headers", fixes...)
	}
	in := inspector.New(pass.Files)
	for c := range in.Root().Preorder((*ast.CallExpr)(nil)) {
		call := c.Node().(*ast.CallExpr)
		fn := nethttp.Callee(pass.TypesInfo, call)
		if !nethttp.IsFunc(fn, "net/http", "ListenAndServe", "ListenAndServeTLS", "Serve", "ServeTLS") || rule.IsTestFile(pass, call.Pos()) {
			continue
		}
		var fixes []analysis.SuggestedFix
		if f, ok := rewriteCall(pass, c, fn.Name()); ok {
			fixes = append(fixes, f)
		}
		rule.Report(pass, Rule, call, "http."+fn.Name()+" serves with no timeouts at all: use an http.Server with ReadHeaderTimeout set", fixes...)
	}
	return nil
}

// rewriteCall suggests (&http.Server{Addr: a, Handler: h, ReadHeaderTimeout: ...,
// IdleTimeout: ...}).ListenAndServe(): with both timeouts, so that HP009
// does not flag the server the fix writes.
func rewriteCall(pass *analysis.Pass, c inspector.Cursor, name string) (analysis.SuggestedFix, bool) {
	call := c.Node().(*ast.CallExpr)
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	httpName, ok := sel.X.(*ast.Ident)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	var file *ast.File
	for f := range c.Enclosing((*ast.File)(nil)) {
		file = f.Node().(*ast.File)
	}
	tn, edits, ok := fix.TimeName(pass, file, call.Pos())
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	src := func(e ast.Expr) string { return fix.Source(pass.Fset, e) }
	a := call.Args
	var fields, method, args string
	switch name {
	case "ListenAndServe": // (addr, handler)
		fields, method = "Addr: "+src(a[0])+", Handler: "+src(a[1]), "ListenAndServe"
	case "ListenAndServeTLS": // (addr, cert, key, handler)
		fields, method, args = "Addr: "+src(a[0])+", Handler: "+src(a[3]), "ListenAndServeTLS", src(a[1])+", "+src(a[2])
	case "Serve": // (l, handler)
		fields, method, args = "Handler: "+src(a[1]), "Serve", src(a[0])
	case "ServeTLS": // (l, handler, cert, key)
		fields, method, args = "Handler: "+src(a[1]), "ServeTLS", src(a[0])+", "+src(a[2])+", "+src(a[3])
	}
	timeouts := ", ReadHeaderTimeout: " + strings.Replace(serverlit.FixReadHeaderTimeout, "%s", tn, 1) +
		", IdleTimeout: " + strings.Replace(serverlit.FixIdleTimeout, "%s", tn, 1)
	text := "(&" + httpName.Name + ".Server{" + fields + timeouts + "})." + method + "(" + args + ")"
	edits = append(edits, analysis.TextEdit{Pos: call.Pos(), End: call.End(), NewText: []byte(text)})
	return analysis.SuggestedFix{Message: "Serve with an http.Server that sets ReadHeaderTimeout and IdleTimeout", TextEdits: edits}, true
}
