package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/hotpathhq/hotpath/vet"
)

// runVet is 'hotpath vet [flags] [packages]': it runs the catalog's rules
// over the packages and prints the findings. Exit 0 clean, 1 findings, 2
// usage or load errors.
func runVet(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("vet", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print findings as JSON")
	asSARIF := fs.Bool("sarif", false, "print findings as SARIF 2.1.0 (for GitHub code scanning)")
	rules := fs.String("rules", "", "comma-separated rule IDs or names to run (default: all rules on by default); 'list' prints the rules")
	all := fs.Bool("all", false, "run every rule, including those off by default (HP015 unclosed-body)")
	tests := fs.Bool("tests", false, "also load _test.go files (rules still skip findings in them; facts from test helpers are used)")
	dir := fs.String("C", "", "run as if started in this directory")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath vet [flags] [packages]")
		fmt.Fprintln(fs.Output(), "\nReports net/http anti-patterns from the optimization catalog (rules HP001-HP015;\nHP015 is off by default: bodyclose covers it; enable it with --rules HP015 or --all).")
		fmt.Fprintln(fs.Output(), "Packages are patterns as for 'go build' (default ./...).")
		fmt.Fprintln(fs.Output(), "Suppress one finding with //nolint:<rule> or //hotpath:ignore <rule> <reason>.")
		fmt.Fprintln(fs.Output(), "\nExamples:\n  hotpath vet ./...\n  hotpath vet --rules HP012,read-header-timeout ./cmd/...\n  hotpath vet --sarif ./... > hotpath.sarif\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nExit status: 0 no findings, 1 findings, 2 usage or load error.")
	}
	if _, rc, ok := parseFlags(fs, args, false, stdout, stderr); !ok {
		return rc
	}
	if *asJSON && *asSARIF {
		fmt.Fprintln(stderr, "hotpath vet: --json and --sarif are exclusive: pick one output format")
		return 2
	}
	if *rules == "list" {
		for _, c := range vet.Checks() {
			off := ""
			if c.Rule.OffByDefault {
				off = " (off by default)"
			}
			fmt.Fprintf(stdout, "%s  %-20s  %s (catalog %d, lab %s)%s\n", c.Rule.ID, c.Rule.Name, c.Rule.Summary, c.Rule.Exercise, c.Rule.Lab(), off)
		}
		return 0
	}
	if *all && *rules != "" {
		fmt.Fprintln(stderr, "hotpath vet: --all and --rules are exclusive: --all already runs every rule")
		return 2
	}
	var names []string
	if *rules != "" {
		names = strings.Split(*rules, ",")
	}
	res, err := vet.Run(vet.Config{Dir: *dir, Patterns: fs.Args(), Rules: names, All: *all, Tests: *tests})
	if err != nil {
		fmt.Fprintln(stderr, "hotpath", err)
		return 2
	}
	switch {
	case *asJSON:
		err = res.WriteJSON(stdout)
	case *asSARIF:
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
