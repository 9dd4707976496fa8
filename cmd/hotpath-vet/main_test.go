package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/vet"
)

// TestGoVetVettool builds hotpath-vet and runs it under go vet -vettool on
// the demo module: go vet must fail and print every finding.
func TestGoVetVettool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary and runs go vet")
	}
	bin := filepath.Join(t.TempDir(), "hotpath-vet")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command("go", "vet", "-vettool="+bin, "./...")
	cmd.Dir = filepath.Join("..", "..", "vet", "testdata", "demo")
	cmd.Env = append(cmd.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go vet succeeded on code with findings:\n%s", out)
	}
	// Each finding reads as in hotpath vet's text output, rule tag included
	// (issue 14: go vet printed the message without [HP012 ...]).
	res, err := vet.Run(vet.Config{Dir: cmd.Dir})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	lines = lines[:len(lines)-1] // the summary
	if len(lines) != 3 {
		t.Fatalf("hotpath vet text output:\n%s", text.String())
	}
	for _, line := range lines {
		want := strings.TrimSuffix(line, " (fix available)")
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet output lacks hotpath vet's line %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"demo.go:10:15: [HP016 client-timeout] http.Client has no Timeout",
		"demo.go:18:8: [HP012 undrained-body] resp.Body is closed before EOF",
		"demo.go:24:9: [HP013 read-header-timeout] http.ListenAndServe serves with no timeouts at all",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "demo.go:33") {
		t.Errorf("the //nolint'd finding was reported:\n%s", out)
	}
	if strings.Contains(string(out), "demo.go:38") {
		t.Errorf("HP015 ran although it is off by default:\n%s", out)
	}

	// -unclosedbody turns HP015 on (and, as any rule flag set to true, runs only it).
	cmd = exec.Command("go", "vet", "-vettool="+bin, "-unclosedbody", "./...")
	cmd.Dir = filepath.Join("..", "..", "vet", "testdata", "demo")
	cmd.Env = append(cmd.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "demo.go:38:15: [HP015 unclosed-body] resp.Body is never closed") || strings.Contains(string(out), "demo.go:18") {
		t.Errorf("go vet -unclosedbody (err %v):\n%s", err, out)
	}
}

func TestFlagOn(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"./..."}, false},
		{[]string{"-unclosedbody", "./..."}, true},
		{[]string{"--unclosedbody", "x.cfg"}, true},
		{[]string{"-unclosedbody=true"}, true},
		{[]string{"-unclosedbody=false"}, false},
		{[]string{"-unclosedbody", "-unclosedbody=0"}, false},
		{[]string{"-unclosedbody=maybe"}, false},
		{[]string{"--", "-unclosedbody"}, false},
		{[]string{"-unclosedbodyx"}, false},
	} {
		if got := flagOn(c.args, "unclosedbody"); got != c.want {
			t.Errorf("flagOn(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

func TestOffByDefaultIsInert(t *testing.T) {
	off, on := analyzers(nil), analyzers([]string{"-unclosedbody"})
	if len(off) != len(on) || len(off) != 16 {
		t.Fatalf("%d and %d analyzers, want 16 each", len(off), len(on))
	}
	for i := range off {
		if off[i].Name != "unclosedbody" {
			if off[i] != on[i] {
				t.Errorf("%s changed with -unclosedbody", off[i].Name)
			}
			continue
		}
		if len(off[i].Requires) != 0 || len(on[i].Requires) == 0 {
			t.Errorf("unclosedbody: inert %+v, enabled %+v", off[i], on[i])
		}
	}
}
