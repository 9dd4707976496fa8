// Package rule holds what every hotpath vet analyzer shares: the rule's
// identity (a stable ID such as HP012 and a short name such as
// undrained-body), the link to the catalog exercise and lab experiment that
// explain its cost, suppression comments, and the early exit for packages
// that cannot touch net/http.
package rule

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Rule identifies one hotpath vet check.
type Rule struct {
	ID       string // stable rule ID, "HP012"
	Name     string // short name, "undrained-body"
	Exercise int    // seed 000 catalog exercise number, 12
	Summary  string // one line: what is wrong
	Help     string // a paragraph: why it costs, and the fix
	// OffByDefault rules run only when asked for by ID or name (or with
	// every rule, hotpath vet --all): another linter covers them.
	OffByDefault bool
}

// Tag returns the rule's label as findings show it, "[HP012 undrained-body]".
func (r Rule) Tag() string { return "[" + r.ID + " " + r.Name + "]" }

// Lab returns the lab experiment ID that measures the rule's cost, "000-12".
func (r Rule) Lab() string { return fmt.Sprintf("000-%02d", r.Exercise) }

// AnalyzerName returns the go/analysis name: the short name without dashes
// (analyzer names must be Go identifiers), "undrainedbody".
func (r Rule) AnalyzerName() string { return strings.ReplaceAll(r.Name, "-", "") }

// URL returns the rule's documentation anchor in vet/README.md.
func (r Rule) URL() string {
	return "https://github.com/hotpathhq/hotpath/blob/main/vet/README.md#" + strings.ToLower(r.ID) + "-" + r.Name
}

// Doc returns the analyzer documentation: first line the summary, then the
// help text and where to see the cost measured.
func (r Rule) Doc() string {
	return fmt.Sprintf("%s %s: %s\n\n%s\n\nMeasure its cost here: hotpath lab --only %s.\nSuppress one finding with //nolint:%s or //hotpath:ignore %s <reason>.",
		r.ID, r.Name, r.Summary, r.Help, r.Lab(), r.Name, r.ID)
}

// New builds the analyzer for r. run is called only for packages that import
// net/http directly or through their dependencies (the Reach result).
func New(r Rule, run func(*analysis.Pass) error, requires ...*analysis.Analyzer) *analysis.Analyzer {
	return &analysis.Analyzer{
		Name:     r.AnalyzerName(),
		Doc:      r.Doc(),
		URL:      r.URL(),
		Requires: append([]*analysis.Analyzer{Reach}, requires...),
		Run: func(pass *analysis.Pass) (any, error) {
			if !pass.ResultOf[Reach].(bool) {
				return nil, nil
			}
			return nil, run(pass)
		},
	}
}

// Reach is the helper analyzer every rule requires for its early exit: its
// result, a bool, says whether the package reaches net/http. The driver
// computes it once per package and keeps it only as long as it keeps that
// package's other results: there is no cache of our own, so long-lived
// drivers (gopls, golangci-lint) hold no *types.Package through it.
var Reach = &analysis.Analyzer{
	Name:       "hotpathreach",
	Doc:        "reports whether a package is net/http or imports it, directly or through its dependencies (the hotpath rules' early exit)",
	ResultType: reflect.TypeFor[bool](),
	Run:        func(pass *analysis.Pass) (any, error) { return ReachesNetHTTP(pass.Pkg), nil },
}

// ReachesNetHTTP reports whether pkg is net/http or imports it, directly or
// through its dependencies. It walks the import graph each time: use the
// Reach analyzer's result, which is computed once per package.
func ReachesNetHTTP(pkg *types.Package) bool {
	seen := map[*types.Package]bool{}
	var walk func(*types.Package) bool
	walk = func(p *types.Package) bool {
		if p.Path() == "net/http" {
			return true
		}
		if seen[p] {
			return false
		}
		seen[p] = true
		for _, imp := range p.Imports() {
			if walk(imp) {
				return true
			}
		}
		return false
	}
	return walk(pkg)
}

// Report emits a diagnostic for rule r at node n unless a suppression
// comment covers it or n lies in test code (see IsTestCode): the catalog's
// costs matter on hot paths, and tests close bodies early or build
// throwaway servers on purpose. The message starts with r.Tag(), so every
// driver (hotpath vet, go vet -vettool, golangci-lint, gopls) shows which
// rule fired; Category carries the rule ID.
func Report(pass *analysis.Pass, r Rule, n ast.Node, msg string, fixes ...analysis.SuggestedFix) {
	if IsTestCode(pass, n.Pos()) || Suppressed(pass, r, n.Pos()) {
		return
	}
	pass.Report(analysis.Diagnostic{
		Pos:            n.Pos(),
		End:            n.End(),
		Category:       r.ID,
		Message:        r.Tag() + " " + msg,
		URL:            r.URL(),
		SuggestedFixes: fixes,
	})
}

// Suppressed reports whether a //nolint or //hotpath:ignore comment names r
// (by ID, name or analyzer name, or "hotpath"; a bare //nolint names every
// rule) on the line of pos, on the line above it, or in the doc comment of
// the enclosing function.
func Suppressed(pass *analysis.Pass, r Rule, pos token.Pos) bool {
	file := enclosingFile(pass, pos)
	if file == nil {
		return false
	}
	line := pass.Fset.Position(pos).Line
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			cl := pass.Fset.Position(c.Slash).Line
			if (cl == line || cl == line-1) && names(c.Text, r) {
				return true
			}
		}
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Doc == nil || pos < fd.Pos() || pos >= fd.End() {
			continue
		}
		for _, c := range fd.Doc.List {
			if names(c.Text, r) {
				return true
			}
		}
	}
	return false
}

func enclosingFile(pass *analysis.Pass, pos token.Pos) *ast.File {
	for _, f := range pass.Files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// names reports whether comment text suppresses r.
func names(text string, r Rule) bool {
	text = strings.TrimSpace(strings.TrimPrefix(text, "//"))
	var list string
	switch {
	case strings.HasPrefix(text, "hotpath:ignore"):
		list = strings.TrimSpace(strings.TrimPrefix(text, "hotpath:ignore"))
		list, _, _ = strings.Cut(list, " ")
	case text == "nolint" || strings.HasPrefix(text, "nolint "):
		return true
	case strings.HasPrefix(text, "nolint:"):
		list = strings.TrimPrefix(text, "nolint:")
		list, _, _ = strings.Cut(list, " ")
		list, _, _ = strings.Cut(list, "//")
	default:
		return false
	}
	for _, n := range strings.Split(list, ",") {
		switch strings.TrimSpace(n) {
		case r.ID, r.Name, r.AnalyzerName(), "hotpath", "all":
			return true
		}
	}
	return false
}

// IsTestCode reports whether pos lies in test code: a _test.go file, an
// external test package (package p_test), or a package named httptest
// (net/http/httptest and helper packages named after it, whose servers are
// throwaway by design). Packages that merely end in "test", such as latest
// or contest, are production code and are checked.
func IsTestCode(pass *analysis.Pass, pos token.Pos) bool {
	name := pass.Pkg.Name()
	return IsTestFile(pass, pos) || strings.HasSuffix(name, "_test") || name == "httptest"
}

// IsTestFile reports whether pos lies in a _test.go file.
func IsTestFile(pass *analysis.Pass, pos token.Pos) bool {
	return strings.HasSuffix(pass.Fset.Position(pos).Filename, "_test.go")
}
