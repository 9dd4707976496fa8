package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The package's layout, as server/ keeps its own: h1_*.go files are the
// HTTP/1.1 engine, h2_*.go files the HTTP/2 engine, and the files without
// a prefix are what both share. The engines meet in one file, dispatchFile,
// which chooses a request's path (Fallback, HTTP/2 or HTTP/1.1).
const dispatchFile = "dispatch.go"

// sharedMayName lists the engine declarations a shared file other than
// dispatchFile may name, "file name" → why. Keep it short: anything else
// both engines need belongs in a shared file.
var sharedMayName = map[string]string{
	"transport.go h1Pools": "Transport embeds each engine's pools, guarded by its one mu",
	"transport.go h2Pools": "Transport embeds each engine's pools, guarded by its one mu",
}

// engineOf names the engine a file of this package belongs to: "h1" or
// "h2" by its prefix, "" for the files both share.
func engineOf(name string) string {
	switch {
	case strings.HasPrefix(name, "h1_"):
		return "h1"
	case strings.HasPrefix(name, "h2_"):
		return "h2"
	}
	return ""
}

// TestEnginesMeetOnlyInDispatch keeps the layout true: an h1_ file names
// nothing declared in an h2_ file and the reverse; a shared file other
// than dispatchFile names nothing declared in an engine's file (but for
// sharedMayName); and no source file grows past 500 lines.
//
// It is a syntactic check. Package-level names (functions, types,
// variables, constants) are matched by identifier, less the names a
// declaration binds locally (parameters, :=, var, range). Methods and
// struct fields are matched by the name after a dot (or a composite
// literal's key), unexported ones only (an exported method here
// implements an interface of the standard library's, as Read and Write
// do), so only a member name declared on one side alone is caught: a
// name both sides declare (close, mu, nc) cannot be told apart without
// type-checking.
func TestEnginesMeetOnlyInDispatch(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{} // every build's files: _unix and _other alike
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
	if files[dispatchFile] == nil {
		t.Fatalf("%s is missing: the dispatch between the engines lives there (or change dispatchFile)", dispatchFile)
	}

	// Where each name is declared: package-level names and members
	// (methods, fields of package-level structs), by file.
	topIn := map[string][]string{}
	memberIn := map[string][]string{}
	for name, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					topIn[d.Name.Name] = append(topIn[d.Name.Name], name)
				} else if !d.Name.IsExported() { // Read, Write, Close...: io's, not an engine's
					memberIn[d.Name.Name] = append(memberIn[d.Name.Name], name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						topIn[s.Name.Name] = append(topIn[s.Name.Name], name)
						var fields []*ast.Field
						switch ty := s.Type.(type) {
						case *ast.StructType:
							fields = ty.Fields.List
						case *ast.InterfaceType:
							fields = ty.Methods.List
						}
						for _, fd := range fields {
							for _, n := range fd.Names {
								if !n.IsExported() {
									memberIn[n.Name] = append(memberIn[n.Name], name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							topIn[n.Name] = append(topIn[n.Name], name)
						}
					}
				}
			}
		}
	}

	used := map[string]bool{} // sharedMayName entries still needed
	for _, name := range sortedKeys(files) {
		f := files[name]
		if n := fset.File(f.Pos()).LineCount(); n > 500 {
			t.Errorf("%s has %d lines: split it by what it holds (at most 500)", name, n)
		}
		if name == dispatchFile {
			continue
		}
		eng := engineOf(name)
		// check reports a name this file may not use: declared only in
		// the other engine's files (an engine file), or only in engine
		// files (a shared file).
		check := func(id *ast.Ident, declared map[string][]string, what string) {
			in := declared[id.Name]
			var own, foreign []string
			for _, file := range in {
				switch e := engineOf(file); {
				case e == eng || e == "":
					own = append(own, file)
				default:
					foreign = append(foreign, file)
				}
			}
			if len(foreign) == 0 || len(own) > 0 {
				return
			}
			if eng == "" {
				if key := name + " " + id.Name; sharedMayName[key] != "" {
					used[key] = true
					return
				}
				t.Errorf("%s: shared file %s names %s, declared in %s: only %s may name an engine's declarations; move it to a shared file",
					fset.Position(id.Pos()), name, what+id.Name, strings.Join(foreign, ", "), dispatchFile)
				return
			}
			t.Errorf("%s: %s names %s, declared in %s: the engines meet only in shared files; move it to one",
				fset.Position(id.Pos()), name, what+id.Name, strings.Join(foreign, ", "))
		}
		imports := map[string]bool{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			n := p[strings.LastIndexByte(p, '/')+1:]
			if im.Name != nil {
				n = im.Name.Name
			}
			imports[n] = true
		}
		for _, d := range f.Decls {
			local := localNames(d)
			skip := map[*ast.Ident]bool{} // identifiers that declare, or are a selector's member
			ast.Inspect(d, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					skip[n.Name] = true
				case *ast.TypeSpec:
					skip[n.Name] = true
				case *ast.ValueSpec:
					for _, id := range n.Names {
						skip[id] = true
					}
				case *ast.Field:
					for _, id := range n.Names {
						skip[id] = true
					}
				case *ast.SelectorExpr:
					skip[n.Sel] = true
					if x, ok := n.X.(*ast.Ident); !ok || !imports[x.Name] || local[x.Name] {
						check(n.Sel, memberIn, "member ")
					}
				case *ast.CompositeLit:
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok {
							if k, ok := kv.Key.(*ast.Ident); ok && memberIn[k.Name] != nil {
								skip[k] = true
								check(k, memberIn, "field ")
							}
						}
					}
				case *ast.Ident:
					if !skip[n] && !local[n.Name] && n.Name != "_" {
						check(n, topIn, "")
					}
				}
				return true
			})
		}
	}
	for key, why := range sharedMayName {
		if !used[key] {
			t.Errorf("sharedMayName has %q (%s), which no file needs any more: take it out", key, why)
		}
	}
}

// localNames returns the names a declaration binds inside itself:
// parameters, results, receivers, :=, var and const in bodies, range
// variables, type parameters and labels. They shadow package-level names
// throughout the declaration (a simplification: scopes are not tracked).
func localNames(d ast.Decl) map[string]bool {
	local := map[string]bool{}
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			local[id.Name] = true
		}
	}
	fields := func(fl *ast.FieldList) {
		if fl != nil {
			for _, f := range fl.List {
				add(f.Names...)
			}
		}
	}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			fields(n.Recv)
		case *ast.FuncType:
			fields(n.TypeParams)
			fields(n.Params)
			fields(n.Results)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			for _, s := range n.Decl.(*ast.GenDecl).Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					add(s.Names...)
				case *ast.TypeSpec:
					add(s.Name)
				}
			}
		case *ast.LabeledStmt:
			add(n.Label)
		}
		return true
	})
	return local
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

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
