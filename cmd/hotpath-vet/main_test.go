package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoVetVettool builds hotpath-vet and runs it under go vet -vettool on
// the demo module: go vet must fail and print both findings.
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
	for _, want := range []string{
		"demo.go:18:8: resp.Body is closed without being drained",
		"demo.go:24:9: http.ListenAndServe serves with no timeouts at all",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "demo.go:33") {
		t.Errorf("the //nolint'd finding was reported:\n%s", out)
	}
}
