// Package fix holds small helpers for building suggested fixes: finding the
// name a file imports a package under, adding an import, and adding fields
// to a composite literal in its own layout.
package fix

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// ImportName returns the name file uses for the package path ("" if the file
// does not import it, or imports it with _ or .).
func ImportName(file *ast.File, path string) string {
	for _, imp := range file.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == "_" || imp.Name.Name == "." {
				return ""
			}
			return imp.Name.Name
		}
		// The last element is the package name for every std package we import.
		for i := len(p) - 1; i >= 0; i-- {
			if p[i] == '/' {
				return p[i+1:]
			}
		}
		return p
	}
	return ""
}

// EnsureImport returns the name to use for std package path in file and the
// edits (none, or one adding the import) that make it valid. A lone
// unparenthesized import ("import "net/http"") becomes a parenthesized
// block with the new import, an edit every rule makes the same way (so two
// fixes adding one import merge). ok is false when the import cannot be
// added safely (the name is taken, or several unparenthesized imports).
func EnsureImport(file *ast.File, path, name string) (string, []analysis.TextEdit, bool) {
	if n := ImportName(file, path); n != "" {
		return n, nil, true
	}
	if file.Scope != nil && file.Scope.Lookup(name) != nil {
		return "", nil, false
	}
	var first *ast.GenDecl
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		if first == nil {
			first = gd
		}
		for _, s := range gd.Specs {
			if s.(*ast.ImportSpec).Name != nil && s.(*ast.ImportSpec).Name.Name == name {
				return "", nil, false
			}
		}
	}
	switch {
	case first == nil:
		return name, []analysis.TextEdit{{Pos: file.Name.End(), End: file.Name.End(), NewText: []byte("\n\nimport " + strconv.Quote(path))}}, true
	case first.Lparen.IsValid():
		// After the last standard import that sorts before path, so that
		// two fixes adding different imports edit different places (edits
		// at one place conflict: see vet.Result.Fixes); gofmt sorts them.
		at := first.Lparen + 1
		for _, sp := range first.Specs {
			p, err := strconv.Unquote(sp.(*ast.ImportSpec).Path.Value)
			if err == nil && !strings.Contains(strings.Split(p, "/")[0], ".") && p < path {
				at = sp.End()
			}
		}
		return name, []analysis.TextEdit{{Pos: at, End: at, NewText: []byte("\n\t" + strconv.Quote(path))}}, true
	case len(first.Specs) == 1:
		spec := first.Specs[0].(*ast.ImportSpec)
		old := spec.Path.Value
		if spec.Name != nil {
			old = spec.Name.Name + " " + old
		}
		text := "import (\n\t" + old + "\n\t" + strconv.Quote(path) + "\n)"
		return name, []analysis.TextEdit{{Pos: first.Pos(), End: first.End(), NewText: []byte(text)}}, true
	}
	return "", nil, false
}

// Source prints a node back as Go source.
func Source(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := format.Node(&b, fset, n); err != nil {
		return ""
	}
	return b.String()
}

// TimeName returns the name under which file can refer to package time at
// pos, with the edits (none, or one) that import it; ok is false when the
// import cannot be added or the name means something else at pos (a local
// variable named time).
func TimeName(pass *analysis.Pass, file *ast.File, pos token.Pos) (string, []analysis.TextEdit, bool) {
	return PackageName(pass, file, pos, "time")
}

// PackageName is TimeName for any standard package whose name is its
// path's last element ("io", "time").
func PackageName(pass *analysis.Pass, file *ast.File, pos token.Pos, path string) (string, []analysis.TextEdit, bool) {
	name, edits, ok := EnsureImport(file, path, path[strings.LastIndex(path, "/")+1:])
	if !ok {
		return "", nil, false
	}
	// The name must mean the package at pos, not a local variable.
	if scope := pass.Pkg.Scope().Innermost(pos); scope != nil {
		if _, obj := scope.LookupParent(name, pos); obj != nil {
			if _, isPkg := obj.(*types.PkgName); !isPkg {
				return "", nil, false
			}
		}
	}
	return name, edits, true
}

// Field returns lit's "name: value" element, or nil.
func Field(lit *ast.CompositeLit, name string) *ast.KeyValueExpr {
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok && k.Name == name {
				return kv
			}
		}
	}
	return nil
}

// FieldValue returns the value of lit's "name: value" element, or nil.
func FieldValue(lit *ast.CompositeLit, name string) ast.Expr {
	if kv := Field(lit, name); kv != nil {
		return kv.Value
	}
	return nil
}

// AddFields is the edit that adds fields ("Name: value") at the end of a
// keyed composite literal, in its layout: on its one line, or a line per
// field before the closing brace.
func AddFields(fset *token.FileSet, lit *ast.CompositeLit, fields []string) analysis.TextEdit {
	pos := lit.Rbrace
	var text string
	switch {
	case len(lit.Elts) == 0:
		text = strings.Join(fields, ", ")
	case fset.Position(lit.Lbrace).Line == fset.Position(lit.Rbrace).Line:
		text = ", " + strings.Join(fields, ", ")
		pos = lit.Elts[len(lit.Elts)-1].End()
	case fset.Position(lit.Elts[len(lit.Elts)-1].End()).Line == fset.Position(lit.Rbrace).Line:
		// The closing brace ends the last element's line ("})}"):
		// new lines right after that element.
		last := lit.Elts[len(lit.Elts)-1]
		pos = last.End()
		indent := indentOf(fset, last)
		text = ","
		for _, f := range fields {
			text += "\n" + indent + f + ","
		}
		text += "\n"
	default:
		// Multi-line literal: lines before the closing brace's line.
		col := fset.Position(lit.Rbrace).Column
		pos = lit.Rbrace - token.Pos(col-1)
		indent := indentOf(fset, lit.Elts[len(lit.Elts)-1])
		for _, f := range fields {
			text += indent + f + ",\n"
		}
	}
	return analysis.TextEdit{Pos: pos, End: pos, NewText: []byte(text)}
}

// indentOf returns the whitespace before n on its line.
func indentOf(fset *token.FileSet, n ast.Node) string {
	p := fset.Position(n.Pos())
	return strings.Repeat("\t", max(p.Column-1, 0)) // gofmt indents with tabs; Column counts bytes
}
