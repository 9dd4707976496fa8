package nethttpsuite

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
)

type typeError struct {
	pos token.Position
	msg string
}

func (e typeError) String() string { return fmt.Sprintf("%s: %s", e.pos, e.msg) }

// typeErrors type-checks the generated test package: every error, where
// the compiler would stop at ten. imp is reused from round to round, so
// the dependencies are checked once.
func typeErrors(dir string, imp types.Importer) ([]typeError, parsedDir, error) {
	fset := token.NewFileSet()
	parsed := parsedDir{fset, map[string]*ast.File{}}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, parsed, err
	}
	var errs []typeError
	var files []*ast.File
	for _, path := range names {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, parsed, err
		}
		files = append(files, f)
		parsed.files[filepath.Base(path)] = f
		// The type checker imports Go's internal packages, the go
		// command does not: each such import is an error here.
		for _, imp := range f.Imports {
			if ip, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(ip, "internal/") || strings.Contains(ip, "/internal/") && !strings.HasPrefix(ip, "github.com/hotpathhq/") {
				errs = append(errs, typeError{fset.Position(imp.Pos()), "use of internal package " + ip + " not allowed"})
			}
		}
	}
	conf := types.Config{
		Importer: imp,
		Error: func(err error) {
			if te, ok := err.(types.Error); ok {
				errs = append(errs, typeError{te.Fset.Position(te.Pos), te.Msg})
			}
		},
	}
	conf.Check("suite", fset, files, nil)
	return errs, parsed, nil
}

type parsedDir struct {
	fset  *token.FileSet
	files map[string]*ast.File
}

// dropAt removes from f the top-level declaration (or import) that holds
// the error, recording why. It reports whether anything was removed.
func dropAt(fset *token.FileSet, f *ast.File, e typeError, dropped map[string]string) bool {
	var kept []ast.Decl
	removed := false
	for _, d := range f.Decls {
		from, to := fset.Position(d.Pos()), fset.Position(d.End())
		if e.pos.Line < from.Line || e.pos.Line > to.Line {
			kept = append(kept, d)
			continue
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			// An import left unused by what was removed.
			var specs []ast.Spec
			for _, s := range gd.Specs {
				if fset.Position(s.Pos()).Line != e.pos.Line {
					specs = append(specs, s)
				}
			}
			removed = len(specs) != len(gd.Specs)
			gd.Specs = specs
			kept = append(kept, d)
			continue
		}
		if gd, ok := d.(*ast.GenDecl); ok && len(gd.Specs) > 1 {
			var specs []ast.Spec
			for _, s := range gd.Specs {
				sf, st := fset.Position(s.Pos()), fset.Position(s.End())
				if e.pos.Line >= sf.Line && e.pos.Line <= st.Line {
					dropped[specName(s)] = e.msg
					removed = true
					continue
				}
				specs = append(specs, s)
			}
			gd.Specs = specs
			kept = append(kept, d)
			continue
		}
		dropped[declName(d)] = e.msg
		removed = true
	}
	f.Decls = kept
	return removed
}

func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) == 1 {
			return fmt.Sprintf("(%s).%s", exprString(d.Recv.List[0].Type), d.Name.Name)
		}
		return d.Name.Name
	case *ast.GenDecl:
		if len(d.Specs) > 0 {
			return specName(d.Specs[0])
		}
	}
	return "?"
}

func specName(s ast.Spec) string {
	switch s := s.(type) {
	case *ast.TypeSpec:
		return s.Name.Name
	case *ast.ValueSpec:
		return s.Names[0].Name
	}
	return "?"
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	_ = format.Node(&b, token.NewFileSet(), e)
	return b.String()
}
