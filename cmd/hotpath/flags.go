package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// parseFlags parses a command's flags the same way for every command:
// -h prints the command's usage to stdout (exit 0); a bad flag prints the
// error and one line pointing at -h to stderr (exit 2), not the whole
// usage. With interleaved, flags may also follow the positional arguments
// ("URL -c 10" as well as "-c 10 URL"). It returns the positional
// arguments, or ok false and the exit code when the command must stop.
func parseFlags(fs *flag.FlagSet, args []string, interleaved bool, stdout, stderr io.Writer) (pos []string, rc int, ok bool) {
	fs.SetOutput(io.Discard) // the flag package would print the whole usage on every error
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, 0, false
		}
		if err != nil {
			fmt.Fprintf(stderr, "hotpath %s: %v\nRun 'hotpath %s -h' for its flags.\n", fs.Name(), err, fs.Name())
			return nil, 2, false
		}
		fs.SetOutput(stderr)
		args = fs.Args()
		if !interleaved || len(args) == 0 {
			return append(pos, args...), 0, true
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// printErr prints err for command cmd ("lab", "load merge") after
// prefix. A package's errors start with its name ("load: ", "lab: "),
// which the command's name already says: it is dropped rather than
// printed twice.
func printErr(w io.Writer, cmd, prefix string, err error) {
	pkg, _, _ := strings.Cut(cmd, " ")
	fmt.Fprintf(w, "hotpath %s: %s%s\n", cmd, prefix, strings.TrimPrefix(err.Error(), pkg+": "))
}
