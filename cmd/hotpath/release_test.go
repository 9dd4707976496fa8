package main

import (
	"os"
	"regexp"
	"testing"
)

// TestReleaseIsTheChangelogs: the release the CLI prints is the newest
// one CHANGELOG.md describes, so neither is raised without the other.
func TestReleaseIsTheChangelogs(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[?(v\d+\.\d+\.\d+)\]?`).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no release heading (## v1.2.3 or ## [v1.2.3])")
	}
	if got := string(m[1]); got != release {
		t.Errorf("CHANGELOG.md's newest release is %s, the CLI's (release in main.go) %s: raise them together", got, release)
	}
}
