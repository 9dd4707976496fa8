// Package fix holds small helpers for building suggested fixes: finding the
// name a file imports a package under, and adding an import.
package fix

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/token"
	"strconv"

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
// edits (none, or one adding the import) that make it valid. ok is false when
// the import cannot be added safely (no parenthesized import block and other
// imports present, or the name is taken).
func EnsureImport(file *ast.File, path, name string) (string, []analysis.TextEdit, bool) {
	if n := ImportName(file, path); n != "" {
		return n, nil, true
	}
	if file.Scope != nil && file.Scope.Lookup(name) != nil {
		return "", nil, false
	}
	for _, d := range file.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		for _, s := range gd.Specs {
			if s.(*ast.ImportSpec).Name != nil && s.(*ast.ImportSpec).Name.Name == name {
				return "", nil, false
			}
		}
		if !gd.Lparen.IsValid() {
			return "", nil, false
		}
		return name, []analysis.TextEdit{{Pos: gd.Lparen + 1, End: gd.Lparen + 1, NewText: []byte("\n\t" + strconv.Quote(path))}}, true
	}
	return name, []analysis.TextEdit{{Pos: file.Name.End(), End: file.Name.End(), NewText: []byte("\n\nimport " + strconv.Quote(path))}}, true
}

// Source prints a node back as Go source.
func Source(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := format.Node(&b, fset, n); err != nil {
		return ""
	}
	return b.String()
}
