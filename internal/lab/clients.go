package lab

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// dialCounter counts the TCP connections a transport opens.
type dialCounter struct{ n atomic.Int64 }

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.n.Add(1)
	return (&net.Dialer{}).DialContext(ctx, network, addr)
}

// newTransport returns a transport like http.DefaultTransport's settings,
// trusting tlsCfg, counting its dials in dc (if not nil).
func newTransport(tlsCfg *tls.Config, dc *dialCounter) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg.Clone()
	}
	if dc != nil {
		t.DialContext = dc.dial
	}
	return t
}

// fetch GETs url with c and returns the body, as the seed's fetch does.
func fetch(c *http.Client, url string) ([]byte, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// expectBody wraps a fetch so that a wrong body is an error.
func expectBody(want string, f func() ([]byte, error)) func() error {
	return func() error {
		b, err := f()
		if err != nil {
			return err
		}
		if string(b) != want {
			return fmt.Errorf("body %q, want %q", b, want)
		}
		return nil
	}
}

// sameBodies runs each fetch once and fails unless all return want.
func sameBodies(want string, fs ...func() ([]byte, error)) error {
	for i, f := range fs {
		if err := expectBody(want, f)(); err != nil {
			return fmt.Errorf("arm %d: %w", i, err)
		}
	}
	return nil
}

// concurrentRun runs do from workers goroutines for d and records on a
// ns/op (wall time per request, i.e. the inverse of throughput), B/op
// and allocs/op (this process: with the server in a child process, the
// client's alone) and connections opened per 1,000 requests.
func concurrentRun(ctx context.Context, a *Arm, workers int, d time.Duration, dc *dialCounter, do func() error) error {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	dials0 := dc.n.Load()
	var reqs atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// At least one request each, however short d: a smoke
			// budget's few milliseconds can pass before a worker runs on
			// a loaded machine ("no request completed in 4ms").
			for i := 0; ctx.Err() == nil && (i == 0 || time.Now().Before(deadline)); i++ {
				if err := do(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				reqs.Add(1)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	n := float64(reqs.Load())
	if n == 0 {
		return fmt.Errorf("no request completed in %s", d)
	}
	a.record(NsPerOp.Name, float64(el.Nanoseconds())/n)
	a.record(BytesPerOp.Name, float64(m1.TotalAlloc-m0.TotalAlloc)/n)
	a.record(AllocsPerOp.Name, float64(m1.Mallocs-m0.Mallocs)/n)
	a.record(ConnsPer1k.Name, float64(dc.n.Load()-dials0)*1000/n)
	return nil
}

var clientMetrics = []Metric{NsPerOp, BytesPerOp, AllocsPerOp, ConnsPer1k}
