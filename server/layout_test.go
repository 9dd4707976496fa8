package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// engineOf names the engine a file of this package belongs to: "h1" or
// "h2" by its prefix, "" for the files both share (Server, Ctx, the
// response record, the adapter, the hand-off).
func engineOf(name string) string {
	switch {
	case strings.HasPrefix(name, "h1_"):
		return "h1"
	case strings.HasPrefix(name, "h2_"):
		return "h2"
	}
	return ""
}

// TestEnginesMeetOnlyInSharedFiles keeps the package's layout true: an
// h1_ file names nothing declared in an h2_ file and the reverse (what
// both need lives in a shared file), and no source file grows past 500
// lines. It is a syntactic check: package-level names (types, functions,
// variables, constants) declared in one engine's files may not appear as
// identifiers in the other's.
func TestEnginesMeetOnlyInSharedFiles(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{} // every build's files: both engines' _linux and _other ones
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	declaredIn := map[string]map[string]bool{} // name -> engines declaring it ("" for shared)
	declare := func(name, engine string) {
		if declaredIn[name] == nil {
			declaredIn[name] = map[string]bool{}
		}
		declaredIn[name][engine] = true
	}
	for path, f := range files {
		eng := engineOf(filepath.Base(path))
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					declare(d.Name.Name, eng)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						declare(s.Name.Name, eng)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							declare(n.Name, eng)
						}
					}
				}
			}
		}
	}
	for path, f := range files {
		name := filepath.Base(path)
		if n := fset.File(f.Pos()).LineCount(); n > 500 {
			t.Errorf("%s has %d lines: split it by concern (at most 500)", name, n)
		}
		eng := engineOf(name)
		if eng == "" {
			continue
		}
		other := map[string]string{"h1": "h2", "h2": "h1"}[eng]
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name != "_" {
				in := declaredIn[id.Name]
				if in[other] && !in[eng] && !in[""] {
					t.Errorf("%s: %s uses %s, declared in an %s_ file: move it to a shared file",
						fset.Position(id.Pos()), name, id.Name, other)
				}
			}
			return true
		})
	}
}

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
