// Command hotpath is the hotpath toolkit's command line.
//
//	hotpath serve   run the demo endpoints on hotpath's engine or net/http
//	hotpath lab     reproduce every claim of the seeds here, with verdicts and a report
//	hotpath load    generate load and measure latency honestly (see package load)
//	hotpath vet     find the catalog's net/http anti-patterns in Go code (see package vet)
//
// Exit codes: 0 success, 1 failure, 2 usage error.
package main

import (
	"fmt"
	"io"
	"os"
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
	fmt.Fprintln(w, "\nRun 'hotpath <command> -h' for a command's flags and an example.")
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
		usage(stdout)
		return 0
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
