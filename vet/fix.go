package vet

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/token"
	"os"
	"sort"

	"golang.org/x/tools/go/analysis"

	"github.com/hotpathhq/hotpath/vet/internal/udiff"
)

// edit is one TextEdit of a suggested fix, as byte offsets in a file.
type edit struct {
	path       string // absolute file name
	size       int    // the file's size when it was loaded
	start, end int
	text       string
}

// fixEdits converts the first suggested fix of d to edits, or returns nil
// when there is none or it cannot be applied safely: an edit outside the
// package's files, in a generated file, or out of range.
func fixEdits(fset *token.FileSet, files []*ast.File, d analysis.Diagnostic) []edit {
	if len(d.SuggestedFixes) == 0 {
		return nil
	}
	var out []edit
	for _, te := range d.SuggestedFixes[0].TextEdits {
		end := te.End
		if !end.IsValid() {
			end = te.Pos
		}
		tf := fset.File(te.Pos)
		if tf == nil || fset.File(end) != tf || end < te.Pos {
			return nil
		}
		var syntax *ast.File
		for _, f := range files {
			if f.FileStart <= te.Pos && te.Pos <= f.FileEnd {
				syntax = f
			}
		}
		if syntax == nil || ast.IsGenerated(syntax) {
			return nil
		}
		out = append(out, edit{path: tf.Name(), size: tf.Size(), start: tf.Offset(te.Pos), end: tf.Offset(end), text: string(te.NewText)})
	}
	return out
}

// FileFix is one file as the findings' suggested fixes leave it.
type FileFix struct {
	File     string // the name findings use (relative to Config.Dir when below it)
	Path     string // the absolute name, to write
	Old, New []byte // before, and after the fixes and gofmt
}

// Diff returns the unified diff from f.Old to f.New, with a/ and b/
// prefixes as git apply and patch -p1 expect.
func (f FileFix) Diff() string {
	return udiff.Unified("a/"+f.File, "b/"+f.File, string(f.Old), string(f.New))
}

// Write writes f.New over the file, keeping its permissions.
func (f FileFix) Write() error {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Path, f.New, fi.Mode().Perm())
}

// Fixes is what applying the findings' suggested fixes gives.
type Fixes struct {
	Files    []FileFix // each changed file once, sorted by name
	Applied  []Finding // findings whose fix is in Files
	Conflict []Finding // findings whose fix overlaps one applied: run again after writing
}

// Fixes applies the first suggested fix of every fixable finding to the
// files' contents, in memory: nothing is written. Fixes are taken in
// finding order; one whose edits overlap an edit already taken (other than
// an identical one, such as the same import added twice) is left out, in
// Conflict. Each changed file is gofmt'ed. An error means no file may be
// written: a file changed since it was loaded, or the fixes leave one that
// does not parse.
func (r *Result) Fixes() (*Fixes, error) {
	out := &Fixes{}
	byFile := map[string][]edit{}
	size := map[string]int{}
	for _, f := range r.Findings {
		if len(f.fix) == 0 {
			continue
		}
		var add []edit
		ok := true
	edits:
		for _, e := range f.fix {
			for _, o := range byFile[e.path] {
				if e == o {
					continue edits // the same edit, from another fix
				}
				if overlap(e, o) {
					ok = false
					break edits
				}
			}
			for _, o := range add {
				if overlap(e, o) {
					ok = false // the fix contradicts itself
					break edits
				}
			}
			add = append(add, e)
		}
		if !ok {
			out.Conflict = append(out.Conflict, f)
			continue
		}
		for _, e := range add {
			byFile[e.path] = append(byFile[e.path], e)
			size[e.path] = e.size
		}
		out.Applied = append(out.Applied, f)
	}
	for path, edits := range byFile {
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("vet: fixing %s: %w", path, err)
		}
		if len(old) != size[path] {
			return nil, fmt.Errorf("vet: %s changed since it was analyzed (%d bytes, now %d): run again", path, size[path], len(old))
		}
		sort.Slice(edits, func(i, j int) bool {
			if edits[i].start != edits[j].start {
				return edits[i].start < edits[j].start
			}
			return edits[i].end < edits[j].end
		})
		var b bytes.Buffer
		last := 0
		for _, e := range edits {
			b.Write(old[last:e.start])
			b.WriteString(e.text)
			last = e.end
		}
		b.Write(old[last:])
		new, err := format.Source(b.Bytes())
		if err != nil {
			return nil, fmt.Errorf("vet: the suggested fixes leave %s unparsable (%v): no file written; please report it", path, err)
		}
		if !bytes.Equal(old, new) {
			out.Files = append(out.Files, FileFix{File: relPath(r.dir, path), Path: path, Old: old, New: new})
		}
	}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].File < out.Files[j].File })
	return out, nil
}

// overlap reports whether edits a and b touch the same bytes of a file,
// or insert different text at the same offset (their order is unknown).
func overlap(a, b edit) bool {
	if a.path != b.path {
		return false
	}
	if a.start == a.end && b.start == b.end {
		return a.start == b.start
	}
	return (a.start < b.end && b.start < a.end) || a.start == b.start
}
