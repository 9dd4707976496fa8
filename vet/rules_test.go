package vet_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/hotpathhq/hotpath/vet"
	"github.com/hotpathhq/hotpath/vet/internal/httpfacts"
	"github.com/hotpathhq/hotpath/vet/internal/rule"
)

// byPackage runs, on each testdata package testdata/src/<analyzer>/..., only
// the rule named by its first path element. analysistest then checks every
// rule's // want comments and .golden files in one load of net/http and its
// dependencies from source, instead of fourteen: that load dominates the
// suite's time, most of all under -race.
var byPackage = &analysis.Analyzer{
	Name:     "byPackage",
	Doc:      "runs the hotpath rule named by the package path (test harness)",
	Requires: []*analysis.Analyzer{rule.Reach, httpfacts.Analyzer},
	Run: func(pass *analysis.Pass) (any, error) {
		name, _, _ := strings.Cut(pass.Pkg.Path(), "/")
		for _, a := range vet.Analyzers() {
			if a.Name != name {
				continue
			}
			p := *pass
			p.Analyzer = a
			return a.Run(&p)
		}
		return nil, nil
	},
}

// TestRules checks every rule (except HP006, which needs module mode for its
// go version gate: see vet/stringrouting) against its testdata package:
// must-flag cases carry // want, must-not-flag cases carry none, and
// suggested fixes must produce the .golden files.
func TestRules(t *testing.T) {
	var pkgs []string
	for _, a := range vet.Analyzers() {
		if a.Name == "stringrouting" {
			continue
		}
		pkgs = append(pkgs, a.Name+"/...")
		// Every rule that uses facts must get them through byPackage.
		for _, r := range a.Requires {
			if r != rule.Reach && r != httpfacts.Analyzer {
				t.Fatalf("%s requires %s: add it to byPackage.Requires", a.Name, r.Name)
			}
		}
		if !reflect.DeepEqual(a.FactTypes, []analysis.Fact(nil)) {
			t.Fatalf("%s declares facts; byPackage cannot forward them", a.Name)
		}
	}
	results := analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), byPackage, pkgs...)

	// analysistest compares a file with its .golden only when some fix
	// edits it: a rule whose fix stopped applying would pass unnoticed.
	fixed := map[string]bool{}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			for _, sf := range d.SuggestedFixes {
				for _, e := range sf.TextEdits {
					fixed[r.Pass.Fset.File(e.Pos).Name()] = true
				}
			}
		}
	}
	var goldens []string
	for _, pattern := range []string{"*/*.golden", "*/*/*.golden"} {
		m, _ := filepath.Glob(filepath.Join(analysistest.TestData(), "src", pattern))
		goldens = append(goldens, m...)
	}
	if len(goldens) == 0 {
		t.Fatal("no .golden files found")
	}
	for _, g := range goldens {
		if src := strings.TrimSuffix(g, ".golden"); !fixed[src] {
			t.Errorf("%s: no suggested fix edits it, so its golden file is never compared", src)
		}
	}
}
