package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestUsageAndExitCodes(t *testing.T) {
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
	}
	for _, tc := range cases {
		var out bytes.Buffer
		if code := run(tc.args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("hotpath %v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
}
