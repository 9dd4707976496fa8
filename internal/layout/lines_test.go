package layout

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxLines is the most lines a non-test .go file of the module may have:
// past it a file holds more than one concern, and a reader looks for a
// name in a file that does not say it holds it (issue 39).
const maxLines = 500

// longFiles are the files allowed past maxLines, each with its reason:
// where a split would hurt reading, or why it is temporary. Paths are
// relative to the module root, slash-separated. An entry whose file is
// gone or back within maxLines fails the test too, so the list stays true.
var longFiles = map[string]string{}

// skippedDirs hold no source of the module's packages.
var skippedDirs = map[string]bool{"testdata": true, "vendor": true}

// TestNoFileOverMaxLines walks the module (nested modules, such as
// compat/ and bench/peers/, aside: they have a go.mod of their own) and
// fails naming every non-test .go file over maxLines that longFiles does
// not excuse, and every entry of longFiles that no longer needs to be one.
func TestNoFileOverMaxLines(t *testing.T) {
	root := moduleRoot(t)
	lines := map[string]int{} // every file checked, by its path from root
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if skippedDirs[name] || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir // as the go command skips them
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := bytes.Count(b, []byte("\n"))
		if len(b) > 0 && b[len(b)-1] != '\n' {
			n++
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		lines[filepath.ToSlash(rel)] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("no .go file found under %s", root)
	}
	var paths []string
	for p := range lines {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if n := lines[p]; n > maxLines && longFiles[p] == "" {
			t.Errorf("%s has %d lines (at most %d): split it by concern, one file per concept named for what it holds, or add it to longFiles in internal/layout/lines_test.go with the reason a split would hurt reading",
				p, n, maxLines)
		}
	}
	var excused []string
	for p := range longFiles {
		excused = append(excused, p)
	}
	sort.Strings(excused)
	for _, p := range excused {
		n, ok := lines[p]
		switch {
		case strings.TrimSpace(longFiles[p]) == "":
			t.Errorf("longFiles: %s has no reason: write why a split would hurt reading", p)
		case !ok:
			t.Errorf("longFiles names %s, which is no source file of the module: remove the entry", p)
		case n <= maxLines:
			t.Errorf("longFiles excuses %s, which has %d lines (at most %d): it no longer needs an exception, remove the entry", p, n, maxLines)
		}
	}
}

// moduleRoot is the directory of the go.mod above the test's working
// directory.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
