package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The engines' layout (h1_ and h2_ files meet only in dispatch.go;
// Transport holds each engine's pools by an embedded field) is checked
// on the type-checked package by internal/layout's
// TestEnginesMeetOnlyInDispatch, with the server's; every file's length
// by its TestNoFileOverMaxLines.

// TestArchitectureNamesEveryFile keeps docs/architecture.md's client part
// true to the package: every source file of client/ is named there, in
// backquotes.
func TestArchitectureNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, client, ok := strings.Cut(string(doc), "# The client:")
	if !ok {
		t.Fatal(`docs/architecture.md has no "# The client:" part`)
	}
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.HasSuffix(name, "_test.go") && !strings.Contains(client, "`"+name+"`") {
			t.Errorf("docs/architecture.md's client part does not name %s", name)
		}
	}
}
