package serverlit

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/fix"
)

// The timeouts the suggested fixes write.
const (
	FixReadHeaderTimeout = "10 * %s.Second"
	FixIdleTimeout       = "120 * %s.Second"
)

// TimeoutsFix suggests setting, in the literal, every timeout HP013 and
// HP009 look for that the server lacks: ReadHeaderTimeout, then
// IdleTimeout. Both rules suggest this same fix, so a server that lacks
// both gets both in one `hotpath vet --fix` (identical edits merge), and
// the fixed code is flagged by neither.
func (s *Server) TimeoutsFix(pass *analysis.Pass) (analysis.SuggestedFix, bool) {
	if s.File == nil {
		return analysis.SuggestedFix{}, false
	}
	tn, edits, ok := TimeName(pass, s.File, s.Lit.Lbrace)
	if !ok {
		return analysis.SuggestedFix{}, false
	}
	var missing []string // "Name: value"
	for _, f := range []struct{ name, value string }{
		{"ReadHeaderTimeout", FixReadHeaderTimeout},
		{"IdleTimeout", FixIdleTimeout},
	} {
		if s.Set(f.name) || s.Set("ReadTimeout") {
			continue
		}
		value := strings.Replace(f.value, "%s", tn, 1)
		if kv := s.field(f.name); kv != nil {
			// Name: 0 — replace the zero.
			edits = append(edits, analysis.TextEdit{Pos: kv.Value.Pos(), End: kv.Value.End(), NewText: []byte(value)})
		} else {
			missing = append(missing, f.name+": "+value)
		}
	}
	if len(missing) > 0 {
		edits = append(edits, s.insertFields(pass, missing))
	}
	return analysis.SuggestedFix{Message: "Set the server's missing timeouts (ReadHeaderTimeout 10 s, IdleTimeout 120 s)", TextEdits: edits}, true
}

// field returns the literal's Name: value element, if any.
func (s *Server) field(name string) *ast.KeyValueExpr {
	for _, e := range s.Lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == name {
				return kv
			}
		}
	}
	return nil
}

// insertFields is the edit that adds fields ("Name: value") at the end
// of the literal, in its layout: one line, or a line per field.
func (s *Server) insertFields(pass *analysis.Pass, fields []string) analysis.TextEdit {
	lit := s.Lit
	pos := lit.Rbrace
	var text string
	switch {
	case len(lit.Elts) == 0:
		text = strings.Join(fields, ", ")
	case pass.Fset.Position(lit.Lbrace).Line == pass.Fset.Position(lit.Rbrace).Line:
		text = ", " + strings.Join(fields, ", ")
		pos = lit.Elts[len(lit.Elts)-1].End()
	case pass.Fset.Position(lit.Elts[len(lit.Elts)-1].End()).Line == pass.Fset.Position(lit.Rbrace).Line:
		// The closing brace ends the last element's line ("})}"):
		// new lines right after that element.
		last := lit.Elts[len(lit.Elts)-1]
		pos = last.End()
		indent := indentOf(pass, last)
		text = ","
		for _, f := range fields {
			text += "\n" + indent + f + ","
		}
		text += "\n"
	default:
		// Multi-line literal: lines before the closing brace's line.
		col := pass.Fset.Position(lit.Rbrace).Column
		pos = lit.Rbrace - token.Pos(col-1)
		indent := indentOf(pass, lit.Elts[len(lit.Elts)-1])
		for _, f := range fields {
			text += indent + f + ",\n"
		}
	}
	return analysis.TextEdit{Pos: pos, End: pos, NewText: []byte(text)}
}

// indentOf returns the whitespace before n on its line.
func indentOf(pass *analysis.Pass, n ast.Node) string {
	p := pass.Fset.Position(n.Pos())
	return strings.Repeat("\t", max(p.Column-1, 0)) // gofmt indents with tabs; Column counts bytes
}

// TimeName returns the name under which the file can refer to package
// time at pos, with the edits that import it.
func TimeName(pass *analysis.Pass, file *ast.File, pos token.Pos) (string, []analysis.TextEdit, bool) {
	name, edits, ok := fix.EnsureImport(file, "time", "time")
	if !ok {
		return "", nil, false
	}
	// The name must mean the package at pos, not a local variable.
	if scope := pass.Pkg.Scope().Innermost(pos); scope != nil {
		if _, obj := scope.LookupParent(name, pos); obj != nil {
			if _, isPkg := obj.(*types.PkgName); !isPkg {
				return "", nil, false
			}
		}
	}
	return name, edits, true
}
