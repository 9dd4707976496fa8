package load

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Open loop, -d 1s at 2 req/s on one connection: sends at 0 and 0.5 s.
func TestOpenLoopThroughputEarlyFinish(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 2, Connections: 1, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %d elapsed %.3fs duration %.1fs req/s %.2f achieved %.2f", res.Requests, res.ElapsedS, res.DurationS, res.ReqPerS, res.AchievedRate)
	if res.ReqPerS > 2.2 {
		t.Errorf("throughput %.2f req/s for a 2 req/s run", res.ReqPerS)
	}
}

// How long Run takes to return after cancel, fast engine, while a dial hangs (backlog full).
func TestCancelReturnsPromptly(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool { time.Sleep(5 * time.Second); return false })
	for _, e := range []Engine{EngineFast, EngineNetHTTP} {
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(200 * time.Millisecond); cancel() }()
		t0 := time.Now()
		res, err := Run(ctx, Config{URL: url, Engine: e, Connections: 2, Duration: 3 * time.Second})
		d := time.Since(t0)
		t.Logf("%s: returned after %v err=%v errors=%v", e, d, err, res.ErrorsByKind)
		if d > time.Second {
			t.Errorf("%s: Run took %v after cancel", e, d)
		}
	}
}
