package client

import (
	"context"
	"fmt"
	"math/bits"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"
)

// Stats counts what a client's connections do: requests, connections
// opened (so connections reused), and how long DNS, connect, TLS and the
// wait for response headers took. It is safe for concurrent use and cheap
// enough to leave on: a request on a reused connection costs two clock
// reads and a few atomic adds, no allocation. Per-connection phases are
// measured where the connection is dialed (DNS and connect through
// net/http/httptrace hooks on the dial's context), so requests that reuse
// a connection pay nothing for them.
//
// Set it as a [Transport]'s Stats (with [New]: an [Option] that sets
// t.Stats); around any other RoundTripper, such as an *http.Transport,
// wire it with [Stats.RoundTripper] and [Stats.DialContext].
type Stats struct {
	requests, failures, conns atomic.Int64
	paths                     [numPaths]atomic.Int64 // by Transport, when it is given the Stats

	// DNS, Connect and TLS time each new connection's phases; Header
	// times each request from RoundTrip to its response head (the
	// time to first byte, dials included).
	DNS, Connect, TLS, Header Timing
}

// Snapshot is a consistent-enough copy of [Stats] at one moment.
type Snapshot struct {
	Requests int64 `json:"requests"`
	Failures int64 `json:"failures"` // RoundTrip errors
	NewConns int64 `json:"new_conns"`
	// ReusedConns counts the successful requests (Requests less
	// Failures) that did not dial: a failed request got no response,
	// and most got no connection either, so counting it as a reuse
	// would report a run where every request failed as 100% reused.
	ReusedConns int64   `json:"reused_conns"`
	ReuseRatio  float64 `json:"reuse_ratio"` // ReusedConns / (Requests - Failures); 0 when none succeeded

	// Fast counts the requests a [Transport] given these Stats served
	// itself; Fallback those it handed to its Fallback, by reason
	// ("proxy", "connect", "upgrade", "scheme").
	Fast     int64            `json:"fast"`
	Fallback map[string]int64 `json:"fallback,omitempty"`

	DNS     TimingSummary `json:"dns"`
	Connect TimingSummary `json:"connect"`
	TLS     TimingSummary `json:"tls"`
	Header  TimingSummary `json:"header"`
}

// Snapshot returns the counts so far.
func (s *Stats) Snapshot() Snapshot {
	snap := Snapshot{
		Requests: s.requests.Load(),
		Failures: s.failures.Load(),
		NewConns: s.conns.Load(),
		DNS:      s.DNS.Summary(),
		Connect:  s.Connect.Summary(),
		TLS:      s.TLS.Summary(),
		Header:   s.Header.Summary(),
	}
	snap.Fast = s.paths[fastPath].Load()
	for p := fastPath + 1; p < numPaths; p++ {
		if n := s.paths[p].Load(); n > 0 {
			if snap.Fallback == nil {
				snap.Fallback = make(map[string]int64)
			}
			snap.Fallback[pathNames[p]] = n
		}
	}
	ok := snap.succeeded()
	snap.ReusedConns = max(ok-snap.NewConns, 0)
	if ok > 0 {
		snap.ReuseRatio = float64(snap.ReusedConns) / float64(ok)
	}
	return snap
}

// succeeded is how many requests got a response: those reuse is
// measured over.
func (s Snapshot) succeeded() int64 { return max(s.Requests-s.Failures, 0) }

// String formats a snapshot on one line. A percentile is shown as the
// power-of-two bucket it falls in, to two significant digits
// ("header p50=33µs-66µs"): the bucket is all a Timing knows. Reuse
// reads "n/a" when no request succeeded: there was nothing to reuse.
func (s Snapshot) String() string {
	reuse := "n/a"
	if s.succeeded() > 0 {
		reuse = fmt.Sprintf("%.1f%%", 100*s.ReuseRatio)
	}
	return fmt.Sprintf("requests=%d failures=%d new_conns=%d reuse=%s header p50=%s p99=%s",
		s.Requests, s.Failures, s.NewConns, reuse, bucketRange(s.Header.P50), bucketRange(s.Header.P99))
}

// bucketRange formats the Timing bucket whose lower bound is lo.
func bucketRange(lo time.Duration) string {
	if lo <= 0 {
		return "0-1ns"
	}
	return roundSig(lo).String() + "-" + roundSig(2*lo).String()
}

// roundSig rounds d to two significant digits.
func roundSig(d time.Duration) time.Duration {
	unit := time.Duration(1)
	for d/unit >= 100 {
		unit *= 10
	}
	return d.Round(unit)
}

// RoundTripper wraps rt to count requests and time their response heads,
// for a RoundTripper other than a [Transport] (whose Stats field does it,
// connections included): count rt's connections with [Stats.DialContext]
// on its dialer.
func (s *Stats) RoundTripper(rt http.RoundTripper) http.RoundTripper {
	return &statsTransport{rt: rt, s: s}
}

type statsTransport struct {
	rt http.RoundTripper
	s  *Stats
}

func (t *statsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.rt.RoundTrip(req)
	t.s.request(start, err)
	return resp, err
}

// request counts a request that started at start and ended with err.
func (s *Stats) request(start time.Time, err error) {
	s.requests.Add(1)
	if err != nil {
		s.failures.Add(1)
	} else {
		s.Header.Observe(time.Since(start))
	}
}

// CloseIdleConnections passes the call on to the wrapped RoundTripper.
func (t *statsTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// DialFunc is the shape of http.Transport.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// DialContext wraps dial to count connections and time their DNS lookup
// and TCP connect.
func (s *Stats) DialContext(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return s.dial(ctx, dial, network, addr)
	}
}

// dial dials with dial, counting the connection and timing its DNS
// lookup and TCP connect in s; a nil s only dials.
func (s *Stats) dial(ctx context.Context, dial DialFunc, network, addr string) (net.Conn, error) {
	if s == nil {
		return dial(ctx, network, addr)
	}
	var dnsStart, connStart time.Time
	trace := &httptrace.ClientTrace{
		DNSStart: func(httptrace.DNSStartInfo) { dnsStart = time.Now() },
		DNSDone: func(httptrace.DNSDoneInfo) {
			if !dnsStart.IsZero() {
				s.DNS.Observe(time.Since(dnsStart))
			}
		},
		ConnectStart: func(string, string) { connStart = time.Now() },
		ConnectDone: func(_, _ string, err error) {
			if err == nil && !connStart.IsZero() {
				s.Connect.Observe(time.Since(connStart))
			}
		},
	}
	c, err := dial(httptrace.WithClientTrace(ctx, trace), network, addr)
	if err == nil {
		s.conns.Add(1)
	}
	return c, err
}

// Timing is a lock-free histogram of durations in power-of-two buckets of
// nanoseconds (so percentiles are within a factor of two below the true
// value; Mean and Max are exact).
type Timing struct {
	count, sum, max atomic.Int64
	buckets         [64]atomic.Int64
}

// Observe records one duration.
func (t *Timing) Observe(d time.Duration) {
	ns := max(int64(d), 0)
	t.count.Add(1)
	t.sum.Add(ns)
	t.buckets[bits.Len64(uint64(ns))].Add(1)
	for {
		m := t.max.Load()
		if ns <= m || t.max.CompareAndSwap(m, ns) {
			break
		}
	}
}

// TimingSummary describes the durations a [Timing] saw. Percentiles are
// the lower bound of the power-of-two bucket they fall in.
type TimingSummary struct {
	Count int64         `json:"count"`
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// Summary returns the count, mean, percentiles and maximum so far.
func (t *Timing) Summary() TimingSummary {
	s := TimingSummary{Count: t.count.Load(), Max: time.Duration(t.max.Load())}
	if s.Count == 0 {
		return s
	}
	s.Mean = time.Duration(t.sum.Load() / s.Count)
	var counts [64]int64
	total := int64(0)
	for i := range counts {
		counts[i] = t.buckets[i].Load()
		total += counts[i]
	}
	pct := func(q float64) time.Duration {
		want := int64(q * float64(total))
		seen := int64(0)
		for i, n := range counts {
			seen += n
			if seen > want {
				if i == 0 {
					return 0
				}
				return time.Duration(1) << (i - 1)
			}
		}
		return s.Max
	}
	s.P50, s.P90, s.P99 = pct(0.50), pct(0.90), pct(0.99)
	return s
}
