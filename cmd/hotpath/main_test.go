package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

func TestUsageAndExitCodes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cases := []struct {
		args []string
		code int
		out  string // expected in stdout+stderr
	}{
		{nil, 2, "Usage: hotpath <command>"},
		{[]string{"help"}, 0, "serve"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"serve", "-h"}, 0, "--engine"},
		{[]string{"serve", "--engine", "bogus"}, 2, "use --engine hotpath or --engine nethttp"},
		{[]string{"serve", "extra"}, 2, "unexpected argument"},
		{[]string{"serve", "--api", "bogus"}, 2, "use --api native or --api handler"},
		{[]string{"serve", "--addr", "256.0.0.1:1"}, 1, "cannot listen"},
		{[]string{"serve", "--addr", "bogus"}, 2, "want host:port"},
		{[]string{"serve", "--engine", "nethttp", "--api", "native"}, 2, "--api is for --engine hotpath"},
		{[]string{"serve", "--engine", "nethttp", "--max-body", "-1"}, 2, "--max-body is for --engine hotpath"},
		{[]string{"serve", "--addr", busy.Addr().String()}, 1, "another server is on that port"},
		{[]string{"version"}, 0, "hotpath " + release + " "},
		{[]string{"serve", "--cert", "c.pem"}, 2, "--cert and --key go together"},
		{[]string{"serve", "--h2c", "--tls", "--api", "handler"}, 2, "pick one"},
		{[]string{"serve", "--h2-handoff", "--tls"}, 2, "--h2-handoff hands hotpath's HTTP/2 to net/http's server"},
		{[]string{"serve", "--h2-handoff", "--api", "handler"}, 2, "and --tls or --h2c"},
		{[]string{"lab", "--only", "bogus"}, 2, "hotpath lab: unknown experiment \"bogus\""},
		{[]string{"--version"}, 0, "go1."},
		{[]string{"help", "serve"}, 0, "Usage: hotpath serve"},
		{[]string{"help", "version"}, 0, "Usage: hotpath version"},
		{[]string{"--help", "lab"}, 0, "Usage: hotpath lab"},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		if code := run(tc.args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("hotpath %v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
}

// TestFlagErrorsAreShort: every command answers an unknown flag with the
// error and one line pointing at -h on stderr (exit 2), not its whole
// usage; -h prints the usage on stdout (exit 0).
func TestFlagErrorsAreShort(t *testing.T) {
	for _, cmd := range [][]string{{"serve"}, {"load"}, {"load", "merge"}, {"lab"}, {"vet"}, {"version"}, {"help"}} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string{}, cmd...), "--bogus")
		code := run(args, &stdout, &stderr)
		name := strings.Join(cmd, " ")
		want := "hotpath " + name + ": flag provided but not defined: -bogus\nRun 'hotpath " + name + " -h' for its flags.\n"
		if code != 2 || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("hotpath %s --bogus: exit %d, stderr %q, stdout %q; want 2 and %q", name, code, stderr.String(), stdout.String(), want)
		}
		stdout.Reset()
		stderr.Reset()
		args = append(append([]string{}, cmd...), "-h")
		if code := run(args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Usage: hotpath "+name) || stderr.Len() != 0 {
			t.Errorf("hotpath %s -h: exit %d, stdout %.60q, stderr %q; want 0 and the usage on stdout", name, code, stdout.String(), stderr.String())
		}
	}
}

// TestExtraArgumentsAreUsageErrors: a command that takes no arguments, or
// help given more than a command's name, says so on stderr (exit 2) and
// prints nothing on stdout, rather than succeeding as if they were not
// there ("hotpath version --bogus" printed the version, exit 0).
func TestExtraArgumentsAreUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // on stderr
	}{
		{[]string{"version", "extra"}, `hotpath version: unexpected argument "extra" (it takes none)`},
		{[]string{"--version", "extra"}, `hotpath version: unexpected argument "extra"`},
		{[]string{"-version", "-v"}, "hotpath version: flag provided but not defined: -v"},
		{[]string{"help", "bogus"}, `hotpath help: unknown command "bogus"`},
		{[]string{"-h", "bogus"}, `hotpath help: unknown command "bogus"`},
		{[]string{"help", "serve", "extra"}, `hotpath help: want at most one command, got ["serve" "extra"]`},
		{[]string{"serve", "extra"}, `hotpath serve: unexpected argument "extra"`},
		{[]string{"lab", "extra"}, `hotpath lab: unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
			t.Errorf("hotpath %q: exit %d, stderr %q, stdout %q; want 2 and %q on stderr only", tc.args, code, stderr.String(), stdout.String(), tc.want)
		}
	}
}
