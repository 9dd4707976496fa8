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
	if len(lines) < 30 || !strings.HasPrefix(lines[0], `seed 000: "net/http — Optimization" (author, date and URL not printed)`) || !strings.HasPrefix(strings.TrimSpace(lines[2]), "000-01") {
		t.Errorf("--list printed %d lines, first %q", len(lines), lines[:3])
	}
	for _, want := range []string{`seed 003: "Go HTTP Clients: net/http vs The Fast Ones" (2025-10-08; author and URL not printed)`, "code: https://github.com/pessolato/httpmicrobench", "claim: “Result? 85KB (from 48MB)", "Nov 28, 2014"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--list lacks %q", want)
		}
	}
	out.Reset()
	if code := runLab([]string{"--list", "--only", "002"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "002-drain") || strings.Contains(out.String(), "000-01") {
		t.Errorf("--only 002 --list: exit %d, %q", code, out.String())
	}
}

func TestLabUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"--only", "999"}, {"--nope"}, {"extra"}, {"--runs", "-1"}, {"--runs", "1"}, {"--runs", "x"}} {
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
