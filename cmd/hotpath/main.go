// Command hotpath is the hotpath toolkit's command line.
//
//	hotpath serve   run the demo endpoints on hotpath's engine or net/http
//	hotpath lab     reproduce every claim of the seeds here, with verdicts and a report
//	hotpath load    generate load and measure latency honestly (see package load)
//	hotpath vet     find the catalog's net/http anti-patterns in Go code (see package vet)
//	hotpath version print the version, commit and Go version it was built from
//
// Install it with
//
//	go install github.com/hotpathhq/hotpath/cmd/hotpath@latest
//
// Exit codes: 0 success, 1 failure, 2 usage error.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

// command is one subcommand: its name, a one-line summary and its entry
// point, which gets the arguments after the name and returns an exit code.
type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"serve", "serve the demo endpoints (/, /json, /bytes/{n}, /echo, /delay/{ms})", runServe},
	{"load", "generate HTTP load with honest (coordinated-omission-corrected) latency", runLoad},
	{"lab", "reproduce the seeds' claims on this machine and write a report", runLab},
	{"vet", "report net/http anti-patterns of the optimization catalog in Go packages", runVet},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "hotpath: fast, safe HTTP for Go, and the numbers to prove it.")
	fmt.Fprintln(w, "\nUsage: hotpath <command> [flags]\n\nCommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-8s %s\n", "version", "print hotpath's version, commit and Go version")
	fmt.Fprintln(w, "\nRun 'hotpath <command> -h' or 'hotpath help <command>' for a command's flags and an example.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return runHelp(args[1:], stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(args[1:], stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hotpath: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// runHelp prints the commands, or with a command's name its usage, as
// that command's -h does. Anything else is a usage error: a typo'd flag
// or a second name would otherwise look like a help that worked.
func runHelp(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("help", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath help [command]\n\nWithout a command, lists the commands; with one, prints its flags and an example, as 'hotpath <command> -h' does.")
	}
	pos, rc, ok := parseFlags(fs, args, false, stdout, stderr)
	switch {
	case !ok:
		return rc
	case len(pos) == 0:
		usage(stdout)
		return 0
	case len(pos) > 1:
		fmt.Fprintf(stderr, "hotpath help: want at most one command, got %q\nRun 'hotpath help -h' for its usage.\n", pos)
		return 2
	case pos[0] == "help":
		fs.SetOutput(stdout)
		fs.Usage()
		return 0
	case pos[0] == "version":
		return runVersion([]string{"-h"}, stdout, stderr)
	}
	for _, c := range commands {
		if c.name == pos[0] {
			return c.run([]string{"-h"}, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hotpath help: unknown command %q\n\n", pos[0])
	usage(stderr)
	return 2
}

// runVersion prints version(). It takes no flags and no arguments, and
// says so rather than ignoring them.
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath version\n\nPrints hotpath's release (and its module version when that says something else), the commit it was built from (when built in a git checkout) and the Go version and platform, on one line. It takes no flags.")
	}
	if _, rc, ok := parseFlags(fs, args, false, stdout, stderr); !ok {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hotpath version: unexpected argument %q (it takes none)\n", fs.Arg(0))
		return 2
	}
	fmt.Fprintln(stdout, version())
	return 0
}

// release is the hotpath release this source is: the newest version in
// CHANGELOG.md (TestReleaseIsTheChangelogs), raised when a release is cut.
const release = "v0.1.0"

// version describes this binary: the release, the module version when it
// says something else (a pseudo-version after the release, say; "(devel)"
// for a build from a checkout says nothing), the commit and its time when
// built inside a git checkout, and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "hotpath " + release + " (no build information) " + runtime.Version()
	}
	v := "hotpath " + release
	if mv := bi.Main.Version; mv != release && mv != "(devel)" && mv != "" {
		v += " module " + mv
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " commit " + rev[:min(12, len(rev))]
		if t := settings["vcs.time"]; t != "" {
			v += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			v += " with local changes"
		}
	}
	return v + " " + bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}
