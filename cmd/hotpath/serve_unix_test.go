//go:build unix

package main

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"slices"
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
			base, stop := startServe(t, args...)

			checks := []struct {
				method, path, body string
				status             int
				want               string
			}{
				{"GET", "", "", 200, "Hello, World!"},
				{"GET", "json", "", 200, `{"message":"Hello, World!"}`},
				{"GET", "bytes/20", "", 200, "hotpath-hotpath-hotp"},
				{"GET", "bytes/x", "", 400, ""},
				{"GET", "stream/20", "", 200, "hotpath-hotpath-hotp"},
				{"GET", "stream/x", "", 400, ""},
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
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d after SIGTERM, want 0", code)
			}
		})
	}
}

// TestServeMaxBody: --max-body sets the cap on request bodies: the
// native API's 4 MiB default answers a 5 MiB upload 413, --max-body -1
// lifts it, and a cap of 10 bytes answers 11 with 413.
func TestServeMaxBody(t *testing.T) {
	big := strings.Repeat("x", 5<<20)
	for _, c := range []struct {
		args   []string
		body   string
		status int
		want   string
	}{
		{nil, big, 413, ""},
		{[]string{"--max-body", "-1"}, big, 200, "5242880"},
		{[]string{"--max-body", "10"}, "0123456789x", 413, ""},
		{[]string{"--max-body", "10"}, "0123456789", 200, "10"},
	} {
		base, stop := startServe(t, c.args...)
		resp, err := http.Post(base+"discard", "text/plain", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || c.want != "" && string(b) != c.want {
			t.Errorf("%v, %d bytes: %d %q, want %d %q", c.args, len(c.body), resp.StatusCode, b, c.status, c.want)
		}
		http.DefaultClient.CloseIdleConnections()
		if code := stop(); code != 0 {
			t.Fatalf("serve exited %d", code)
		}
	}
}

// TestServeHTTP2 runs `hotpath serve --tls` and `--h2c` on both engines
// (both APIs on hotpath's HTTP/2, the handler API on net/http's with
// --h2-handoff) and checks a client gets its answer over HTTP/2.
func TestServeHTTP2(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		proto int
	}{
		{[]string{"--tls", "--engine", "hotpath", "--api", "handler"}, 2},
		{[]string{"--tls", "--engine", "nethttp"}, 2},
		{[]string{"--h2c", "--engine", "hotpath", "--api", "handler"}, 2},
		{[]string{"--h2c", "--engine", "nethttp"}, 2},
		{[]string{"--tls", "--engine", "hotpath", "--api", "handler", "--h2-handoff"}, 2},
		{[]string{"--h2c", "--engine", "hotpath", "--api", "handler", "--h2-handoff"}, 2},
		{[]string{"--tls", "--engine", "hotpath"}, 2},
		{[]string{"--h2c", "--engine", "hotpath"}, 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			base, stop := startServe(t, tc.args...)
			tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true, Protocols: new(http.Protocols)}
			tr.Protocols.SetHTTP1(true)
			tr.Protocols.SetHTTP2(true)
			if slices.Contains(tc.args, "--h2c") {
				tr.Protocols = new(http.Protocols)
				tr.Protocols.SetUnencryptedHTTP2(true)
			}
			resp, err := (&http.Client{Transport: tr}).Get(base + "json")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			tr.CloseIdleConnections()
			if resp.ProtoMajor != tc.proto || string(b) != `{"message":"Hello, World!"}` {
				t.Errorf("%s %q, want HTTP/%d and the JSON", resp.Proto, b, tc.proto)
			}
			stop()
		})
	}
}

// startServe runs `hotpath serve` with args on a free port and returns
// its base URL (from the first line it prints) and a stop function that
// sends SIGTERM and returns serve's exit code.
func startServe(t *testing.T, args ...string) (base string, stop func() int) {
	t.Helper()
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
	i := strings.Index(first, "://")
	if i < 0 {
		t.Fatalf("no URL in %q", first)
	}
	base = strings.Fields(first[strings.LastIndex(first[:i], " ")+1:])[0]
	go io.Copy(io.Discard, pr)
	return base, func() int {
		syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
		select {
		case code := <-done:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop on SIGTERM")
			return -1
		}
	}
}
