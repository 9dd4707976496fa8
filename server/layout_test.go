package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The engines' layout (h1_ and h2_ files meet only in dispatch.go) is
// checked by internal/layout (engines_test.go), which type-checks this
// package; linking go/packages into this test binary would move its code
// and skew its in-memory benchmarks (BenchmarkServerNative).

// TestArchitectureNamesEveryFile keeps docs/architecture.md ("read this
// first") true to the package: every source file of server/ is named
// there, in backquotes.
func TestArchitectureNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/architecture.md does not name %s", name)
		}
	}
}
