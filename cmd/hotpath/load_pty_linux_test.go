package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: what the program writes to tty
// comes out of pt.
func openPTY(t *testing.T) (pt, tty *os.File) {
	t.Helper()
	pt, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(pt.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		pt.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(pt.Fd()), unix.TIOCGPTN)
	if err != nil {
		pt.Close()
		t.Skipf("ptsname: %v", err)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		pt.Close()
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close(); pt.Close() })
	return pt, tty
}

// TestLoadProgressBarClearedOnTerminal runs `hotpath load` with stdout and
// stderr on one pseudo-terminal, as in a shell: the progress bar's last
// frame must be erased before the summary's first byte, so the summary
// does not start on the bar's line.
func TestLoadProgressBarClearedOnTerminal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	pt, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Fatal("isTerminal is false for a pseudo-terminal")
	}
	got := make(chan string, 1)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := pt.Read(buf)
			all = append(all, buf[:n]...)
			gen := strings.Index(string(all), "Generator ")
			if err != nil || gen >= 0 && strings.Contains(string(all[gen:]), "\n") {
				got <- string(all)
				return
			}
		}
	}()
	if code := run([]string{"load", "-c", "2", "-n", "300", srv.URL + "/"}, tty, tty); code != 0 {
		t.Fatalf("exit %d", code)
	}
	var out string
	select {
	case out = <-got:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("the summary never reached the terminal")
	}
	start := strings.Index(out, "GET "+srv.URL)
	if start < 0 {
		t.Fatalf("no summary on the terminal:\n%q", out)
	}
	before := out[:start]
	frame := strings.LastIndex(before, "\r[")
	if frame < 0 {
		t.Fatalf("no progress bar before the summary:\n%q", before)
	}
	// After the last frame: "\r", blanks at least as wide as the frame,
	// "\r", and nothing else before the summary.
	last := before[frame+1:]
	body, rest, ok := strings.Cut(last, "\r")
	blanks := strings.TrimSuffix(rest, "\r")
	if !ok || !strings.HasSuffix(rest, "\r") || strings.Trim(blanks, " ") != "" || len(blanks) < len(body) {
		t.Errorf("the bar's last frame %q is followed by %q before the summary, want \\r, %d blanks, \\r", body, rest, len(body))
	}
}
