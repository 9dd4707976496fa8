package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/hotpathhq/hotpath/internal/lab"
)

// runLab is 'hotpath lab': it runs the seeds' experiments on this machine
// and writes index.html, report.md and results.json.
func runLab(args []string, stdout, stderr io.Writer) int {
	if kind := os.Getenv(lab.ChildEnv); kind != "" { // started by a lab run as its server
		if err := lab.ServeChild(kind, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(stderr, "hotpath lab (child):", err)
			return 1
		}
		return 0
	}
	fs := flag.NewFlagSet("lab", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "short runs: the whole lab in about 2 minutes on 2 cores (default: the full budget, about 6 to 8 minutes)")
	out := fs.String("out", "lab-report", "directory for index.html, report.md and results.json")
	only := fs.String("only", "", "comma-separated experiment IDs or seeds to run (e.g. 000-01,002-drain or 003)")
	list := fs.Bool("list", false, "list the seed articles and their experiments, and exit")
	runs := fs.Int("runs", 0, "runs per arm (default: the budget's, 6 quick, 10 full); more runs narrow the confidence intervals")
	maxRuns := fs.Int("max-runs", 0, "when a claim is inconclusive, add runs up to this many per arm while the budget's extra time lasts (default: twice the runs; equal to --runs: never add)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath lab [--quick] [--runs N] [--max-runs M] [--out DIR] [--only ID,...] [--list]")
		fmt.Fprintln(fs.Output(), "\nReproduces every performance claim of hotpath's seeds on this machine and")
		fmt.Fprintln(fs.Output(), "writes a report with the measured ratio next to the claimed one and a verdict:")
		fmt.Fprintln(fs.Output(), "confirmed, smaller than claimed, larger than claimed, no effect here (under 10%,")
		fmt.Fprintln(fs.Output(), "either way), opposite (10% or more the other way), inconclusive (more runs")
		fmt.Fprintln(fs.Output(), "needed) or not reproducible here; the report states the rule.")
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\nExample:\n  hotpath lab --quick --out /tmp/lab && xdg-open /tmp/lab/index.html")
	}
	if _, rc, ok := parseFlags(fs, args, false, stdout, stderr); !ok {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hotpath lab: unexpected argument %q (flags only; see -h)\n", fs.Arg(0))
		return 2
	}
	var ids []string
	if *only != "" {
		ids = strings.Split(*only, ",")
	}
	exps, err := lab.Select(ids)
	if err != nil {
		printErr(stderr, "lab", "", err)
		return 2
	}
	if *list {
		printLabList(stdout, exps)
		return 0
	}
	if *runs < 0 || *maxRuns < 0 || (*runs == 1 && *maxRuns <= 1) {
		fmt.Fprintln(stderr, "hotpath lab: --runs and --max-runs need at least 2 runs (a ratio from one run has no interval)")
		return 2
	}
	budget := lab.Full
	if *quick {
		budget = lab.Quick
	}
	if *runs > 0 {
		budget.Runs = *runs
		budget.MaxRuns = 2 * *runs
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "hotpath lab: cannot create the output directory: %v (choose another with --out)\n", err)
		return 1
	}
	opt := lab.Options{Budget: budget, MaxRuns: *maxRuns, Progress: stderr}
	if exe, err := os.Executable(); err == nil {
		opt.ChildCmd = []string{exe, "lab"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "hotpath lab: %d experiments, %s budget; writing to %s\n", len(exps), budget.Name, *out)
	rep := lab.Run(ctx, exps, opt)
	writers := []struct {
		name  string
		write func(io.Writer, *lab.Report) error
	}{{"results.json", lab.WriteJSON}, {"report.md", lab.WriteMarkdown}, {"index.html", lab.WriteHTML}}
	for _, w := range writers {
		if err := writeLabFile(filepath.Join(*out, w.name), rep, w.write); err != nil {
			printErr(stderr, "lab", "", err)
			return 1
		}
	}
	exps2, claims := rep.Counts()
	fmt.Fprintf(stdout, "%d experiments in %s: %s\n", len(rep.Results), rep.Duration.Round(1e9), lab.CountsText(exps2, lab.ExperimentVerdicts))
	fmt.Fprintf(stdout, "claims: %s\n", lab.CountsText(claims, lab.ClaimVerdicts))
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "index.html"))
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

// printLabList prints each seed article (title, byline, its claim) and
// its experiments.
func printLabList(w io.Writer, exps []*lab.Experiment) {
	for _, s := range lab.Sources {
		var mine []*lab.Experiment
		for _, e := range exps {
			if e.Seed == s.Seed {
				mine = append(mine, e)
			}
		}
		if len(mine) == 0 {
			continue
		}
		fmt.Fprintf(w, "seed %s: %q (%s)\n", s.Seed, s.Title, s.Byline())
		if s.URL != "" {
			fmt.Fprintf(w, "  %s\n", s.URL)
		}
		if s.Code != "" {
			fmt.Fprintf(w, "  code: %s\n", s.Code)
		}
		fmt.Fprintf(w, "  claim: “%s”\n", s.Claim)
		for _, e := range mine {
			fmt.Fprintf(w, "  %-18s %s\n", e.ID, e.Title)
		}
	}
	for _, e := range exps { // an experiment whose seed has no source entry (a bug TestEverySeedHasASource catches)
		if _, ok := lab.SourceOf(e.Seed); !ok {
			fmt.Fprintf(w, "%-18s seed %s  %s\n", e.ID, e.Seed, e.Title)
		}
	}
}

func writeLabFile(path string, rep *lab.Report, write func(io.Writer, *lab.Report) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f, rep); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
