// The suggested fixes: Timeout in the literal.

package clienttimeout

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
	"github.com/hotpathhq/hotpath/vet/internal/nethttp"
)

// literalFix sets Timeout in the literal: replaces a zero, or adds the
// field (and imports time if needed).
func literalFix(pass *analysis.Pass, file *ast.File, lit *ast.CompositeLit) (analysis.SuggestedFix, bool) {
	if file == nil {
		return analysis.SuggestedFix{}, false
	}
	for _, e := range lit.Elts {
		if _, keyed := e.(*ast.KeyValueExpr); !keyed {
			return analysis.SuggestedFix{}, false // positional fields: leave it to a person
		}
	}
	tn, edits, ok := fix.TimeName(pass, file, lit.Lbrace)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	value := strings.Replace(fixTimeout, "%s", tn, 1)
	if kv := fix.Field(lit, "Timeout"); kv != nil {
		edits = append(edits, analysis.TextEdit{Pos: kv.Value.Pos(), End: kv.Value.End(), NewText: []byte(value)})
	} else {
		edits = append(edits, fix.AddFields(pass.Fset, lit, []string{"Timeout: " + value}))
	}
	return analysis.SuggestedFix{Message: "Set the client's Timeout to 30 s", TextEdits: edits}, true
}

// isNewClient reports whether call is new(http.Client).
func isNewClient(info *types.Info, call *ast.CallExpr) bool {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) != 1 {
		return false
	}
	if _, builtin := info.Uses[id].(*types.Builtin); !builtin || id.Name != "new" {
		return false
	}
	t := info.TypeOf(call.Args[0])
	return nethttp.IsNamed(t, "net/http", "Client") && !nethttp.IsPtrTo(t, "net/http", "Client")
}

// newFix rewrites new(http.Client) as &http.Client{Timeout: 30 * time.Second}.
func newFix(pass *analysis.Pass, file *ast.File, call *ast.CallExpr) (analysis.SuggestedFix, bool) {
	if file == nil {
		return analysis.SuggestedFix{}, false
	}
	tn, edits, ok := fix.TimeName(pass, file, call.Pos())
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	typ := fix.Source(pass.Fset, call.Args[0])
	if typ == "" {
		return analysis.SuggestedFix{}, false
	}
	text := "&" + typ + "{Timeout: " + strings.Replace(fixTimeout, "%s", tn, 1) + "}"
	edits = append(edits, analysis.TextEdit{Pos: call.Pos(), End: call.End(), NewText: []byte(text)})
	return analysis.SuggestedFix{Message: "Build the client with Timeout set to 30 s", TextEdits: edits}, true
}

func fileOf(c inspector.Cursor) *ast.File {
	for p := range c.Enclosing((*ast.File)(nil)) {
		return p.Node().(*ast.File)
	}
	return nil
}
