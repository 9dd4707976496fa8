// Package nethttpsuite runs Go's own net/http tests against hotpath: the
// server tests against hotpath's server, the client tests against
// hotpath's client.Transport.
//
// The tests are not committed here: Generate copies them at test time from
// the installed Go ($GOROOT/src/net/http: serve_test.go,
// clientserver_test.go, sniff_test.go, fs_test.go,
// responsecontroller_test.go and the helpers they share), with
// net/http/httptest and the internal packages they import, into a package
// of this module. One rewrite is made: every http.Server the tests (and
// httptest) start, and the package-level Serve, ServeTLS, ListenAndServe
// and ListenAndServeTLS, become the swap package's, which is
// hotpath's server.Server, or net/http's own when built with the tag
// nethttp. The test bodies stay as Go wrote them, so the same units run on
// both servers, and every difference is one a user could hit after the
// one-line swap.
//
// The client suite (ClientSuite: clientserver_test.go, transport_test.go,
// client_test.go) keeps net/http's servers and swaps the client: every
// *http.Transport the tests and httptest build (and DefaultTransport)
// sends its http:// and https:// requests through a client.Transport made
// by client.FromHTTPTransport from that *http.Transport's fields when the
// request is sent; the *http.Transport itself serves what client.Transport
// hands to its Fallback (registered with RegisterProtocol, which
// net/http's transport consults first, and whose CloseIdleConnections
// reaches ours).
//
// A few test units reach into net/http's internals through its
// export_test.go (hooks, the Transport's connection pool, unexported
// functions). What can be expressed with the public API is provided by a
// shim (shim.go.txt); a test that needs more is left out, and the report
// lists it with the first name it could not resolve.
package nethttpsuite

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// TestFiles are the net/http test files whose server tests run here.
var TestFiles = []string{
	"serve_test.go",
	"clientserver_test.go",
	"sniff_test.go",
	"fs_test.go",
	"responsecontroller_test.go",
}

// helperFiles hold what those files share: TestMain, the run harness's
// helpers, the fake network of the synctest tests.
var helperFiles = []string{
	"main_test.go",
	"netconn_test.go",
}

// ClientTestFiles are the net/http test files whose client tests run here.
var ClientTestFiles = []string{
	"clientserver_test.go",
	"transport_test.go",
	"client_test.go",
}

// Suite says which of net/http's tests a generated package holds and what
// it swaps.
type Suite struct {
	Files  []string // net/http's test files copied
	Client bool     // swap the client (servers stay net/http's), not the server
	// Skip names helper functions (with a parameter t *testing.T) whose
	// body becomes t.Skip(reason): what they test does not apply to the
	// swapped side, on either build.
	Skip map[string]string
}

// The suites.
var (
	ServerSuite = Suite{Files: TestFiles}
	ClientSuite = Suite{Files: ClientTestFiles, Client: true, Skip: map[string]string{
		"runCancelTestTransport": "Transport.CancelRequest: deprecated since Go 1.6 (net/http's says it cannot " +
			"cancel HTTP/2 requests and may become a no-op); client.Transport has none: the request's context " +
			"or Request.Cancel cancels",
	}}
)

// swapped are the net/http names that start a server: each use in the
// copied tests and in httptest becomes the swap package's.
var swapped = []string{"Server", "Serve", "ServeTLS", "ListenAndServe", "ListenAndServeTLS"}

//go:embed shim.go.txt
var shimSource string

//go:embed swap_hotpath.go.txt
var swapHotpath string

//go:embed swap_nethttp.go.txt
var swapNethttp string

//go:embed swap_mapped.go.txt
var swapMapped string

//go:embed swap_mapped_go127.go.txt
var swapMappedGo127 string

//go:embed swap_mapped_go126.go.txt
var swapMappedGo126 string

//go:embed shim_client.go.txt
var shimClientSource string

//go:embed swap_client.go.txt
var swapClient string

//go:embed swap_client_hotpath.go.txt
var swapClientHotpath string

//go:embed swap_client_nethttp.go.txt
var swapClientNethttp string

//go:embed httptest_extra.go.txt
var httptestExtra string

//go:embed testenv.go.txt
var testenvSource string

// Generated describes one generated suite.
type Generated struct {
	Dir       string            // the generated package's directory
	Package   string            // its import path
	Dropped   map[string]string // test or helper left out → the first error that left it out
	ServerRun map[string]bool   // top-level tests that start a server (directly or through a helper)
	Files     []string          // the copied test files
}

// Generate writes the server suite into dir, a new directory inside the
// module whose import path is pkgPath, from goroot's net/http.
func Generate(goroot, dir, pkgPath string) (*Generated, error) {
	return GenerateSuite(ServerSuite, goroot, dir, pkgPath)
}

// GenerateSuite writes suite s into dir, a new directory inside the
// module whose import path is pkgPath, from goroot's net/http.
func GenerateSuite(s Suite, goroot, dir, pkgPath string) (*Generated, error) {
	src := filepath.Join(goroot, "src", "net", "http")
	g := &Generated{Dir: dir, Package: pkgPath, Dropped: map[string]string{}, ServerRun: map[string]bool{}}
	swapPath := pkgPath + "/swap"
	// rewrite makes f start the swapped servers, and, in the client
	// suite, send through the swapped transports.
	rewrite := func(f *ast.File, shim map[string]bool) {
		rewriteSwapped(f, swapPath, shim)
		if s.Client {
			rewriteTransports(f, swapPath)
		}
	}

	// Support packages: httptest, its test certificate, the chunked
	// writer the tests use, a testenv with what the tests call.
	if err := copyPackage(filepath.Join(src, "httptest"), filepath.Join(dir, "httptest"), map[string]string{
		"net/http/internal/testcert": pkgPath + "/testcert",
		"internal/nettest":           pkgPath + "/nettest",
	}, func(f *ast.File) { rewrite(f, nil) }); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "httptest", "conns_by_state.go"), httptestExtra); err != nil {
		return nil, err
	}
	if err := copyPackage(filepath.Join(src, "internal", "testcert"), filepath.Join(dir, "testcert"), nil, nil); err != nil {
		return nil, err
	}
	if err := copyPackage(filepath.Join(src, "internal"), filepath.Join(dir, "internal"), nil, nil); err != nil {
		return nil, err
	}
	// Go 1.27's httptest and tests use Go's internal fake network
	// (internal/nettest, on internal/gate): copied too where they exist.
	internals := map[string]string{}
	for _, p := range []string{"gate", "nettest"} {
		from := filepath.Join(goroot, "src", "internal", p)
		if _, err := os.Stat(from); err != nil {
			continue
		}
		internals["internal/"+p] = pkgPath + "/" + p
	}
	for p, to := range internals {
		if err := copyPackage(filepath.Join(goroot, "src", p), filepath.Join(dir, filepath.Base(to)), internals, nil); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(dir, "testenv", "testenv.go"), testenvSource); err != nil {
		return nil, err
	}
	swaps := map[string]string{"swap_hotpath.go": swapHotpath, "swap_nethttp.go": swapNethttp, "swap_mapped.go": swapMapped,
		"swap_mapped_go127.go": swapMappedGo127, "swap_mapped_go126.go": swapMappedGo126}
	if s.Client {
		swaps = map[string]string{"swap.go": swapClient, "swap_hotpath.go": swapClientHotpath, "swap_nethttp.go": swapClientNethttp}
	}
	for name, content := range swaps {
		if err := writeFile(filepath.Join(dir, "swap", name), content); err != nil {
			return nil, err
		}
	}
	// fs_test.go serves files from testdata/.
	if err := os.CopyFS(filepath.Join(dir, "testdata"), os.DirFS(filepath.Join(src, "testdata"))); err != nil {
		return nil, err
	}

	imports := map[string]string{
		"net/http/httptest":          pkgPath + "/httptest",
		"net/http/internal/testcert": pkgPath + "/testcert",
		"net/http/internal":          pkgPath + "/internal",
		"internal/testenv":           pkgPath + "/testenv",
		"internal/synctest":          "testing/synctest",
		"internal/nettest":           pkgPath + "/nettest",
	}
	shimNames := declaredNames(shimSource)
	if s.Client {
		maps.Copy(shimNames, declaredNames(shimClientSource))
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range append(slices.Clone(s.Files), helperFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(src, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		f.Name.Name = "suite"
		stubLinknamed(f)
		skipBodies(f, s.Skip)
		rewriteImports(f, imports)
		rewrite(f, shimNames)
		files[name] = f
		g.Files = append(g.Files, name)
	}
	shim := strings.ReplaceAll(shimSource, "SWAP_PATH", swapPath)
	shim = strings.ReplaceAll(shim, "HTTPTEST_PATH", pkgPath+"/httptest")
	if err := writeFile(filepath.Join(dir, "shim_test.go"), shim); err != nil {
		return nil, err
	}
	if s.Client {
		shim := strings.ReplaceAll(shimClientSource, "SWAP_PATH", swapPath)
		if err := writeFile(filepath.Join(dir, "shim_client_test.go"), shim); err != nil {
			return nil, err
		}
	}
	if err := writeFile(filepath.Join(dir, "doc.go"), "// Package suite is generated by internal/nethttpsuite: net/http's server tests.\npackage suite\n"); err != nil {
		return nil, err
	}

	lib, err := newHelperLibrary(src, append(slices.Clone(s.Files), helperFiles...), imports, func(f *ast.File) { rewrite(f, shimNames) })
	if err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, helpersFile), lib.source()); err != nil {
		return nil, err
	}
	files[helpersFile] = nil

	// Leave out what does not compile outside net/http, until all does.
	imp := importer.ForCompiler(token.NewFileSet(), "source", nil).(types.ImporterFrom)
	for round := 0; ; round++ {
		if err := writeFiles(fset, dir, files); err != nil {
			return nil, err
		}
		// Check what was written: positions are the files' as printed.
		errs, parsed, err := typeErrors(dir, imp)
		if err != nil {
			return nil, err
		}
		fset = parsed.fset
		for name := range files {
			files[name] = parsed.files[name]
		}
		if len(errs) == 0 {
			break
		}
		if round == 30 {
			return nil, fmt.Errorf("nethttpsuite: still %d type errors after %d rounds, first: %v", len(errs), round, errs[0])
		}
		// A helper another of net/http's test files declares is copied
		// in; what remains undefined leaves out what uses it.
		progress := false
		if lib.resolve(errs) {
			progress = true
			files[helpersFile] = nil // rewritten from lib next round
			if err := writeFile(filepath.Join(dir, helpersFile), lib.source()); err != nil {
				return nil, err
			}
			continue
		}
		for _, e := range errs {
			name := filepath.Base(e.pos.Filename)
			f := files[name]
			if f == nil {
				return nil, fmt.Errorf("nethttpsuite: error outside the copied tests: %v", e)
			}
			if dropAt(fset, f, e, g.Dropped) {
				progress = true
			}
			if name == helpersFile {
				lib.forget(g.Dropped)
			}
		}
		if !progress {
			return nil, fmt.Errorf("nethttpsuite: cannot resolve %v", errs[0])
		}
	}
	g.serverTests(files)
	return g, nil
}

// serverTests finds the top-level tests that start a server: those that
// reach, directly or through package-level helpers, a swapped name or
// httptest's server constructors.
func (g *Generated) serverTests(files map[string]*ast.File) {
	refs := map[string]map[string]bool{} // function → names it uses
	starts := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			// A method is known by its name alone: a test that calls
			// any method of that name counts as reaching it.
			uses := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					uses[n.Name] = true
				case *ast.SelectorExpr:
					if id, ok := n.X.(*ast.Ident); ok && (id.Name == "swap" || id.Name == "httptest" && strings.Contains(n.Sel.Name, "Server")) {
						starts[fd.Name.Name] = true
					}
				}
				return true
			})
			refs[fd.Name.Name] = uses
		}
	}
	for changed := true; changed; {
		changed = false
		for fn, uses := range refs {
			if starts[fn] {
				continue
			}
			for u := range uses {
				if starts[u] {
					starts[fn] = true
					changed = true
					break
				}
			}
		}
	}
	for fn := range refs {
		if strings.HasPrefix(fn, "Test") && fn != "TestMain" && starts[fn] {
			g.ServerRun[fn] = true
		}
	}
}

func writeFiles(fset *token.FileSet, dir string, files map[string]*ast.File) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if files[n] == nil {
			continue
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, files[n]); err != nil {
			return fmt.Errorf("nethttpsuite: printing %s: %w", n, err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// copyPackage copies the non-test Go files of a package, rewriting its
// imports, and then each file with rewrite when it is set (httptest: its
// servers, and in the client suite its transports).
func copyPackage(from, to string, imports map[string]string, rewrite func(*ast.File)) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(from, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rewriteImports(f, imports)
		if rewrite != nil {
			rewrite(f)
		}
		var b bytes.Buffer
		if err := format.Node(&b, fset, f); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(to, e.Name()), b.String()); err != nil {
			return err
		}
	}
	return nil
}
