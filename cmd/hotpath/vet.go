package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hotpathhq/hotpath/vet"
)

// vetOptions are hotpath vet's flags.
type vetOptions struct {
	json, sarif, all, tests, fix, diff bool
	rules, dir                         string
}

// vetFlags returns hotpath vet's flag set, its usage included.
func vetFlags() (*flag.FlagSet, *vetOptions) {
	o := &vetOptions{}
	fs := flag.NewFlagSet("vet", flag.ContinueOnError)
	fs.BoolVar(&o.json, "json", false, "print findings as JSON")
	fs.BoolVar(&o.sarif, "sarif", false, "print findings as SARIF 2.1.0 (for GitHub code scanning)")
	fs.StringVar(&o.rules, "rules", "", "comma-separated rule IDs or names to run (default: all rules on by default); 'list' prints the rules")
	fs.BoolVar(&o.all, "all", false, "run every rule, including those off by default ("+offByDefault()+")")
	fs.BoolVar(&o.tests, "tests", false, "also load _test.go files (rules still skip findings in them; facts from test helpers are used)")
	fs.BoolVar(&o.fix, "fix", false, "apply the suggested fixes (findings marked \"fix available\") to the files, gofmt them, and print the findings left")
	fs.BoolVar(&o.diff, "diff", false, "print the suggested fixes as a unified diff (for git apply or patch -p1) and write nothing")
	fs.StringVar(&o.dir, "C", "", "run as if started in this directory")
	fs.Usage = func() {
		checks := vet.Checks()
		w := fs.Output()
		fmt.Fprintln(w, "Usage: hotpath vet [flags] [packages]\n       hotpath vet rules")
		fmt.Fprintf(w, "\nReports net/http anti-patterns from the optimization catalog (rules %s-%s;\noff by default: %s, which other linters cover: enable with --rules or --all).\n",
			checks[0].Rule.ID, checks[len(checks)-1].Rule.ID, offByDefault())
		fmt.Fprintln(w, "Packages are patterns as for 'go build' (default ./...). 'hotpath vet rules' lists the rules.")
		fmt.Fprintln(w, "Suppress one finding with //nolint:<rule> or //hotpath:ignore <rule> <reason>.")
		fmt.Fprintln(w, "\nExamples:\n  hotpath vet ./...\n  hotpath vet --rules list\n  hotpath vet --rules HP012,read-header-timeout ./cmd/...\n  hotpath vet --diff ./... | git apply\n  hotpath vet --fix ./...\n  hotpath vet --sarif ./... > hotpath.sarif\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(w, "\nExit status: 0 no findings (with --fix: none left), 1 findings, 2 usage or load error.")
	}
	return fs, o
}

// offByDefault names the rules off by default: "HP015 unclosed-body".
func offByDefault() string {
	var off []string
	for _, c := range vet.Checks() {
		if c.Rule.OffByDefault {
			off = append(off, c.Rule.ID+" "+c.Rule.Name)
		}
	}
	return strings.Join(off, ", ")
}

// check reports flags that cannot go together.
func (o *vetOptions) check() error {
	switch {
	case o.json && o.sarif:
		return fmt.Errorf("--json and --sarif are exclusive: pick one output format")
	case (o.fix || o.diff) && (o.json || o.sarif):
		return fmt.Errorf("--fix and --diff print text: drop --json or --sarif")
	case o.all && o.rules != "":
		return fmt.Errorf("--all and --rules are exclusive: --all already runs every rule")
	}
	return nil
}

// vetRun runs the rules for runVet: vet.Run, which a test replaces with
// one that loads each package set once (TestVetCommand).
var vetRun = vet.Run

// runVet is 'hotpath vet [flags] [packages]': it runs the catalog's rules
// over the packages and prints the findings (or, with --fix, applies their
// fixes). Exit 0 clean, 1 findings, 2 usage or load errors.
func runVet(args []string, stdout, stderr io.Writer) int {
	fs, o := vetFlags()
	if _, rc, ok := parseFlags(fs, args, false, stdout, stderr); !ok {
		return rc
	}
	if err := o.check(); err != nil {
		fmt.Fprintf(stderr, "hotpath vet: %v\n", err)
		return 2
	}
	if o.rules == "list" || (o.rules == "" && len(fs.Args()) == 1 && fs.Arg(0) == "rules") {
		for _, c := range vet.Checks() {
			off := ""
			if c.Rule.OffByDefault {
				off = " (off by default)"
			}
			fmt.Fprintf(stdout, "%s  %-20s  %s (catalog %d, lab %s)%s\n", c.Rule.ID, c.Rule.Name, c.Rule.Summary, c.Rule.Exercise, c.Rule.Lab(), off)
		}
		return 0
	}
	var names []string
	if o.rules != "" {
		names = strings.Split(o.rules, ",")
	}
	res, err := vetRun(vet.Config{Dir: o.dir, Patterns: fs.Args(), Rules: names, All: o.all, Tests: o.tests})
	if err != nil {
		// vet's errors start with "vet: ".
		fmt.Fprintln(stderr, "hotpath", err)
		return 2
	}
	if o.fix || o.diff {
		return vetFix(res, o.diff, stdout, stderr)
	}
	switch {
	case o.json:
		err = res.WriteJSON(stdout)
	case o.sarif:
		err = res.WriteSARIF(stdout)
	default:
		err = res.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "hotpath vet: writing output:", err)
		return 2
	}
	if len(res.Findings) > 0 {
		return 1
	}
	return 0
}

// vetFix applies res's fixes (or, with diffOnly, prints them as a diff on
// stdout and the summary on stderr), then lists the findings left: those
// with no fix, and those whose fix conflicted with another (a second run
// applies them). Each file is written once, and none when a fix fails.
func vetFix(res *vet.Result, diffOnly bool, stdout, stderr io.Writer) int {
	fixes, err := res.Fixes()
	if err != nil {
		fmt.Fprintln(stderr, "hotpath", err)
		return 2
	}
	for _, f := range fixes.Files {
		if diffOnly {
			io.WriteString(stdout, f.Diff())
		} else if err := f.Write(); err != nil {
			fmt.Fprintf(stderr, "hotpath vet: writing %s: %v\n", f.File, err)
			return 2
		}
	}
	key := func(f vet.Finding) string { return fmt.Sprintf("%s:%d:%d:%s", f.File, f.Line, f.Column, f.RuleID) }
	applied := map[string]bool{}
	for _, f := range fixes.Applied {
		applied[key(f)] = true
	}
	left := &vet.Result{Checks: res.Checks, Packages: res.Packages}
	for _, f := range res.Findings {
		if !applied[key(f)] {
			left.Findings = append(left.Findings, f)
		}
	}
	verb, out := "applied", stdout
	if diffOnly {
		verb, out = "would apply", stderr
	}
	fmt.Fprintf(out, "%s %d fix(es) to %d file(s)\n", verb, len(fixes.Applied), len(fixes.Files))
	if n := len(fixes.Conflict); n > 0 {
		fmt.Fprintf(out, "%d fix(es) overlap one applied and were left out: run 'hotpath vet --fix' again\n", n)
	}
	if len(left.Findings) > 0 || !diffOnly {
		if err := left.WriteText(out); err != nil {
			fmt.Fprintln(stderr, "hotpath vet: writing output:", err)
			return 2
		}
	}
	if len(left.Findings) > 0 || (diffOnly && len(fixes.Applied) > 0) {
		return 1
	}
	return 0
}
