package layout

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// documented are the packages docs/architecture.md ("read this first")
// walks through, file by file, and the part of it that does: the server's
// from the top to the client's heading, the client's from there on.
var documented = []struct{ dir, from, to string }{
	{"server", "", "# The client:"},
	{"internal/park", "", "# The client:"},
	{"client", "# The client:", ""},
}

// TestArchitectureNamesEveryFile keeps docs/architecture.md true to the
// packages it describes: every source file of each is named, in
// backquotes, in that package's part of the document (a client file of
// the same name as a server file does not stand for it).
func TestArchitectureNamesEveryFile(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, d := range documented {
		part := doc
		if d.from != "" {
			_, after, ok := strings.Cut(part, d.from)
			if !ok {
				t.Fatalf("docs/architecture.md has no %q heading", d.from)
			}
			part = after
		}
		if d.to != "" {
			before, _, ok := strings.Cut(part, d.to)
			if !ok {
				t.Fatalf("docs/architecture.md has no %q heading", d.to)
			}
			part = before
		}
		names, err := filepath.Glob(filepath.Join(root, d.dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(names) == 0 {
			t.Fatalf("no source file in %s", d.dir)
		}
		for _, path := range names {
			name := filepath.Base(path)
			if !strings.HasSuffix(name, "_test.go") && !strings.Contains(part, "`"+name+"`") {
				t.Errorf("docs/architecture.md's part on %s does not name %s", d.dir, name)
			}
		}
	}
}
