package tcpcork

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// File corks regular files of MinBytes or more, and nothing that may
// trickle or is not a file.
func TestFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, MinBytes), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, tc := range []struct {
		name string
		src  io.Reader
		n    int64
		want bool
	}{
		{"regular file", f, MinBytes, true},
		{"small part of a file", f, MinBytes - 1, false},
		{"pipe", pr, 1 << 30, false},
		{"memory", bytes.NewReader(nil), 1 << 30, false},
	} {
		if got := File(tc.src, tc.n); got != tc.want {
			t.Errorf("%s: File = %v, want %v", tc.name, got, tc.want)
		}
	}
}
