package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The server's tests start their servers through the mode matrix
// (server/modes_test.go: runModes and mode.serve, in the manner of
// net/http's run(t, f, modes)), so each behaviour runs on every protocol
// and API it applies to. A test that starts a server otherwise says why
// in its doc comment, on a line that begins "Modes:" (for instance
// "Modes: HTTP/1.1 only: it writes raw request bytes."). (The 193 tests
// that started their servers otherwise before the rule have all moved
// onto the matrix or gained their reason, issue 39.)

// serverStarters are the calls that start a server outside the matrix:
// the test helpers that listen (server_test.go, tls_test.go), net.Listen
// and httptest's servers.
var serverStarters = map[string]bool{
	"startServer": true, "startTLS": true, "serveOn": true, "serveTLSOn": true,
	"net.Listen": true, "httptest.NewServer": true, "httptest.NewUnstartedServer": true,
	"httptest.NewTLSServer": true,
}

// TestServerTestsStartOnTheMatrix fails for a server test (a TestXxx in
// server/*_test.go) that starts a server outside the mode matrix,
// directly or through a helper of the test files, without a "Modes:"
// reason.
func TestServerTestsStartOnTheMatrix(t *testing.T) {
	outside, reasoned, total := serverTestsOutsideMatrix(t)
	for _, name := range outside {
		if !reasoned[name] {
			t.Errorf("server test %s starts a server outside the mode matrix (runModes, mode.serve): run it on the matrix, or say why not on a doc-comment line that begins \"Modes:\"", name)
		}
	}
	t.Logf("server tests: %d; starting a server outside the matrix: %d, each with its written reason", total, len(outside))
}

// serverTestsOutsideMatrix parses server/*_test.go and returns the tests
// that reach a server starter through the test files' own functions
// (mode.serve and runModes are the matrix: not followed), which of them
// have a "Modes:" reason, and how many tests there are.
func serverTestsOutsideMatrix(t *testing.T) (outside []string, reasoned map[string]bool, total int) {
	dir := filepath.Join(moduleRoot(t), "server")
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{} // top-level functions of the test files, by name
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	memo := map[string]bool{}
	var starts func(name string, seen map[string]bool) bool
	starts = func(name string, seen map[string]bool) bool {
		if v, ok := memo[name]; ok {
			return v
		}
		fd := funcs[name]
		if fd == nil || fd.Body == nil || seen[name] || name == "runModes" {
			return false
		}
		seen[name] = true
		found := false
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || found {
				return !found
			}
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				found = serverStarters[fn.Name] || starts(fn.Name, seen)
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok {
					found = serverStarters[x.Name+"."+fn.Sel.Name]
				}
			}
			return !found
		})
		memo[name] = found
		return found
	}
	reasoned = map[string]bool{}
	for name, fd := range funcs {
		if !strings.HasPrefix(name, "Test") || fd.Type.Params.NumFields() != 1 {
			continue
		}
		total++
		if !starts(name, map[string]bool{}) {
			continue
		}
		outside = append(outside, name)
		if fd.Doc != nil {
			for _, c := range fd.Doc.List {
				if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), "Modes:") {
					reasoned[name] = true
				}
			}
		}
	}
	sort.Strings(outside)
	return outside, reasoned, total
}
