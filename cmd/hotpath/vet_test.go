package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestVetCommand(t *testing.T) {
	demo := "../../vet/testdata/demo"
	var out, errb bytes.Buffer
	if code := runVet([]string{"-C", demo, "./..."}, &out, &errb); code != 1 {
		t.Fatalf("exit %d with findings, want 1; stderr: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "[HP012 undrained-body]") || !strings.Contains(out.String(), "[HP013 read-header-timeout]") {
		t.Errorf("output:\n%s", out.String())
	}

	out.Reset()
	if code := runVet([]string{"--sarif", "-C", demo}, &out, &errb); code != 1 {
		t.Fatalf("--sarif exit %d", code)
	}
	var sarif struct{ Version string }
	if err := json.Unmarshal(out.Bytes(), &sarif); err != nil || sarif.Version != "2.1.0" {
		t.Errorf("--sarif output (err %v): %.200s", err, out.String())
	}

	out.Reset()
	if code := runVet([]string{"-C", "../../vet/testdata/clean", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("clean package: exit %d, stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), `"findings": []`) {
		t.Errorf("--json on clean code:\n%s", out.String())
	}
}

func TestVetUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--json", "--sarif"},
		{"--rules", "HP999", "-C", "../../vet/testdata/clean"},
		{"--no-such-flag"},
		{"-C", "../../vet/testdata/clean", "./nosuchdir"},
	} {
		var out, errb bytes.Buffer
		if code := runVet(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %s)", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := runVet([]string{"--rules", "list"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 14 {
		t.Errorf("--rules list: exit %d\n%s", code, out.String())
	}
}
