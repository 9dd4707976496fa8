package vet

import (
	"errors"
	"fmt"
	"go/token"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// Config says what to analyze and how.
type Config struct {
	Dir      string   // directory to load from ("" = current)
	Patterns []string // package patterns, as for go build ("./..." when empty)
	Rules    []string // rule IDs or names to run (all on by default when empty)
	All      bool     // run every rule, those off by default too (Rules is ignored)
	Tests    bool     // also analyze _test.go files and test packages
}

// Finding is one diagnostic.
type Finding struct {
	RuleID  string `json:"rule_id"`
	Rule    string `json:"rule"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
	Fixable bool   `json:"fixable,omitempty"` // a suggested fix exists: hotpath vet --fix applies it
	Help    string `json:"help_uri"`

	fix []edit // the first suggested fix, when it can be applied (Result.Fixes)
}

// Result is the outcome of one run.
type Result struct {
	Findings []Finding
	Checks   []Check // the rules that ran
	Packages int     // packages analyzed

	dir string // Config.Dir, for file names in fixes
}

// Run loads the packages and runs the selected rules. An error means the
// rules could not run (bad rule name, packages that do not load); findings
// are not errors.
func Run(cfg Config) (*Result, error) {
	checks, err := Select(cfg.Rules)
	if err != nil {
		return nil, err
	}
	if cfg.All {
		checks = Checks()
	}
	patterns := cfg.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	lcfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: cfg.Dir, Tests: cfg.Tests}
	pkgs, err := packages.Load(lcfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("vet: loading %s: %w", strings.Join(patterns, " "), err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("vet: no packages match %s", strings.Join(patterns, " "))
	}
	var loadErrs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			loadErrs = append(loadErrs, e.Error())
		}
	})
	if len(loadErrs) > 0 {
		if len(loadErrs) > 10 {
			loadErrs = append(loadErrs[:10], fmt.Sprintf("... and %d more", len(loadErrs)-10))
		}
		return nil, errors.New("vet: packages do not load (fix the build first):\n\t" + strings.Join(loadErrs, "\n\t"))
	}
	var as []*analysis.Analyzer
	byName := map[string]Check{}
	for _, c := range checks {
		as = append(as, c.Analyzer)
		byName[c.Analyzer.Name] = c
	}
	g, err := checker.Analyze(as, pkgs, nil)
	if err != nil {
		return nil, fmt.Errorf("vet: %w", err)
	}
	res := &Result{Checks: checks, Packages: len(pkgs), dir: cfg.Dir}
	seen := map[string]bool{} // test variants repeat a package's files
	for act := range g.All() {
		if !act.IsRoot {
			continue
		}
		if act.Err != nil {
			return nil, fmt.Errorf("vet: %s on %s: %w", act.Analyzer.Name, act.Package.PkgPath, act.Err)
		}
		c, ok := byName[act.Analyzer.Name]
		if !ok {
			continue
		}
		for _, d := range act.Diagnostics {
			f := finding(act.Package.Fset, cfg.Dir, c.Rule, d)
			f.fix = fixEdits(act.Package.Fset, act.Package.Syntax, d)
			f.Fixable = len(f.fix) > 0
			key := fmt.Sprintf("%s:%d:%d:%s", f.File, f.Line, f.Column, f.RuleID)
			if !seen[key] {
				seen[key] = true
				res.Findings = append(res.Findings, f)
			}
		}
	}
	sort.Slice(res.Findings, func(i, j int) bool {
		a, b := res.Findings[i], res.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return a.RuleID < b.RuleID
	})
	return res, nil
}

func finding(fset *token.FileSet, dir string, r Rule, d analysis.Diagnostic) Finding {
	p := fset.Position(d.Pos)
	return Finding{
		RuleID:  r.ID,
		Rule:    r.Name,
		File:    relPath(dir, p.Filename),
		Line:    p.Line,
		Column:  p.Column,
		Message: strings.TrimPrefix(d.Message, r.Tag()+" "), // WriteText adds it back
		Help:    r.URL(),
	}
}

// relPath makes file relative to dir (or the working directory) when it
// lies below it, so reports are stable across checkouts.
func relPath(dir, file string) string {
	base, err := filepath.Abs(dir)
	if err != nil {
		return file
	}
	rel, err := filepath.Rel(base, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}
