//go:build unix

package main

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeEndpointsAndSignal runs `hotpath serve` on both engines, checks
// every endpoint answers the same, and stops it with SIGTERM.
func TestServeEndpointsAndSignal(t *testing.T) {
	for _, args := range [][]string{{"--engine", "hotpath"}, {"--engine", "hotpath", "--api", "handler"}, {"--engine", "nethttp"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			pr, pw := io.Pipe()
			done := make(chan int, 1)
			go func() {
				done <- runServe(append([]string{"--addr", "127.0.0.1:0"}, args...), pw, io.Discard)
				pw.Close()
			}()
			lines := bufio.NewScanner(pr)
			if !lines.Scan() {
				t.Fatal("serve printed nothing")
			}
			first := lines.Text()
			i := strings.Index(first, "http://")
			if i < 0 {
				t.Fatalf("no URL in %q", first)
			}
			base := strings.Fields(first[i:])[0]
			go io.Copy(io.Discard, pr)

			checks := []struct {
				method, path, body string
				status             int
				want               string
			}{
				{"GET", "", "", 200, "Hello, World!"},
				{"GET", "json", "", 200, `{"message":"Hello, World!"}`},
				{"GET", "bytes/20", "", 200, "hotpath-hotpath-hotp"},
				{"GET", "bytes/x", "", 400, ""},
				{"POST", "echo", "ping", 200, "ping"},
				{"GET", "delay/1", "", 200, "Hello, World!"},
				{"GET", "nope", "", 404, ""},
			}
			for _, c := range checks {
				req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != c.status || (c.want != "" && string(b) != c.want) {
					t.Errorf("%s /%s: %d %q, want %d %q", c.method, c.path, resp.StatusCode, b, c.status, c.want)
				}
			}
			http.DefaultClient.CloseIdleConnections()
			syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("serve exited %d after SIGTERM, want 0", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("serve did not stop on SIGTERM")
			}
		})
	}
}
