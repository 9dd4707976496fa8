package rule

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
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

func TestReachesNetHTTP(t *testing.T) {
	nethttp := types.NewPackage("net/http", "http")
	lib := types.NewPackage("example.com/lib", "lib")
	lib.SetImports([]*types.Package{nethttp})
	app := types.NewPackage("example.com/app", "app")
	app.SetImports([]*types.Package{types.NewPackage("strings", "strings"), lib})
	// An import cycle (impossible in Go, possible in a broken graph) must end.
	a, b := types.NewPackage("example.com/a", "a"), types.NewPackage("example.com/b", "b")
	a.SetImports([]*types.Package{b})
	b.SetImports([]*types.Package{a})
	for pkg, want := range map[*types.Package]bool{nethttp: true, lib: true, app: true, a: false} {
		if got := ReachesNetHTTP(pkg); got != want {
			t.Errorf("ReachesNetHTTP(%s) = %v, want %v", pkg.Path(), got, want)
		}
	}
	if New(Rule{ID: "HP000", Name: "x"}, nil).Requires[0] != Reach {
		t.Error("rules must require Reach for their early exit")
	}
}

// TestNoGlobalState: package rule keeps no package-level cache (issue 14:
// a global sync.Map of *types.Package grew forever in gopls and
// golangci-lint). Its only package-level variable is the Reach analyzer.
func TestNoGlobalState(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "Reach" {
						t.Errorf("package-level variable %s: keep per-pass state in an analyzer result", n.Name)
					}
				}
			}
		}
	}
}
