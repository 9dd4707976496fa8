package vet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixesMerge: fixes are taken in finding order; an identical edit from
// two fixes (the same import) is applied once, an overlapping fix is left
// for the next run, and the result is gofmt'ed.
func TestFixesMerge(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.go")
	src := "package a\n\nimport (\n\t\"fmt\"\n)\n\nvar A = fmt.Sprint(1)\nvar B = fmt.Sprint(2)\n"
	if err := os.WriteFile(path, []byte(src), 0o640); err != nil {
		t.Fatal(err)
	}
	at := func(s string) int { return strings.Index(src, s) }
	imp := edit{path: path, size: len(src), start: at("\t\"fmt\""), end: at("\t\"fmt\""), text: "\"time\"\n"}
	one := edit{path: path, size: len(src), start: at("1)"), end: at("1)") + 1, text: "time.Second"}
	two := edit{path: path, size: len(src), start: at("2)"), end: at("2)") + 1, text: "time.Minute"}
	overlapping := edit{path: path, size: len(src), start: at("fmt.Sprint(1)"), end: at("1)") + 1, text: "x"}
	res := &Result{dir: dir, Findings: []Finding{
		{File: "a.go", Line: 7, RuleID: "HP001", fix: []edit{imp, one}},
		{File: "a.go", Line: 8, RuleID: "HP001", fix: []edit{imp, two}},
		{File: "a.go", Line: 7, Column: 9, RuleID: "HP002", fix: []edit{overlapping}},
		{File: "a.go", Line: 9, RuleID: "HP003"}, // no fix
	}}
	fixes, err := res.Fixes()
	if err != nil {
		t.Fatal(err)
	}
	if len(fixes.Applied) != 2 || len(fixes.Conflict) != 1 || fixes.Conflict[0].RuleID != "HP002" || len(fixes.Files) != 1 {
		t.Fatalf("applied %d, conflicts %+v, files %d", len(fixes.Applied), fixes.Conflict, len(fixes.Files))
	}
	f := fixes.Files[0]
	want := "package a\n\nimport (\n\t\"fmt\"\n\t\"time\"\n)\n\nvar A = fmt.Sprint(time.Second)\nvar B = fmt.Sprint(time.Minute)\n"
	if f.File != "a.go" || string(f.Old) != src || string(f.New) != want {
		t.Errorf("%s:\n%s\nwant:\n%s", f.File, f.New, want)
	}
	if d := f.Diff(); !strings.HasPrefix(d, "--- a/a.go\n+++ b/a.go\n") || strings.Count(d, "+\t\"time\"") != 1 {
		t.Errorf("diff:\n%s", d)
	}
	if b, _ := os.ReadFile(path); string(b) != src {
		t.Error("Fixes wrote the file")
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != want {
		t.Errorf("written:\n%s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", fi.Mode())
	}

	// The file changed since it was analyzed (it was just written): refuse.
	if _, err := res.Fixes(); err == nil || !strings.Contains(err.Error(), "changed since it was analyzed") {
		t.Errorf("stale file: err = %v", err)
	}
}

// TestFixesUnparsable: a fix that breaks the syntax writes nothing.
func TestFixesUnparsable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.go")
	src := "package a\n\nvar A = 1\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res := &Result{Findings: []Finding{{fix: []edit{{path: path, size: len(src), start: 8, end: 9, text: "{"}}}}}
	if _, err := res.Fixes(); err == nil || !strings.Contains(err.Error(), "unparsable") {
		t.Errorf("err = %v", err)
	}
}
