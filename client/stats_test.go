package client

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestSnapshotStringRounds: percentiles print as their bucket, to two
// significant digits, not as bucket edges with false precision
// (p50=32.768µs).
func TestSnapshotStringRounds(t *testing.T) {
	var st Stats
	for range 10 {
		st.Header.Observe(40 * time.Microsecond) // bucket [32.768µs, 65.536µs)
	}
	got := st.Snapshot().String()
	if !strings.Contains(got, "header p50=33µs-66µs p99=33µs-66µs") {
		t.Errorf("String() = %q, want the bucket 33µs-66µs", got)
	}
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{{0, "0-1ns"}, {1, "1ns-2ns"}, {1 << 20, "1ms-2.1ms"}, {1 << 33, "8.6s-17s"}} {
		if got := bucketRange(tc.in); got != tc.want {
			t.Errorf("bucketRange(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// closedAddr is a loopback address nothing listens on: a dial there
// fails at once.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// statsGets sends n GETs to url through c and reads each body to its
// end; it reports how many failed.
func statsGets(c *http.Client, url string, n int) (failed int) {
	for range n {
		resp, err := c.Get(url)
		if err != nil {
			failed++
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return failed
}

// TestStatsReuseCountsSuccessesOnly: reuse is measured over the requests
// that got a response. A run where every request failed reused nothing
// (it reported 100%: no dial succeeded, so each failure counted as a
// request that did not dial), and failures beside successes do not
// raise the figure.
func TestStatsReuseCountsSuccessesOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	down := "http://" + closedAddr(t) + "/"
	for _, tc := range []struct {
		name       string
		ok, failed int
		reused     int64
		ratio      float64
		inString   string
	}{
		{"all-failed", 0, 5, 0, 0, "reuse=n/a"},
		{"all-succeeded", 10, 0, 9, 0.9, "reuse=90.0%"}, // one dial, nine reuses: as before
		{"mixed", 10, 5, 9, 0.9, "reuse=90.0%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st Stats
			c := New(func(t *Transport) { t.Stats = &st })
			defer c.CloseIdleConnections()
			if n := statsGets(c, srv.URL, tc.ok); n != 0 {
				t.Fatalf("%d of %d requests to a live server failed", n, tc.ok)
			}
			if n := statsGets(c, down, tc.failed); n != tc.failed {
				t.Fatalf("%d of %d requests to a closed port failed", n, tc.failed)
			}
			snap := st.Snapshot()
			if snap.Requests != int64(tc.ok+tc.failed) || snap.Failures != int64(tc.failed) {
				t.Fatalf("requests=%d failures=%d, want %d and %d", snap.Requests, snap.Failures, tc.ok+tc.failed, tc.failed)
			}
			if snap.ReusedConns != tc.reused || snap.ReuseRatio != tc.ratio {
				t.Errorf("ReusedConns=%d ReuseRatio=%v, want %d and %v (%v)", snap.ReusedConns, snap.ReuseRatio, tc.reused, tc.ratio, snap)
			}
			if got := snap.String(); !strings.Contains(got, " "+tc.inString+" ") {
				t.Errorf("String() = %q, want %q", got, tc.inString)
			}
		})
	}
}
