// Package stringrouting defines HP006 string-routing: a handler that
// dispatches by strings.HasPrefix/Contains on r.URL.Path in a module that
// could use Go 1.22 ServeMux patterns.
package stringrouting

import (
	"go/ast"
	"go/types"
	"go/version"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP006 string-routing.
var Rule = rule.Rule{
	ID:       "HP006",
	Name:     "string-routing",
	Exercise: 6,
	Summary:  "routing by strings.HasPrefix/Contains on r.URL.Path",
	Help: "A chain of strings.HasPrefix/Contains checks on r.URL.Path is evaluated in order on every request " +
		"(O(routes)), ignores the method, and matches more than intended (Contains(\"/health\") also " +
		"matches /api/health-report). Since Go 1.22 http.ServeMux matches method and path patterns with " +
		"wildcards: mux.HandleFunc(\"GET /api/v1/users/{id}\", h). Flagged only in modules whose go " +
		"version is 1.22 or later, and only for two or more branches that each dispatch the request.",
}

// Analyzer reports HP006.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	for _, f := range pass.Files {
		v := pass.TypesInfo.FileVersions[f]
		if v == "" {
			v = pass.Pkg.GoVersion()
		}
		if v == "" || version.Compare(v, "go1.22") < 0 {
			continue // patterns unavailable, or version unknown
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.FuncDecl, *ast.FuncLit:
				if nethttp.IsHandlerSig(nethttp.FuncSig(pass.TypesInfo, n)) && nethttp.FuncBody(n) != nil {
					check(pass, nethttp.FuncBody(n))
				}
			}
			return true
		})
	}
	return nil
}

// check reports a dispatch chain in one handler body.
func check(pass *analysis.Pass, body *ast.BlockStmt) {
	var first *ast.CallExpr
	branches := 0
	visit := func(cond ast.Expr, branch []ast.Stmt) {
		call := pathTest(pass.TypesInfo, cond)
		if call == nil || !dispatches(pass.TypesInfo, branch) {
			return
		}
		if first == nil {
			first = call
		}
		branches++
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // its own handler, checked separately
		case *ast.IfStmt:
			visit(n.Cond, n.Body.List)
		case *ast.CaseClause:
			for _, e := range n.List {
				visit(e, n.Body)
			}
		}
		return true
	})
	if branches >= 2 {
		rule.Report(pass, Rule, first, "requests are routed by string tests on r.URL.Path: register Go 1.22 ServeMux patterns (\"GET /path/{id}\") instead")
	}
}

// pathTest returns the strings.HasPrefix/HasSuffix/Contains call on
// r.URL.Path with a constant argument found in cond (through && and ||).
func pathTest(info *types.Info, cond ast.Expr) *ast.CallExpr {
	switch e := ast.Unparen(cond).(type) {
	case *ast.BinaryExpr:
		if c := pathTest(info, e.X); c != nil {
			return c
		}
		return pathTest(info, e.Y)
	case *ast.CallExpr:
		if !nethttp.IsFunc(nethttp.Callee(info, e), "strings", "HasPrefix", "HasSuffix", "Contains") || len(e.Args) != 2 {
			return nil
		}
		if _, ok := nethttp.StringConst(info, e.Args[1]); !ok {
			return nil
		}
		if !isURLPath(info, e.Args[0]) {
			return nil
		}
		return e
	}
	return nil
}

// dispatches reports whether a branch hands the request on: a call that
// takes both a ResponseWriter and the *http.Request (h(w, r),
// h.ServeHTTP(w, r), http.NotFound(w, r)), or a ResponseWriter and the rest
// of the path after the matched prefix (serveUser(w,
// strings.TrimPrefix(r.URL.Path, "/users/"))).
func dispatches(info *types.Info, stmts []ast.Stmt) bool {
	found := false
	for _, s := range stmts {
		ast.Inspect(s, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || found {
				return !found
			}
			var w, r bool
			for _, a := range call.Args {
				t := info.TypeOf(a)
				w = w || nethttp.IsNamed(t, "net/http", "ResponseWriter")
				r = r || nethttp.IsRequest(t) || trimmedPath(info, a)
			}
			found = w && r
			return !found
		})
	}
	return found
}

// trimmedPath reports whether e is strings.TrimPrefix/TrimSuffix of
// r.URL.Path by a constant: the path parameter a router extracts.
func trimmedPath(info *types.Info, e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || !nethttp.IsFunc(nethttp.Callee(info, call), "strings", "TrimPrefix", "TrimSuffix") || len(call.Args) != 2 {
		return false
	}
	_, ok = nethttp.StringConst(info, call.Args[1])
	return ok && isURLPath(info, call.Args[0])
}

// isURLPath reports whether e is r.URL.Path with r an *http.Request.
func isURLPath(info *types.Info, e ast.Expr) bool {
	sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Path" {
		return false
	}
	u, ok := ast.Unparen(sel.X).(*ast.SelectorExpr)
	return ok && u.Sel.Name == "URL" && nethttp.IsRequest(info.TypeOf(u.X))
}
