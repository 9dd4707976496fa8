package server

import (
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
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

// dispatchFile is the one shared file that names the engines'
// declarations: each of its functions is a branch into h1_ or h2_ files.
const dispatchFile = "dispatch.go"

// TestEnginesMeetOnlyInDispatch keeps the package's layout true, on the
// type-checked package (package-level names, methods and struct fields
// alike, so a local variable that shares a name is not mistaken for a
// declaration): an h1_ file names nothing declared in an h2_ file and the
// reverse; a shared (unprefixed) file names an engine's declarations only
// in dispatch.go, or as the type of a field of a shared record (Server,
// Ctx, response hold each engine's part); and no source file grows past
// 500 lines. It checks this GOOS's files (the _linux ones here).
func TestEnginesMeetOnlyInDispatch(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package with go/packages")
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo, Dir: "."}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading the package: %v", pkgs)
	}
	p := pkgs[0]
	fileOf := func(pos token.Pos) string { return filepath.Base(p.Fset.Position(pos).Filename) }
	// held reports whether pos is inside the fields of a struct type
	// declared in a shared file: a record holding an engine's part.
	var held []ast.Node
	for _, f := range p.Syntax {
		if engineOf(fileOf(f.Pos())) != "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					held = append(held, st.Fields)
				}
			}
			return true
		})
	}
	isHeld := func(pos token.Pos) bool {
		for _, n := range held {
			if n.Pos() <= pos && pos < n.End() {
				return true
			}
		}
		return false
	}
	dispatchSet, holdSet := map[string]bool{}, map[string]bool{}
	for id, obj := range p.TypesInfo.Uses {
		if obj.Pkg() != p.Types || !declaredName(p.Types, obj) {
			continue
		}
		use, decl := fileOf(id.Pos()), fileOf(obj.Pos())
		ue, de := engineOf(use), engineOf(decl)
		switch {
		case de == "" || ue == de:
		case ue != "":
			t.Errorf("%s: %s names %s, declared in %s: the engines meet only in shared files",
				p.Fset.Position(id.Pos()), use, obj.Name(), decl)
		case use == dispatchFile:
			dispatchSet[obj.Name()+" ("+decl+")"] = true
		case isHeld(id.Pos()):
			holdSet[obj.Name()+" ("+decl+")"] = true
		default:
			t.Errorf("%s: shared file %s names %s, declared in %s: move the code to an %s_ file, or the branch to %s",
				p.Fset.Position(id.Pos()), use, obj.Name(), decl, de, dispatchFile)
		}
	}
	t.Logf("engine declarations named by %s: %d; held as fields of shared records: %d", dispatchFile, len(dispatchSet), len(holdSet))
	for _, f := range p.Syntax {
		if n := p.Fset.File(f.Pos()).LineCount(); n > 500 {
			t.Errorf("%s has %d lines: split it by concern (at most 500)", fileOf(f.Pos()), n)
		}
	}
}

// declaredName reports whether obj is one of the package's own
// declarations a layout rule is about: package-level, a method or a
// struct field (not a local variable, parameter or label).
func declaredName(pkg *types.Package, obj types.Object) bool {
	switch o := obj.(type) {
	case *types.Var:
		return o.IsField() || o.Parent() == pkg.Scope()
	case *types.Func:
		return true
	case *types.TypeName, *types.Const:
		return o.Parent() == pkg.Scope()
	}
	return false
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
