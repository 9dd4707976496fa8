package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClassify: the errors the engines see map to kinds a user knows.
func TestClassify(t *testing.T) {
	dial := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{dial(syscall.ECONNREFUSED), "refused"},
		{dial(syscall.EHOSTUNREACH), "unreachable"},
		{dial(syscall.ENETUNREACH), "unreachable"},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "exmaple.invalid", IsNotFound: true}}, "dns"},
		{&net.OpError{Op: "dial", Err: os.ErrDeadlineExceeded}, "connect_timeout"},
		{dial(syscall.EACCES), "connect"},
	} {
		if got := errKindNames[classifyDial(tc.err)]; got != tc.want {
			t.Errorf("classifyDial(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	for _, tc := range []struct {
		err   error
		phase errKind
		want  string
	}{
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, errRead, "reset"},
		{&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, errWrite, "reset"},
		{io.EOF, errRead, "closed_early"},
		{fmt.Errorf("wrapped: %w", os.ErrDeadlineExceeded), errRead, "timeout"},
		{errors.New("something else"), errRead, "read"},
	} {
		if got := errKindNames[classify(tc.err, tc.phase)]; got != tc.want {
			t.Errorf("classify(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
	// Every kind has a name and a label.
	for k := range numErrKinds {
		if errKindNames[k] == "" || errKindLabels[errKindNames[k]] == "" {
			t.Errorf("kind %d: name %q, no label", k, errKindNames[k])
		}
	}
}

// TestNetHTTPClassifyDNS: a host that does not resolve is "dns" on the
// net/http engine (the fast engine refuses it before the run).
func TestNetHTTPClassifyDNS(t *testing.T) {
	res, err := Run(context.Background(), Config{URL: "http://no-such-host.invalid/", Connections: 1, Requests: 2, Engine: EngineNetHTTP})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorsByKind["dns"] != 2 {
		t.Errorf("errors %v, want 2 dns", res.ErrorsByKind)
	}
	if err := res.Check(); err == nil || !strings.Contains(err.Error(), "DNS lookup failed 2") || !strings.Contains(err.Error(), "does not resolve") {
		t.Errorf("Check() = %v", err)
	}
}

// TestCheck: a run fails when no request got a response or none
// succeeded; errors or error statuses beside successes do not fail it.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		res    Result
		failed string // "" when the run passes
	}{
		{"all ok", Result{Requests: 10, Sent: 10, Status: map[string]int64{"200": 10}}, ""},
		{"some errors", Result{Requests: 10, Sent: 12, Errors: 2, Status: map[string]int64{"200": 10}, ErrorsByKind: map[string]int64{"timeout": 2}}, ""},
		{"redirects and 500s", Result{Requests: 10, Sent: 10, Status: map[string]int64{"302": 1, "500": 9}}, ""},
		{"all refused", Result{Target: "http://127.0.0.1:1/", Sent: 5, Errors: 5, ErrorsByKind: map[string]int64{"refused": 5}}, "nothing accepts connections at 127.0.0.1:1"},
		{"mixed errors", Result{Sent: 5, Errors: 5, ErrorsByKind: map[string]int64{"reset": 1, "timeout": 4}}, "timeout 4, connection reset 1"},
		{"all 404", Result{Requests: 7, Sent: 7, Status: map[string]int64{"404": 7}}, "every response had an error status (404=7)"},
		{"nothing sent", Result{}, "no request was sent"},
	} {
		err := tc.res.Check()
		switch {
		case tc.failed == "" && err != nil:
			t.Errorf("%s: Check() = %v, want nil", tc.name, err)
		case tc.failed != "" && (err == nil || !strings.Contains(err.Error(), tc.failed)):
			t.Errorf("%s: Check() = %v, want an error with %q", tc.name, err, tc.failed)
		}
	}
}

// Ctrl-C while requests are in flight counts them as "canceled", not as
// "timeout".
func TestCancelCountsAsCanceled(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool { time.Sleep(3 * time.Second); return false })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Config{URL: url, Connections: 4, Duration: refusedFor + time.Second})
	t.Logf("err=%v errors=%v", err, res.ErrorsByKind)
	if res.ErrorsByKind["timeout"] > 0 || res.ErrorsByKind["canceled"] == 0 {
		t.Errorf("canceled in-flight requests classified as %v, want canceled", res.ErrorsByKind)
	}
}

// closedPort returns an address nothing listens at: a port just freed.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRefusedStopsEarly: when every dial is refused from the start, the
// run stops after refusedFor with an error naming the address, instead
// of dialing for its whole duration (issue 40: 361,825 refused dials in
// 10 s), on every engine and in both loops.
func TestRefusedStopsEarly(t *testing.T) {
	addr := closedPort(t)
	for _, cfg := range []Config{
		{Connections: 2},
		{Connections: 2, Engine: EngineNetHTTP},
		{Connections: 2, Rate: 200},
	} {
		cfg.URL, cfg.Duration = "http://"+addr+"/", time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := Run(ctx, cfg)
		late := ctx.Err()
		cancel()
		if late != nil {
			t.Fatalf("engine %q rate %v: ran until the test's deadline: %v", cfg.Engine, cfg.Rate, err)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "nothing accepts connections at "+addr+": connection refused") {
			t.Errorf("engine %q rate %v: err %v, want one naming %s, wrapping ECONNREFUSED", cfg.Engine, cfg.Rate, err, addr)
		}
		if res == nil || res.ErrorsByKind["refused"] == 0 {
			t.Errorf("engine %q rate %v: want the result with its refusals, got %+v", cfg.Engine, cfg.Rate, res)
		}
	}
}

// TestRefusedAfterAnswersGoesOn: once a request got further than a
// refused dial, refusals (a server restarting) no longer stop the run.
func TestRefusedAfterAnswersGoesOn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		ln.Close() // from now on, every dial is refused
		buf := make([]byte, 4096)
		c.Read(buf)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		c.Close()
	}()
	cfg := Config{URL: "http://" + ln.Addr().String() + "/", Connections: 1, Duration: refusedFor + time.Second}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("a run with a response, then refusals: %v, want no error (the run goes on)", err)
	}
	if res.Requests != 1 || res.ErrorsByKind["refused"] == 0 || res.ElapsedS < cfg.Duration.Seconds() {
		t.Errorf("%d responses, %v errors in %.2fs; want 1 response, refusals after it, the whole %v", res.Requests, res.ErrorsByKind, res.ElapsedS, cfg.Duration)
	}
}
