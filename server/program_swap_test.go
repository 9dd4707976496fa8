//go:build unix

package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProgramSwap builds testdata/dropin (a service that uses every
// field and method of http.Server and net/http's graceful-shutdown idiom)
// twice: as written, and with http.Server replaced by server.Server (and
// net/http's package functions by this package's), the only change a
// service makes. Both run the same client script (a request, a Write
// past Content-Length, a slow request in flight when SIGTERM comes) and
// must observe the same: the in-flight request answered 200, exit status
// 0, the shutdown hook run.
//
// Modes: HTTP/1.1 in cleartext, in a process of its own beside its
// net/http original: the program serves what it was written to
// (ListenAndServe), and its client script compares the two whole
// processes; what the swap must keep on each protocol and API runs on
// the matrix (TestSemShutdownFinishesInFlight, TestSemWritePastDeclaredLength).
func TestProgramSwap(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two programs")
	}
	src, err := os.ReadFile("testdata/dropin/main.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	swapped := strings.NewReplacer(
		"&http.Server{", "&server.Server{",
		"http.ListenAndServe, http.Serve,", "server.ListenAndServe, server.Serve,",
		"/*IMPORT*/", `"github.com/hotpathhq/hotpath/server"`,
	).Replace(string(src))
	if swapped == string(src) || strings.Count(swapped, "server.Server{") != 1 {
		t.Fatal("the swap did not apply to testdata/dropin/main.go.txt")
	}
	var runs [2]string
	for i, prog := range []string{string(src), swapped} {
		bin := buildSwapProgram(t, repo, prog)
		runs[i] = runSwapProgram(t, bin)
	}
	t.Logf("observed:\n%s", runs[0])
	if runs[0] != runs[1] {
		t.Fatalf("the swap changed what a client and the process observe:\nnet/http:\n%s\nhotpath:\n%s", runs[0], runs[1])
	}
	for _, want := range []string{"GET /hello: 200 hello conn=tagged server=true", "GET /long: 200 ok",
		"in flight at SIGTERM: 200 slow done", "on shutdown ran", "write past the length: true", "exit status 0"} {
		if !strings.Contains(runs[1], want) {
			t.Errorf("missing %q", want)
		}
	}
}

// buildSwapProgram builds prog in a module of its own that requires this
// repository.
func buildSwapProgram(t *testing.T, repo, prog string) string {
	dir := t.TempDir()
	mod := fmt.Sprintf("module dropin\n\ngo 1.26\n\nrequire github.com/hotpathhq/hotpath v0.0.0\n\nreplace github.com/hotpathhq/hotpath => %s\n", repo)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": []byte(prog)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "dropin")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the program with")
	}
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the program: %v\n%s", err, out)
	}
	return bin
}

// runSwapProgram runs the program, plays the client script and returns what
// was observed, a line each.
func runSwapProgram(t *testing.T, bin string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("the program printed %q, %v", line, err)
	}
	var obs []string
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	get := func(path string) string {
		for try := 0; ; try++ {
			resp, err := c.Get("http://" + addr + path)
			if err != nil {
				if try < 50 {
					time.Sleep(20 * time.Millisecond) // not listening yet
					continue
				}
				return "GET " + path + ": " + err.Error()
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
	}
	obs = append(obs, "GET /hello: "+get("/hello"), "GET /long: "+get("/long"))
	slow := make(chan string, 1)
	go func() { slow <- get("/slow") }()
	// SIGTERM once the slow request is in its handler, which says so:
	// a fixed pause could end before a busy machine got it there.
	cue := make(chan string, 1)
	go func() {
		line, _ := out.ReadString('\n')
		cue <- line
	}()
	select {
	case line := <-cue:
		if line != "slow: in its handler\n" {
			t.Fatalf("the program printed %q, want its /slow handler's cue", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the /slow request did not reach its handler")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	obs = append(obs, "in flight at SIGTERM: "+<-slow)
	rest, _ := io.ReadAll(out)
	err = cmd.Wait()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	obs = append(obs, strings.TrimSpace(string(rest)), strings.TrimSpace(stderr.String()), status)
	return strings.Join(obs, "\n")
}
