package serverlit

import (
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
	tn, edits, ok := fix.TimeName(pass, s.File, s.Lit.Lbrace)
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
		if kv := fix.Field(s.Lit, f.name); kv != nil {
			// Name: 0 — replace the zero.
			edits = append(edits, analysis.TextEdit{Pos: kv.Value.Pos(), End: kv.Value.End(), NewText: []byte(value)})
		} else {
			missing = append(missing, f.name+": "+value)
		}
	}
	if len(missing) > 0 {
		edits = append(edits, fix.AddFields(pass.Fset, s.Lit, missing))
	}
	return analysis.SuggestedFix{Message: "Set the server's missing timeouts (ReadHeaderTimeout 10 s, IdleTimeout 120 s)", TextEdits: edits}, true
}
