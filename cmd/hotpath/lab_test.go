package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestLabList(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runLab([]string{"--list"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 20 || !strings.HasPrefix(lines[0], "000-01") {
		t.Errorf("--list printed %d lines, first %q", len(lines), lines[0])
	}
	out.Reset()
	if code := runLab([]string{"--list", "--only", "002"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "002-drain") || strings.Contains(out.String(), "000-01") {
		t.Errorf("--only 002 --list: exit %d, %q", code, out.String())
	}
}

func TestLabUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--only", "999"}, {"--nope"}, {"extra"}} {
		var out, errb bytes.Buffer
		if code := runLab(args, &out, &errb); code != 2 {
			t.Errorf("runLab(%q) = %d, want 2 (stderr %q)", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	runLab([]string{"--only", "999"}, &out, &errb)
	if !strings.Contains(errb.String(), "known:") {
		t.Errorf("unknown ID error does not list the known ones: %q", errb.String())
	}
}
