// Package headerliteral defines HP007 header-literal: an http.Header
// composite literal assigned over a request's headers.
package headerliteral

import (
	"go/ast"
	"go/types"
	"net/textproto"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP007 header-literal.
var Rule = rule.Rule{
	ID:       "HP007",
	Name:     "header-literal",
	Exercise: 7,
	Summary:  "http.Header literal assigned to req.Header",
	Help: "http.NewRequest already gives the request an empty Header map. Replacing it with an http.Header " +
		"literal allocates a second map and a slice per key, and the literal's keys are used as written: " +
		"a non-canonical key such as \"x-trace-id\" is invisible to Header.Get and sent in odd case. Call " +
		"req.Header.Set (or Add for repeated values) instead; the suggested fix does this. Flagged only " +
		"for requests made with http.NewRequest(WithContext) in the same function, outside tests.",
}

// Analyzer reports HP007.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	in := inspector.New(pass.Files)
	for c := range in.Root().Preorder((*ast.AssignStmt)(nil)) {
		as := c.Node().(*ast.AssignStmt)
		if len(as.Lhs) != 1 || len(as.Rhs) != 1 || rule.IsTestFile(pass, as.Pos()) {
			continue
		}
		sel, ok := ast.Unparen(as.Lhs[0]).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Header" || !nethttp.IsRequest(info.TypeOf(sel.X)) {
			continue
		}
		lit, ok := ast.Unparen(as.Rhs[0]).(*ast.CompositeLit)
		if !ok || !nethttp.IsHeader(info.TypeOf(lit)) || len(lit.Elts) == 0 {
			continue
		}
		req := nethttp.ObjOf(info, sel.X)
		if req == nil || !fromNewRequest(info, c, req) {
			continue
		}
		var bad []string
		for _, e := range lit.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok {
				if k, ok := nethttp.StringConst(info, kv.Key); ok && textproto.CanonicalMIMEHeaderKey(k) != k {
					bad = append(bad, strconv.Quote(k))
				}
			}
		}
		msg := "an http.Header literal replaces the request's header map: use " + req.Name() + ".Header.Set, which reuses the map"
		if len(bad) > 0 {
			msg += " and canonicalizes keys (non-canonical here: " + strings.Join(bad, ", ") + ")"
		}
		var fixes []analysis.SuggestedFix
		if f, ok := setCalls(pass, as, sel, lit); ok {
			fixes = append(fixes, f)
		}
		rule.Report(pass, Rule, lit, msg, fixes...)
	}
	return nil
}

// fromNewRequest reports whether req was assigned from http.NewRequest or
// NewRequestWithContext in the function enclosing c, so its Header is an
// empty, non-nil map that Set can fill.
func fromNewRequest(info *types.Info, c inspector.Cursor, req *types.Var) bool {
	body := nethttp.EnclosingBody(c)
	if body == nil {
		return false
	}
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) != 1 || len(as.Lhs) == 0 {
			return !found
		}
		if nethttp.ObjOf(info, as.Lhs[0]) != req {
			return true
		}
		_, isNew := nethttp.CallTo(info, as.Rhs[0], "net/http", "NewRequest", "NewRequestWithContext")
		found = isNew
		return !found
	})
	return found
}

// setCalls rewrites req.Header = http.Header{"K": {"v1", "v2"}} into
// req.Header.Set("K", "v1") and req.Header.Add("K", "v2"). Every value must
// be a slice literal with at least one element.
func setCalls(pass *analysis.Pass, as *ast.AssignStmt, sel *ast.SelectorExpr, lit *ast.CompositeLit) (analysis.SuggestedFix, bool) {
	src := func(n ast.Node) string { return fix.Source(pass.Fset, n) }
	h := src(sel)
	indent := strings.Repeat("\t", pass.Fset.Position(as.Pos()).Column-1)
	var lines []string
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return analysis.SuggestedFix{}, false
		}
		vals, ok := kv.Value.(*ast.CompositeLit)
		if !ok || len(vals.Elts) == 0 {
			return analysis.SuggestedFix{}, false
		}
		for i, v := range vals.Elts {
			m := "Add"
			if i == 0 {
				m = "Set"
			}
			lines = append(lines, h+"."+m+"("+src(kv.Key)+", "+src(v)+")")
		}
	}
	return analysis.SuggestedFix{
		Message:   "Set the headers on the existing map",
		TextEdits: []analysis.TextEdit{{Pos: as.Pos(), End: as.End(), NewText: []byte(strings.Join(lines, "\n"+indent))}},
	}, true
}
