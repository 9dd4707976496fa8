package load

import (
	"bytes"
	"context"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// -n with --rate: each connection waits for its next (never sent) due time before noticing the limit.
func TestOpenLoopRequestLimitOvershoot(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 20, Connections: 10, Requests: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent=%d elapsed=%.2fs achieved=%.1f/%v warnings=%q", res.Sent, res.ElapsedS, res.AchievedRate, res.Rate, res.Warnings)
	if res.ElapsedS > 0.8 || res.AchievedRate < 0.99*res.Rate*0.9 {
		t.Errorf("10 requests at 20/s should take ~0.45s; took %.2fs, achieved %.1f req/s", res.ElapsedS, res.AchievedRate)
	}
}

// Ctrl-C while requests are in flight: fast engine records them as "timeout".
func TestCancelCountsAsTimeout(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool { time.Sleep(3 * time.Second); return false })
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Config{URL: url, Connections: 4, Duration: 2 * time.Second})
	t.Logf("err=%v errors=%v", err, res.ErrorsByKind)
	if res.ErrorsByKind["timeout"] > 0 || res.ErrorsByKind["canceled"] == 0 {
		t.Errorf("canceled in-flight requests classified as %v, want canceled", res.ErrorsByKind)
	}
}

// h2c against an HTTP/1.1-only server: no protocol mismatch reported.
func TestH2CAgainstH1Server(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Proto: H2C, Connections: 2, Requests: 20})
	t.Logf("err=%v requests=%d errors=%v", err, res.Requests, res.ErrorsByKind)
	if err == nil || !strings.Contains(err.Error(), "protocol mismatch") {
		t.Errorf("run did not fail with protocol mismatch: err=%v", err)
	}
}

// NaN rate is accepted, runs closed loop, and the result cannot be written as JSON.
func TestNaNRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: math.NaN(), Requests: 5})
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	var b bytes.Buffer
	t.Errorf("NaN rate accepted (mode %s); WriteJSON: %v", res.Mode, res.WriteJSON(&b))
}

// Merge accepts runs of different protocols / methods / keep-alive.
func TestMergeIncompatible(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	a, err := Run(context.Background(), Config{URL: srv.URL, Requests: 10, Connections: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), Config{URL: srv.URL, Requests: 10, Connections: 1, Method: "POST", DisableKeepAlive: true, BodyMode: Body{Mode: CloseBody}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(a, b)
	if err == nil {
		t.Errorf("merged GET/keepalive/drain with POST/no-keepalive/close: method=%s keepalive=%v body=%s", m.Method, m.KeepAlive, m.Body)
	}
}

// JSON round trip: write, read, write again gives the same bytes.
func TestJSONRoundTripBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 200, Duration: 300 * time.Millisecond, Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	res.WriteJSON(&a)
	r2, err := ReadResult(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r2.WriteJSON(&b)
	if a.String() != b.String() {
		t.Errorf("round trip differs")
	}
	m, _ := Merge(r2)
	var c bytes.Buffer
	m.WriteJSON(&c)
	if c.String() != a.String() {
		al, cl := strings.Split(a.String(), "\n"), strings.Split(c.String(), "\n")
		for i := range min(len(al), len(cl)) {
			if al[i] != cl[i] {
				t.Errorf("Merge(one run) differs at line %d: %q vs %q", i, al[i], cl[i])
				break
			}
		}
	}
}

func goroutinesSettle(t *testing.T, before int) {
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("goroutines %d > %d after Run:\n%s", n, before, buf[:min(len(buf), 3000)])
	}
}

func TestGoroutineLeakH2C(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	before := runtime.NumGoroutine()
	if _, err := Run(context.Background(), Config{URL: srv.URL, Proto: H2C, Connections: 4, Requests: 100}); err != nil {
		t.Fatal(err)
	}
	goroutinesSettle(t, before+2) // allow server-side
}

func TestGoroutineLeakNetHTTPCancel(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool { time.Sleep(2 * time.Second); return false })
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	Run(ctx, Config{URL: url, Engine: EngineNetHTTP, Connections: 4, Duration: time.Second})
	goroutinesSettle(t, before+8) // 4 server conns + watchers
}
