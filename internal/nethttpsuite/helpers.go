package nethttpsuite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// helpersFile holds the helpers copied from net/http's other test files.
const helpersFile = "helpers_test.go"

// helperLibrary indexes the top-level declarations of net/http's other
// external test files (package http_test), so that a helper the copied
// tests share with them (a listener, a reader type) can be copied in by
// name, with its methods and its file's imports.
type helperLibrary struct {
	index   map[string]string // name → source of the declaration (a type with its methods)
	imports map[string]string // name → imports of its file, as import lines
	used    []string          // names copied in so far
	gone    map[string]bool   // names copied in, then left out
}

func newHelperLibrary(src string, exclude []string, paths map[string]string, rewrite func(*ast.File)) (*helperLibrary, error) {
	lib := &helperLibrary{index: map[string]string{}, imports: map[string]string{}, gone: map[string]bool{}}
	names, err := filepath.Glob(filepath.Join(src, "*_test.go"))
	if err != nil {
		return nil, err
	}
	for _, path := range names {
		if slices.Contains(exclude, filepath.Base(path)) {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Name.Name != "http_test" {
			continue
		}
		rewriteImports(f, paths)
		rewrite(f)
		var imps strings.Builder
		for _, imp := range f.Imports {
			if imp.Name != nil {
				imps.WriteString(imp.Name.Name + " ")
			}
			imps.WriteString(imp.Path.Value + "\n")
		}
		methods := map[string][]string{}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil {
				recv := strings.TrimPrefix(exprString(fd.Recv.List[0].Type), "*")
				recv, _, _ = strings.Cut(recv, "[")
				methods[recv] = append(methods[recv], nodeSource(fset, fd))
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && !strings.HasPrefix(d.Name.Name, "Test") && !strings.HasPrefix(d.Name.Name, "Benchmark") {
					lib.add(d.Name.Name, nodeSource(fset, d), imps.String())
				}
			case *ast.GenDecl:
				if d.Tok == token.IMPORT {
					continue
				}
				for _, s := range d.Specs {
					var name string
					switch s := s.(type) {
					case *ast.TypeSpec:
						name = s.Name.Name
					case *ast.ValueSpec:
						if len(s.Names) != 1 {
							continue
						}
						name = s.Names[0].Name
					}
					decl := d.Tok.String() + " " + nodeSource(fset, s)
					for _, m := range methods[name] {
						decl += "\n\n" + m
					}
					lib.add(name, decl, imps.String())
				}
			}
		}
	}
	return lib, nil
}

func (l *helperLibrary) add(name, decl, imports string) {
	if _, dup := l.index[name]; dup {
		return // declared in two files: leave it to whoever needs it to be dropped
	}
	l.index[name] = decl
	l.imports[name] = imports
}

// resolve copies in the helpers named by "undefined" errors and reports
// whether it copied any.
func (l *helperLibrary) resolve(errs []typeError) bool {
	added := false
	for _, e := range errs {
		name, ok := strings.CutPrefix(e.msg, "undefined: ")
		if !ok || l.gone[name] || slices.Contains(l.used, name) {
			continue
		}
		if _, ok := l.index[name]; ok {
			l.used = append(l.used, name)
			added = true
		}
	}
	return added
}

// forget marks copied helpers that were then left out, so they are not
// copied again.
func (l *helperLibrary) forget(dropped map[string]string) {
	for _, n := range l.used {
		if _, ok := dropped[n]; ok {
			l.gone[n] = true
		}
	}
	l.used = slices.DeleteFunc(l.used, func(n string) bool { return l.gone[n] })
}

// source is the helpers file: the copied declarations and their imports.
// Imports left unused are removed by the type-check rounds.
func (l *helperLibrary) source() string {
	var b strings.Builder
	b.WriteString("package suite\n\n// Helpers copied from net/http's other test files by internal/nethttpsuite.\n\n")
	imps := map[string]bool{}
	for _, n := range l.used {
		for _, line := range strings.Split(strings.TrimSpace(l.imports[n]), "\n") {
			if line != "" {
				imps[line] = true
			}
		}
	}
	lines := make([]string, 0, len(imps))
	for line := range imps {
		lines = append(lines, line)
	}
	sort.Strings(lines)
	// A path imported under two names (net/http, by name and with a
	// dot) is imported twice: Go allows it, and the unused one goes.
	if len(lines) > 0 {
		b.WriteString("import (\n")
		for _, line := range lines {
			b.WriteString("\t" + line + "\n")
		}
		b.WriteString(")\n\n")
	}
	for _, n := range l.used {
		b.WriteString(l.index[n] + "\n\n")
	}
	out, err := format.Source([]byte(b.String()))
	if err != nil {
		panic(fmt.Sprintf("nethttpsuite: helpers do not print: %v", err))
	}
	return string(out)
}

func nodeSource(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := format.Node(&b, fset, n); err != nil {
		panic(err)
	}
	return b.String()
}
