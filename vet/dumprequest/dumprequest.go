// Package dumprequest defines HP011 dump-request: httputil.DumpRequest or
// DumpRequestOut run unconditionally for every request.
package dumprequest

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP011 dump-request.
var Rule = rule.Rule{
	ID:       "HP011",
	Name:     "dump-request",
	Exercise: 11,
	Summary:  "httputil.DumpRequest on every request",
	Help: "httputil.DumpRequest(r, true) reads the whole body into memory, swaps in a copy, and formats the " +
		"request through a growing buffer: tens of microseconds and kilobytes per request, more with large " +
		"bodies. Log the fields you need (method, path, status, size, duration), and keep dumps behind a " +
		"debug flag or sampling. Flagged: DumpRequest and DumpRequestOut in handlers and middleware (a " +
		"function taking an http.ResponseWriter or a framework context), outside any if or switch. Helpers " +
		"that only take the request and logging RoundTrippers are not flagged: whoever calls or installs " +
		"them decides.",
}

// Analyzer reports HP011.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	for c, call := range nethttp.Calls(pass.Files) {
		fn := nethttp.Callee(info, call)
		if !nethttp.IsFunc(fn, "net/http/httputil", "DumpRequest", "DumpRequestOut") {
			continue
		}
		if conditional(c) || !perRequest(info, c) {
			continue
		}
		rule.Report(pass, Rule, call, "httputil."+fn.Name()+" runs on every request: log selected fields, and keep full dumps behind a debug flag")
	}
	return nil
}

// conditional reports whether the call sits in a branch of an if, switch or
// select within its function (a debug flag, a log level, sampling).
func conditional(c inspector.Cursor) bool {
	for p := c.Parent(); ; p = p.Parent() {
		switch p.Node().(type) {
		case nil, *ast.FuncDecl, *ast.FuncLit:
			return false
		case *ast.IfStmt, *ast.CaseClause, *ast.CommClause:
			return true
		}
	}
}

// perRequest reports whether the innermost function is middleware or a
// handler (it takes an http.ResponseWriter, or a framework context).
// Helpers that merely take a request are left alone: their callers usually
// decide (minio-go's dumpHTTP runs only when tracing is on). So are
// RoundTrip methods: a logging transport is installed only when debugging
// (go-containerregistry's NewLogger, behind logs.Enabled), a choice made
// where the client is built.
func perRequest(info *types.Info, c inspector.Cursor) bool {
	for f := range c.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		sig := nethttp.FuncSig(info, f.Node())
		if sig == nil {
			return false
		}
		for i := 0; i < sig.Params().Len(); i++ {
			t := sig.Params().At(i).Type()
			if nethttp.IsNamed(t, "net/http", "ResponseWriter") || nethttp.IsFrameworkContext(t) {
				return true
			}
		}
		return false
	}
	return false
}
