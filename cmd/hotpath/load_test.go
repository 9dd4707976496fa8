package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLoadUsage(t *testing.T) {
	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"load", "-h"}, 0, "--rate"},
		{[]string{"load"}, 2, "want one URL"},
		{[]string{"load", "http://a/", "http://b/"}, 2, "want one URL"},
		{[]string{"load", "--body", "keep", "http://a/"}, 2, "unknown body mode"},
		{[]string{"load", "--proto", "h2", "http://a/"}, 2, "needs an https:// URL"},
		{[]string{"load", "-H", "novalue", "http://a/"}, 2, "want \"Name: value\""},
		{[]string{"load", "-c", "0", "http://a/"}, 2, "-c 0: must be greater than 0"},
		{[]string{"load", "-d", "0.0s", "-n", "-5", "http://a/"}, 2, "-d 0s, -n -5: must be greater than 0"},
		{[]string{"load", "--timeout", "0ms", "http://a/"}, 2, "-timeout 0s: must be greater than 0"},
		{[]string{"load", "-h"}, 0, "Exit codes:"},
		{[]string{"load", "merge"}, 2, "want one or more result files"},
		{[]string{"load", "merge", "/nonexistent.json"}, 1, "no such file"},
		{[]string{"serve", "--stall", "5s/1s"}, 2, "0 < PAUSE < EVERY"},
	}
	for _, tc := range cases {
		var out bytes.Buffer
		if code := run(tc.args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("hotpath %v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
}

// TestLoadRunAndMerge runs `hotpath load` twice with --json (flags after
// the URL too), writes the HTML and hgrm files, and merges the two.
func TestLoadRunAndMerge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	var files []string
	for i, extra := range [][]string{{"-n", "200"}, {"--rate", "400", "-d", "250ms"}} {
		var out, errOut bytes.Buffer
		args := append([]string{"load", "-c", "2", "--json", srv.URL + "/"}, extra...)
		html, hgrm := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.hgrm")
		args = append(args, "--html", html, "--hgrm", hgrm)
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("hotpath %v: exit %d: %s", args, code, errOut.String())
		}
		var res struct {
			Schema, Mode string
			Requests     int64
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Schema != "hotpath-load/1" || res.Requests == 0 {
			t.Fatalf("run %d: --json output %v %+v", i, err, res)
		}
		for _, f := range []string{html, hgrm} {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s not written: %v", f, err)
			}
		}
		name := filepath.Join(dir, res.Mode+".json")
		os.WriteFile(name, out.Bytes(), 0o644)
		files = append(files, name)
	}
	// Open- and closed-loop runs do not merge; two of the same do.
	var out bytes.Buffer
	if code := run(append([]string{"load", "merge"}, files...), &out, &out); code != 2 || !strings.Contains(out.String(), "are not one load: mode open-loop vs closed-loop") {
		t.Errorf("merging open and closed loop: exit %d, %s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"load", "merge", files[0], files[0]}, &out, &out); code != 0 || !strings.Contains(out.String(), "merged from 2 runs") || !strings.Contains(out.String(), "400 requests") {
		t.Errorf("merge: exit %d:\n%s", code, out.String())
	}
}

// TestLoadProtocolMismatchExit: --proto h2 against a server without h2
// exits 1 with the reason.
func TestLoadProtocolMismatchExit(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	code := run([]string{"load", "--proto", "h2", "-k", "-n", "50", srv.URL}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "protocol mismatch") {
		t.Errorf("exit %d, stderr %q; want 1 and a protocol mismatch", code, errOut.String())
	}
}

// TestLoadErrorsPrintedOnce: the load package's errors start with "load:";
// the command prints them after "hotpath load: " once, not twice.
func TestLoadErrorsPrintedOnce(t *testing.T) {
	for _, args := range [][]string{
		{"load", "ftp://example.com/"},
		{"load", "--body", "keep", "http://a/"},
		{"load", "--engine", "warp", "http://a/"},
		{"load", "-m", "GE T", "http://a/"},
		{"load", "http://a:99999/"},
	} {
		var out bytes.Buffer
		code := run(args, &out, &out)
		if code != 2 || !strings.HasPrefix(out.String(), "hotpath load: ") || strings.Contains(out.String(), "load: load:") {
			t.Errorf("hotpath %v: exit %d, %q; want exit 2 and one \"hotpath load: \" prefix", args, code, out.String())
		}
	}
}

// TestLoadFailsWithoutResponses: against a closed port every request is
// refused; the run exits 1 and the summary and the error say why. Against
// a live server the same command exits 0.
func TestLoadFailsWithoutResponses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close() // nothing listens there now
	var out, errOut bytes.Buffer
	if code := run([]string{"load", "-c", "2", "-n", "20", closed}, &out, &errOut); code != 1 {
		t.Errorf("closed port: exit %d, want 1\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Errors      20 of 20 requests sent (100.0%): connection refused 20") {
		t.Errorf("the summary does not name the errors' kind:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "hotpath load: run failed: no request got a response") || !strings.Contains(errOut.String(), "is the server running") {
		t.Errorf("stderr does not say why the run failed: %q", errOut.String())
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	out.Reset()
	errOut.Reset()
	if code := run([]string{"load", "-c", "2", "-n", "20", srv.URL + "/"}, &out, &errOut); code != 0 || errOut.Len() > 0 || !strings.Contains(out.String(), "Status      200=20") {
		t.Errorf("live server: exit %d, stderr %q, summary:\n%s", code, errOut.String(), out.String())
	}
	// A wrong path: every response is a 404, nothing succeeded.
	out.Reset()
	errOut.Reset()
	if code := run([]string{"load", "-c", "2", "-n", "20", srv.URL + "/typo"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "every response had an error status (404=20)") {
		t.Errorf("every response 404: exit %d, stderr %q", code, errOut.String())
	}
}

// TestLoadMergeMisaligned: runs against other URLs are not one load:
// merge refuses them (exit 2) naming the difference; --force merges them
// with a warning.
func TestLoadMergeMisaligned(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	var files []string
	for _, path := range []string{"/", "/json"} {
		var out, errOut bytes.Buffer
		if code := run([]string{"load", "-c", "2", "-n", "50", "--json", srv.URL + path}, &out, &errOut); code != 0 {
			t.Fatalf("load %s: exit %d: %s", path, code, errOut.String())
		}
		name := filepath.Join(dir, fmt.Sprintf("run%d.json", len(files)+1))
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	var out, errOut bytes.Buffer
	code := run(append([]string{"load", "merge"}, files...), &out, &errOut)
	want := "run2.json and " + files[0] + " are not one load: target " + srv.URL + "/json vs " + srv.URL + "/"
	if code != 2 || out.Len() > 0 || !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "--force") {
		t.Errorf("merge: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out.String(), errOut.String(), want)
	}
	out.Reset()
	errOut.Reset()
	code = run(append([]string{"load", "merge", "--force"}, files...), &out, &errOut)
	if code != 0 || !strings.Contains(errOut.String(), "WARNING (--force)") || !strings.Contains(out.String(), "100 requests") || !strings.Contains(out.String(), "WARNING: merged runs that do not line up") {
		t.Errorf("merge --force: exit %d, stderr %q, summary:\n%s", code, errOut.String(), out.String())
	}
}

// TestLoadThresholds: a threshold that fails exits 3 (not 2, a usage
// error, nor 1, a run that failed: CI tells a regression from a broken
// pipeline) and names itself and the measured value; thresholds that pass
// exit 0; merge evaluates the runs' thresholds again on the merged result.
func TestLoadThresholds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(503)
		}
		w.Write([]byte("Hello, World!"))
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	md := filepath.Join(t.TempDir(), "summary.md")
	pass := []string{"load", "--quiet", "-c", "2", "-n", "100", "--threshold", "p99<10s", "--threshold", "errors<1%", "--threshold", "status:5xx<1", "--summary-md", md, srv.URL + "/"}
	if code := run(pass, &out, &errOut); code != 0 {
		t.Fatalf("passing thresholds: exit %d: %s", code, errOut.String())
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "Thresholds passed") || !strings.Contains(string(b), "| `p99<10s` |") {
		t.Errorf("--summary-md: %v\n%s", err, b)
	}
	if !strings.Contains(out.String(), "pass  p99<10s") || !strings.Contains(out.String(), "pass  status:5xx<1     status:5xx = 0") {
		t.Errorf("summary without the thresholds' verdicts:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	// 10 of 20 answered 503: status:5xx<1 fails, errors stay 0.
	dir := t.TempDir()
	var files []string
	for i, path := range []string{"/fail", "/"} {
		out.Reset()
		errOut.Reset()
		code := run([]string{"load", "--quiet", "--json", "-c", "1", "-n", "10", "--threshold", "status:5xx<1", "--threshold", "errors<0.1%", srv.URL + path}, &out, &errOut)
		want := 0
		if path == "/fail" {
			want = 1 // every response a 5xx: nothing measured, before any threshold
		}
		if code != want {
			t.Fatalf("run on %s: exit %d, want %d: %s", path, code, want, errOut.String())
		}
		name := filepath.Join(dir, fmt.Sprint(i, ".json"))
		os.WriteFile(name, out.Bytes(), 0o644)
		files = append(files, name)
	}
	out.Reset()
	errOut.Reset()
	code := run(append([]string{"load", "merge", "--force"}, files...), &out, &errOut)
	if code != 3 || !strings.Contains(errOut.String(), "threshold failed: status:5xx<1 (measured 10)") {
		t.Errorf("merged result with 10 5xx: exit %d, stderr %q; want 3 naming status:5xx<1 and 10", code, errOut.String())
	}
	if !strings.Contains(out.String(), "pass  errors<0.1%") {
		t.Errorf("merged summary:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	fail := []string{"load", "--quiet", "-c", "1", "-n", "20", "--threshold", "rps>1e12", "--threshold", "p99<1ns", srv.URL + "/"}
	if code := run(fail, &out, &errOut); code != 3 || !strings.Contains(errOut.String(), "threshold failed: rps>1e12 (measured ") ||
		!strings.Contains(errOut.String(), "threshold failed: p99<1ns (measured ") {
		t.Errorf("failing thresholds: exit %d, stderr %q; want 3, each named", code, errOut.String())
	}
	if code := run([]string{"load", "--quiet", "-c", "0", srv.URL}, &out, &errOut); code != 2 {
		t.Errorf("-c 0: exit %d, want 2 (usage)", code)
	}
	errOut.Reset()
	if code := run([]string{"load", "--threshold", "errors<0.01", srv.URL}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "errors is a count; write errors<1% for a share or errors<1 for a count") {
		t.Errorf("a fraction as a count: exit %d, stderr %q; want 2 (usage) with a hint", code, errOut.String())
	}
	if code := run([]string{"load", "--threshold", "p99<50", srv.URL}, &out, &errOut); code != 2 {
		t.Errorf("a latency bound without a unit: exit %d, want 2 (usage)", code)
	}
}

// TestLoadConventions: what curl, wrk and ab users type works, with a hint
// where it is read a certain way: -X for the method, --data @file (CR and
// LF removed, as curl) and --data-binary @file (byte for byte), a bare
// number of seconds for -d, and a URL without a scheme.
func TestLoadConventions(t *testing.T) {
	var mu sync.Mutex
	bodies := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[r.Method+" "+string(b)]++
		mu.Unlock()
	}))
	defer srv.Close()
	file := filepath.Join(t.TempDir(), "body.json")
	os.WriteFile(file, []byte("{\"a\":\r\n 1}\n"), 0o644)
	hostport := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		args []string
		key  string // method and body the server must have seen
		hint string // on stderr
	}{
		{[]string{"-X", "PUT", "--data", "@" + file, "-n", "5", srv.URL}, `PUT {"a": 1}`, ""},
		{[]string{"-X", "POST", "--data-binary", "@" + file, "-n", "5", srv.URL}, "POST {\"a\":\r\n 1}\n", ""},
		// A body without a method is a POST, as curl sends it; a method
		// written, GET included, stays.
		{[]string{"--data", "x=1", "-n", "5", srv.URL}, "POST x=1", ""},
		{[]string{"--data-binary", "@" + file, "-n", "5", srv.URL}, "POST {\"a\":\r\n 1}\n", ""},
		{[]string{"-m", "GET", "--data", "x=1", "-n", "5", srv.URL}, "GET x=1", ""},
		{[]string{"-d", "0.3", srv.URL}, "GET ", "-d 0.3 taken as 300ms"},
		{[]string{"--stages", "200ms:200,200ms:0", srv.URL}, "GET ", ""},
		{[]string{"-n", "5", hostport + "/"}, "GET ", "has no scheme: taken as http://" + hostport + "/"},
	} {
		var out, errOut bytes.Buffer
		mu.Lock()
		clear(bodies)
		mu.Unlock()
		args := append([]string{"load", "--quiet", "-c", "1"}, tc.args...)
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, errOut.String())
		}
		mu.Lock()
		n := bodies[tc.key]
		mu.Unlock()
		if n == 0 {
			t.Errorf("%v: the server never saw %q (saw %v)", tc.args, tc.key, bodies)
		}
		if tc.hint != "" && !strings.Contains(errOut.String(), tc.hint) {
			t.Errorf("%v: stderr %q, want the hint %q", tc.args, errOut.String(), tc.hint)
		}
	}
	// A vegeta target file: the mix, a body from a file next to it, and
	// no URL argument.
	tdir := t.TempDir()
	os.WriteFile(filepath.Join(tdir, "b.txt"), []byte("from-file"), 0o644)
	os.WriteFile(filepath.Join(tdir, "targets.txt"), []byte("GET "+srv.URL+"/\n\nPATCH "+srv.URL+"/p\n@b.txt\n"), 0o644)
	mu.Lock()
	clear(bodies)
	mu.Unlock()
	var tout, terr bytes.Buffer
	if code := run([]string{"load", "--quiet", "-c", "1", "-n", "10", "--targets", filepath.Join(tdir, "targets.txt")}, &tout, &terr); code != 0 {
		t.Fatalf("--targets: exit %d: %s", code, terr.String())
	}
	mu.Lock()
	gets, patches := bodies["GET "], bodies["PATCH from-file"]
	mu.Unlock()
	if gets != 5 || patches != 5 || !strings.Contains(tout.String(), "a mix of 2 targets") {
		t.Errorf("--targets: the server saw %d GET and %d PATCH with the file's body; summary:\n%s", gets, patches, tout.String())
	}

	// Connection stages: closed loop, the connections ramping.
	var cs, csErr bytes.Buffer
	if code := run([]string{"load", "--quiet", "--conn-stages", "200ms:3,200ms:0", srv.URL}, &cs, &csErr); code != 0 ||
		!strings.Contains(cs.String(), "connection stages 200ms:3,200ms:0 (peak 3)") {
		t.Errorf("--conn-stages: exit %d: %s%s", code, csErr.String(), cs.String())
	}

	// The result says where and how it was made.
	var js, jsErr bytes.Buffer
	if code := run([]string{"load", "--quiet", "-n", "3", "--json", srv.URL}, &js, &jsErr); code != 0 {
		t.Fatalf("--json: exit %d: %s", code, jsErr.String())
	}
	var res struct {
		Meta struct {
			Hotpath, GoVersion, Host string
			CPUs                     int
			Command                  []string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &res); err != nil || res.Meta.CPUs < 1 || res.Meta.Hotpath == "" ||
		strings.Join(res.Meta.Command, " ") != "hotpath load --quiet -n 3 --json "+srv.URL {
		t.Errorf("meta %+v (%v)", res.Meta, err)
	}
	var out bytes.Buffer
	if code := run([]string{"load", "-h"}, &out, &out); code != 0 || !strings.Contains(out.String(), "hotpath load merge") ||
		!strings.Contains(out.String(), "hotpath load k8s") || !strings.Contains(out.String(), "hotpath load collect") {
		t.Errorf("load -h does not list the subcommands:\n%s", out.String())
	}
}

// TestLoadRefusedStopsEarly: against a port nothing listens at, -d 60s
// stops after about a second, exits 1 (a run that failed, not a
// threshold) and names the address and the refusal.
func TestLoadRefusedStopsEarly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"load", "--quiet", "-c", "2", "-d", "60s", "--threshold", "p99<1ns", "http://" + addr + "/"}, &out, &errOut)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errOut.String(), "nothing accepts connections at "+addr+": connection refused") {
			t.Errorf("exit %d, stderr %q; want 1 naming %s and the refusal", code, errOut.String(), addr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still dialing 10s into -d 60s against a closed port")
	}
}
