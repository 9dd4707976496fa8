// Package readallproxy defines HP002 readall-proxy: an upstream response
// body read whole with io.ReadAll only to be written to a ResponseWriter.
package readallproxy

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// Rule is HP002 readall-proxy.
var Rule = rule.Rule{
	ID:       "HP002",
	Name:     "readall-proxy",
	Exercise: 2,
	Summary:  "io.ReadAll of a response body that is then written to a ResponseWriter",
	Help: "Reading an upstream body with io.ReadAll before writing it downstream holds the whole payload in " +
		"memory (growing the slice several times) and delays the first byte until the last one arrived. " +
		"Stream it: io.Copy(w, resp.Body). Flagged only when the bytes are used for nothing but the write " +
		"(and len): if you sign, rewrite or cache them, reading them whole is the point.",
}

// Analyzer reports HP002.
var Analyzer = rule.New(Rule, run)

func run(pass *analysis.Pass) error {
	info := pass.TypesInfo
	for c, call := range nethttp.Calls(pass.Files) {
		fn := nethttp.Callee(info, call)
		if !(nethttp.IsFunc(fn, "io", "ReadAll") || nethttp.IsFunc(fn, "io/ioutil", "ReadAll")) || len(call.Args) != 1 {
			continue
		}
		if _, ok := nethttp.IsBodyOf(info, call.Args[0], nethttp.IsResponse); !ok {
			continue
		}
		v := nethttp.DefinedBy(info, c.Parent().Node(), call)
		if v == nil {
			continue
		}
		body := nethttp.EnclosingBody(c)
		if body == nil || !onlyWritten(info, nethttp.UsesOf(info, body, v)) {
			continue
		}
		rule.Report(pass, Rule, call, "the response body is read whole only to be written to the ResponseWriter: stream it with io.Copy(w, "+nethttp.SourceOf(call.Args[0])+")")
	}
	return nil
}

// onlyWritten reports whether the uses are writes to a ResponseWriter (at
// least one) and len() calls.
func onlyWritten(info *types.Info, uses []nethttp.Use) bool {
	writes := 0
	for _, u := range uses {
		call, ok := u.Parent.(*ast.CallExpr)
		if !ok {
			return false
		}
		switch {
		case nethttp.IsWriteTo(info, call, u.Ident):
			writes++
		case isLen(info, call):
		default:
			return false
		}
	}
	return writes > 0
}

func isLen(info *types.Info, call *ast.CallExpr) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok {
		return false
	}
	_, builtin := info.Uses[id].(*types.Builtin)
	return builtin && id.Name == "len"
}
