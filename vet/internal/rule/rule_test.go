package rule

import (
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/analysis"
)

func TestNames(t *testing.T) {
	r := Rule{ID: "HP012", Name: "undrained-body", Exercise: 12}
	for text, want := range map[string]bool{
		"//nolint":                                   true,
		"//nolint // reason":                         true,
		"//nolint:undrained-body":                    true,
		"//nolint:bodyclose,HP012 // probe":          true,
		"//nolint:undrainedbody":                     true,
		"//nolint:hotpath":                           true,
		"//nolint:bodyclose":                         false,
		"//hotpath:ignore HP012 one-shot probe":      true,
		"//hotpath:ignore undrained-body":            true,
		"//hotpath:ignore HP013 other rule":          false,
		"// a comment mentioning nolint:HP012 later": false,
	} {
		if got := names(text, r); got != want {
			t.Errorf("names(%q) = %v, want %v", text, got, want)
		}
	}
	if r.Lab() != "000-12" || r.AnalyzerName() != "undrainedbody" {
		t.Errorf("Lab %q AnalyzerName %q", r.Lab(), r.AnalyzerName())
	}
}

// TestIsTestCode: only test files, external test packages and httptest-like
// helpers are test code; a package whose name merely ends in "test" is not
// (issue 14: HP008 missed a finding in package latest).
func TestIsTestCode(t *testing.T) {
	fset := token.NewFileSet()
	for _, c := range []struct {
		pkg, file string
		want      bool
	}{
		{"latest", "latest.go", false},
		{"contest", "contest.go", false},
		{"other", "other.go", false},
		{"latest", "latest_test.go", true},
		{"latest_test", "x_test.go", true},
		{"latest_test", "x.go", true},
		{"httptest", "server.go", true},
	} {
		f := fset.AddFile(c.file, -1, 10)
		pass := &analysis.Pass{Fset: fset, Pkg: types.NewPackage("example.com/"+c.pkg, c.pkg)}
		if got := IsTestCode(pass, f.Pos(1)); got != c.want {
			t.Errorf("package %s, file %s: IsTestCode = %v, want %v", c.pkg, c.file, got, c.want)
		}
	}
}
