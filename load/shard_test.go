package load

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// dueEngine answers every request after service on the fake clock and
// notes each request's intended send time, relative to base.
type dueEngine struct {
	service time.Duration
	base    time.Time
	mu      sync.Mutex
	due     []time.Duration
}

func (e *dueEngine) newSlot(*recorder) slot { return &dueSlot{e: e} }

type dueSlot struct{ e *dueEngine }

func (d *dueSlot) do(s *sample) {
	d.e.mu.Lock()
	d.e.due = append(d.e.due, s.intended.Sub(d.e.base))
	d.e.mu.Unlock()
	s.start = time.Now()
	s.reused = true
	time.Sleep(d.e.service)
	s.firstByte = time.Now()
	s.end = s.firstByte
	s.status, s.proto = 200, protoHTTP11
}
func (d *dueSlot) stop()  {}
func (d *dueSlot) close() {}

// TestShardsAreOneRun runs one open-loop load as 4 shards (on the fake
// clock, so every time is exact) and the same load as one process: the
// shards' sends are the single run's sends, due at the same instants
// (their arrivals interleave as one schedule), and the merged result has
// the single run's counts, rate and latency histogram, bucket for bucket.
func TestShardsAreOneRun(t *testing.T) {
	const shards = 4
	cfg := Config{URL: "http://fake/", Connections: 10, Rate: 1000, Duration: time.Second, RunID: "r1"}
	singles, singleDue := runOnFakeClock(t, cfg, 1, 300*time.Microsecond)
	parts, shardDue := runOnFakeClock(t, cfg, shards, 300*time.Microsecond)
	if t.Failed() {
		return
	}
	single := singles[0]
	slices.Sort(singleDue)
	slices.Sort(shardDue)
	if len(singleDue) != 1000 || !slices.Equal(singleDue, shardDue) {
		t.Fatalf("the shards sent %d requests, the single run %d; same due times: %v", len(shardDue), len(singleDue), slices.Equal(singleDue, shardDue))
	}
	var conns int
	for i, p := range parts {
		if p.Shard == nil || p.Shard.Index != i || p.Shard.Count != shards || p.Shard.RunID != "r1" || p.Shard.LateUS != 0 {
			t.Errorf("shard %d: %+v", i, p.Shard)
		}
		conns += p.Connections
	}
	if parts[0].Connections != 3 || parts[3].Connections != 2 || conns != 10 {
		t.Errorf("connections per shard %d..%d, %d in all; want 3,3,2,2 = 10", parts[0].Connections, parts[3].Connections, conns)
	}
	m, err := Merge(parts[2], parts[0], parts[3], parts[1])
	if err != nil {
		t.Fatal(err)
	}
	if m.Sent != single.Sent || m.Requests != single.Requests || m.AchievedRate != 1000 || m.Rate != 1000 || m.Connections != 10 {
		t.Errorf("merged: sent %d requests %d achieved %v rate %v conns %d; single: %d %d %v", m.Sent, m.Requests, m.AchievedRate, m.Rate, m.Connections, single.Sent, single.Requests, single.AchievedRate)
	}
	if m.Shard == nil || m.Shard.Index != -1 || len(m.Shard.Merged) != shards || len(m.Shard.Missing) != 0 || m.Shard.SkewUS != 0 {
		t.Errorf("merged shard info %+v", m.Shard)
	}
	mh, err := m.latencyHist()
	if err != nil {
		t.Fatal(err)
	}
	sh, err := single.latencyHist()
	if err != nil {
		t.Fatal(err)
	}
	if !histEqual(mh.Distribution(), sh.Distribution()) || mh.TotalCount() != 1000 {
		t.Errorf("merged latency histogram differs from the single run's (%d vs %d values)", mh.TotalCount(), sh.TotalCount())
	}
}

// runOnFakeClock runs cfg on the fake clock as shards processes started
// together (1: one process, cfg as given), each request taking service,
// and returns their results and every request's due time.
func runOnFakeClock(t *testing.T, cfg Config, shards int, service time.Duration) (res []*Result, due []time.Duration) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		eng := &dueEngine{service: service}
		start := time.Now().Add(time.Second)
		eng.base = start
		res = make([]*Result, shards)
		var wg sync.WaitGroup
		for i := range shards {
			c := cfg
			c.StartAt, c.engine = start, eng
			if shards > 1 {
				c.Shard, c.Shards = i, shards
			}
			wg.Go(func() {
				r, err := Run(context.Background(), c)
				if err != nil {
					t.Error(err)
				}
				res[i] = r
			})
		}
		wg.Wait()
		due = eng.due
	})
	return res, due
}

func histEqual[B comparable](a, b []B) bool { return slices.Equal(a, b) }

// TestShareSplitsExactly: the parts of n over s shards add up to n and
// differ by at most one.
func TestShareSplitsExactly(t *testing.T) {
	for _, n := range []int64{1, 7, 10, 100, 1001} {
		for s := 1; s <= 8; s++ {
			var sum int64
			for i := range s {
				p := share(n, i, s)
				if p < n/int64(s) || p > n/int64(s)+1 {
					t.Errorf("share(%d, %d, %d) = %d", n, i, s, p)
				}
				sum += p
			}
			if sum != n {
				t.Errorf("shares of %d over %d add to %d", n, s, sum)
			}
		}
	}
}

// TestShardedRequestsSplit: -n is the whole run's, split exactly.
func TestShardedRequestsSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var total int64
		for i := range 3 {
			eng := &dueEngine{service: time.Millisecond}
			res, err := Run(context.Background(), Config{URL: "http://fake/", Connections: 3, Requests: 100, Shard: i, Shards: 3, engine: eng})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{34, 33, 33}[i]; res.Sent != want {
				t.Errorf("shard %d sent %d, want %d", i, res.Sent, want)
			}
			total += res.Sent
		}
		if total != 100 {
			t.Errorf("%d sent in all, want 100", total)
		}
	})
}

func TestShardConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{URL: "http://x/", Shard: 4, Shards: 4},
		{URL: "http://x/", Shard: -1, Shards: 4},
		{URL: "http://x/", Shard: 1},
		{URL: "http://x/", Shards: 20, Connections: 10},
		{URL: "http://x/", Shards: 4, Requests: 3},
	} {
		if _, _, err := c.withDefaults(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// shardResult is a tiny result of shard i of a run.
func shardResult(t *testing.T, i, count int, runID string, late time.Duration, sent int64) *Result {
	t.Helper()
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		eng := &dueEngine{service: time.Millisecond}
		var err error
		res, err = Run(context.Background(), Config{URL: "http://fake/", Connections: count, Requests: sent * int64(count), Shard: i, Shards: count, RunID: runID, engine: eng})
		if err != nil {
			t.Fatal(err)
		}
	})
	if res.Shard != nil {
		res.Shard.LateUS = late.Microseconds()
	}
	return res
}

// TestMergeShards: duplicates are kept once (the fuller report), missing
// shards are listed and warned about, the start skew is measured, and
// results of other runs or shard counts are refused.
func TestMergeShards(t *testing.T) {
	a := shardResult(t, 0, 3, "run", 0, 5)
	b := shardResult(t, 1, 3, "run", 2*time.Millisecond, 5)
	bShort := shardResult(t, 1, 3, "run", 0, 2)
	m, err := Merge(a, bShort, b)
	if err != nil {
		t.Fatal(err)
	}
	sh := m.Shard
	if !slices.Equal(sh.Merged, []int{0, 1}) || !slices.Equal(sh.Missing, []int{2}) || !slices.Equal(sh.Duplicates, []int{1}) {
		t.Errorf("merged %v missing %v duplicates %v", sh.Merged, sh.Missing, sh.Duplicates)
	}
	if m.Sent != 10 || m.Sources != 2 {
		t.Errorf("sent %d from %d sources, want 10 from 2 (the shorter duplicate dropped)", m.Sent, m.Sources)
	}
	if want := (b.Start.Sub(a.Start) + 2*time.Millisecond).Abs().Microseconds(); sh.SkewUS != want {
		t.Errorf("skew %d µs, want %d", sh.SkewUS, want)
	}
	warn := strings.Join(m.Warnings, "\n")
	if !strings.Contains(warn, "shards missing: [2]") || !strings.Contains(warn, "more than once: [1]") {
		t.Errorf("warnings %q", m.Warnings)
	}
	for _, bad := range []*Result{
		shardResult(t, 2, 3, "other", 0, 5),
		shardResult(t, 2, 4, "run", 0, 5),
	} {
		if _, err := Merge(a, bad); err == nil {
			t.Errorf("merged a shard of run %q (%d shards) into run %q", bad.Shard.RunID, bad.Shard.Count, a.Shard.RunID)
		}
	}
	plain := shardResult(t, 0, 1, "", 0, 5)
	plain.Shard = nil
	if _, err := Merge(a, plain); err == nil {
		t.Error("merged a shard with a run that is not sharded")
	}
	var buf bytes.Buffer
	if err := m.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(&buf)
	if err != nil || back.Shard == nil || !slices.Equal(back.Shard.Missing, []int{2}) {
		t.Fatalf("JSON round trip: %v %+v", err, back)
	}
}

// TestLongRunMemoryBounded: a 24-hour open-loop run on the fake clock
// keeps a bounded timeline (under maxWindows windows, coarsened to 128 s)
// and a result well under 50 MB.
func TestLongRunMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 24 hours (about a second of CPU)")
	}
	synctest.Test(t, func(t *testing.T) {
		eng := &dueEngine{service: 200 * time.Microsecond}
		res, err := Run(context.Background(), Config{URL: "http://fake/", Connections: 2, Rate: 1, Duration: 24 * time.Hour, engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 86400 {
			t.Errorf("sent %d, want %d", res.Sent, 86400)
		}
		if n := len(res.Timeline); n > maxWindows || n < maxWindows/2 {
			t.Errorf("%d timeline windows, want between %d and %d", n, maxWindows/2, maxWindows)
		}
		var reqs int64
		for _, w := range res.Timeline {
			reqs += w.Requests
			if w.WidthS != 128 {
				t.Fatalf("window at %d s is %d s wide, want 128", w.T, w.WidthS)
			}
		}
		if reqs != res.Requests {
			t.Errorf("timeline holds %d responses, the run %d", reqs, res.Requests)
		}
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if buf.Len() > 50<<20 {
			t.Errorf("result JSON %d bytes, want under 50 MB", buf.Len())
		}
		t.Logf("24 h: %d windows of %d s, JSON %d bytes", len(res.Timeline), res.Timeline[0].WidthS, buf.Len())
	})
}

// Merge refuses runs of different methods, keep-alive or body handling.
func TestMergeRefusesIncompatible(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	a, err := Run(context.Background(), Config{URL: srv.URL, Requests: 10, Connections: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(context.Background(), Config{URL: srv.URL, Requests: 10, Connections: 1, Method: "POST", DisableKeepAlive: true, ResponseBody: ResponseBody{Mode: CloseBody}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(a, b)
	if err == nil {
		t.Errorf("merged GET/keepalive/drain with POST/no-keepalive/close: method=%s keepalive=%v body=%s", m.Method, m.KeepAlive, m.ResponseBody)
	}
}
