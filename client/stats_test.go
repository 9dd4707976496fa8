package client

import (
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
