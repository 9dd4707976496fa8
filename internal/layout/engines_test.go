package layout

import (
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// enginePackages are the packages split by engine: HTTP/1.1 files named
// h1_*.go, HTTP/2 files h2_*.go, the rest shared, and the one shared file
// allowed to name the engines' declarations.
var enginePackages = []struct{ path, dispatch string }{
	{"github.com/hotpathhq/hotpath/server", "dispatch.go"},
	{"github.com/hotpathhq/hotpath/client", "dispatch.go"},
}

// engineOf names the engine a file belongs to: "h1" or "h2" by its
// prefix, "" for a shared file.
func engineOf(name string) string {
	switch {
	case strings.HasPrefix(name, "h1_"):
		return "h1"
	case strings.HasPrefix(name, "h2_"):
		return "h2"
	}
	return ""
}

// TestEnginesMeetOnlyInDispatch keeps each engine-split package's layout
// true, on the type-checked package (package-level names, methods and
// struct fields alike, so a local variable that shares a name is not
// mistaken for a declaration): an h1_ file names nothing declared in an
// h2_ file and the reverse; a shared (unprefixed) file names an engine's
// declarations only in the package's dispatch file, or as the type of a
// field of a shared record (the server's Server, Ctx and response hold
// each engine's part). It checks this GOOS's files.
func TestEnginesMeetOnlyInDispatch(t *testing.T) {
	for _, ep := range enginePackages {
		t.Run(filepath.Base(ep.path), func(t *testing.T) {
			checkEngines(t, ep.path, ep.dispatch)
		})
	}
}

func checkEngines(t *testing.T, path, dispatchFile string) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo, Dir: moduleRoot(t)}
	pkgs, err := packages.Load(cfg, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading %s: %v", path, pkgs)
	}
	p := pkgs[0]
	fileOf := func(pos token.Pos) string { return filepath.Base(p.Fset.Position(pos).Filename) }
	// held: the field lists of struct types declared in shared files,
	// where a record holds an engine's part.
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
