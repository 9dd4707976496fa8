package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/hotpathhq/hotpath/load"
)

// runLoadMerge implements `hotpath load merge`.
func runLoadMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("load merge", flag.ContinueOnError)
	jsonOut := fs.Bool("json", false, "write the merged result as JSON instead of the summary")
	hgrm := fs.String("hgrm", "", "write the merged latency distribution (.hgrm) to `file` (- for stdout)")
	html := fs.String("html", "", "write an HTML report of the merged result to `file`")
	summaryMD := fs.String("summary-md", "", "write a Markdown summary of the merged result to `file`")
	force := fs.Bool("force", false, "merge runs that do not line up (other URLs, start times or durations) anyway, with a warning")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath load merge [flags] RESULT.json...\n\nMerges results of 'hotpath load --json' made at the same time (from several machines)\nexactly: counts add up and histograms merge bucket by bucket.\n\nThe runs must be one load: the same URL, mode, protocol, method, body handling and\nkeep-alive, started at most max(1s, 10% of the duration) apart, with durations as close.\nOtherwise merge refuses (exit 2) and names the difference; --force merges runs that\ndiffer only in URL, start time or duration.\n\nExit codes: 0 merged; 1 a file could not be read or written, or no request of the\nmerged runs succeeded; 2 usage, or runs that do not line up; 3 a threshold of\nthe runs (--threshold) that fails on the merged result.\n\nFlags:")
		fs.PrintDefaults()
	}
	files, rc, ok := parseFlags(fs, args, true, stdout, stderr)
	if !ok {
		return rc
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "hotpath load merge: want one or more result files (from hotpath load --json)")
		return 2
	}
	var runs []*load.Result
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			printErr(stderr, "load merge", "", err)
			return 1
		}
		r, err := load.ReadResult(f)
		f.Close()
		if err != nil {
			printErr(stderr, "load merge", name+": ", err)
			return 1
		}
		runs = append(runs, r)
	}
	res, rc := mergeRuns("load merge", runs, files, *force, "Merge runs made together against one URL; --force merges these anyway.", stderr)
	if res == nil {
		return rc
	}
	if err := writeOutputs(res, *jsonOut, *hgrm, *html, *summaryMD, stdout); err != nil {
		printErr(stderr, "load merge", "", err)
		return 1
	}
	if err := res.Check(); err != nil {
		printErr(stderr, "load merge", "the merged runs failed: ", err)
		return 1
	}
	return thresholdVerdict("load merge", res, stderr)
}

// mergeRuns merges runs (named by names, in the same order) for command
// cmd, as load merge and load collect do: runs that are not one load are
// refused (exit code 2, naming the two inputs and the difference, then
// hint), unless force merges runs that are only misaligned, with a loud
// warning. Other errors are returned as res nil, exit code 1.
func mergeRuns(cmd string, runs []*load.Result, names []string, force bool, hint string, stderr io.Writer) (*load.Result, int) {
	res, err := load.Merge(runs...)
	var me *load.MergeError
	if errors.As(err, &me) && me.Misaligned && force {
		fmt.Fprintf(stderr, "hotpath %s: WARNING (--force): %s and %s are not one load (%s): the merged numbers describe no single moment of load\n", cmd, names[me.Input-1], names[max(me.With, 1)-1], me.Reason)
		res, err = load.MergeMisaligned(runs...)
	}
	if errors.As(err, &me) {
		fmt.Fprintf(stderr, "hotpath %s: %s and %s are not one load: %s\n", cmd, names[me.Input-1], names[max(me.With, 1)-1], me.Reason)
		if me.Misaligned {
			fmt.Fprintln(stderr, hint)
		}
		return nil, 2
	}
	if err != nil {
		printErr(stderr, cmd, "", err)
		return nil, 1
	}
	return res, 0
}
