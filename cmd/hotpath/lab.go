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

	"github.com/hotpathhq/hotpath/lab"
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
	quick := fs.Bool("quick", false, "short runs: the whole lab in about 1.5 minutes on 2 cores (default: the full budget, about 6 minutes)")
	out := fs.String("out", "lab-report", "directory for index.html, report.md and results.json")
	only := fs.String("only", "", "comma-separated experiment IDs or seeds to run (e.g. 000-01,002-drain or 003)")
	list := fs.Bool("list", false, "list the experiments and exit")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath lab [--quick] [--out DIR] [--only ID,...] [--list]")
		fmt.Fprintln(fs.Output(), "\nReproduces every performance claim of hotpath's seeds on this machine and")
		fmt.Fprintln(fs.Output(), "writes a report with the measured ratio next to the claimed one and a verdict.")
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
		for _, e := range exps {
			fmt.Fprintf(stdout, "%-18s seed %s  %s\n", e.ID, e.Seed, e.Title)
		}
		return 0
	}
	budget := lab.Full
	if *quick {
		budget = lab.Quick
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "hotpath lab: cannot create the output directory: %v (choose another with --out)\n", err)
		return 1
	}
	opt := lab.Options{Budget: budget, Progress: stderr}
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
	counts := map[lab.Verdict]int{}
	for _, r := range rep.Results {
		counts[r.Verdict]++
	}
	fmt.Fprintf(stdout, "%d experiments in %s: %d confirmed, %d partly, %d refuted, %d not reproducible here\n",
		len(rep.Results), rep.Duration.Round(1e9), counts[lab.Confirmed], counts[lab.Partly], counts[lab.Refuted], counts[lab.NotReproducible])
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "index.html"))
	if ctx.Err() != nil {
		return 1
	}
	return 0
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
