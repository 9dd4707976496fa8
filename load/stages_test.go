package load

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// Run refuses stages it cannot ramp (the command line's parser makes
// none, a library user may), and a result's stages read back as written.
func TestStagesChecked(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://x/", Stages: []Stage{{time.Second, 10}, {0, 10}}}, "stage 2 (0s:10): want a positive duration"},
		{Config{URL: "http://x/", Stages: []Stage{{-time.Second, 10}}}, "stage 1 (-1s:10): want a positive duration"},
		{Config{URL: "http://x/", Stages: []Stage{{time.Second, -5}}}, "stage 1 (1s:-5): want a finite value"},
		{Config{URL: "http://x/", Stages: []Stage{{time.Second, math.NaN()}}}, "want a finite value"},
		{Config{URL: "http://x/", ConnStages: []Stage{{time.Second, math.Inf(1)}}}, "connection stage 1 (1s:+Inf): want a finite value"},
	} {
		if _, err := Run(context.Background(), tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.cfg.Stages, err, tc.want)
		}
	}
	st := []Stage{{30 * time.Second, 1000}, {time.Minute, 5000.5}, {30 * time.Second, 0}}
	text := formatStages(st)
	if back, err := readStages(text); text != "30s:1000,1m0s:5000.5,30s:0" || err != nil || !slices.Equal(back, st) {
		t.Errorf("formatStages %q, read back %v, %v", text, back, err)
	}
	for _, bad := range []string{"", "30s", "x:1", "1s:x", "0s:1"} {
		if _, err := readStages(bad); err == nil {
			t.Errorf("readStages(%q) accepted", bad)
		}
	}
}

// The ramp's arrival times invert its count: N(timeOf(n)) = n.
func TestRampInverts(t *testing.T) {
	st := []Stage{{2 * time.Second, 100}, {3 * time.Second, 100}, {time.Second, 400}, {2 * time.Second, 0}}
	rp := newRamp(st)
	if want := 100.0 + 300 + 250 + 400; math.Abs(rp.total-want) > 1e-9 {
		t.Fatalf("total %v, want %v", rp.total, want)
	}
	prev := -1.0
	for n := 0.0; n < rp.total; n += 0.5 {
		tt, ok := rp.timeOf(n)
		if !ok || tt < prev {
			t.Fatalf("timeOf(%v) = %v, %v (previous %v)", n, tt, ok, prev)
		}
		if got := rp.count(tt); math.Abs(got-n) > 1e-6 {
			t.Fatalf("count(timeOf(%v)) = %v", n, got)
		}
		prev = tt
	}
	if _, ok := rp.timeOf(rp.total); ok {
		t.Error("an arrival past the stages' end")
	}
}

// TestStagesAchieveEachRate: a 3-stage ramp (up to 1,000 req/s in 1 s,
// hold 1 s, down to 0 in 1 s) on the fake clock, as one process and as 3
// shards: each stage sends what its rate asks within 1% (500, 1,000 and
// 500 requests), and the shards send the single run's due times.
func TestStagesAchieveEachRate(t *testing.T) {
	stages := []Stage{{time.Second, 1000}, {time.Second, 1000}, {time.Second, 0}}
	cfg := Config{URL: "http://fake/", Connections: 12, Stages: stages}
	run := func(shards int) ([]*Result, []time.Duration) {
		return runOnFakeClock(t, cfg, shards, 200*time.Microsecond)
	}
	single, due := run(1)
	if t.Failed() {
		return
	}
	var perStage [3]int
	for _, d := range due {
		perStage[min(int(d/time.Second), 2)]++
	}
	for i, want := range []float64{500, 1000, 500} {
		if got := float64(perStage[i]); math.Abs(got-want) > 0.01*want {
			t.Errorf("stage %d sent %v requests, want %v within 1%%", i+1, got, want)
		}
	}
	r := single[0]
	if r.Mode != "open-loop" || r.Stages != "1s:1000,1s:1000,1s:0" || r.DurationS != 3 || math.Abs(r.Rate-2000.0/3) > 1e-9 || r.Sent != 2000 || r.Dropped != 0 {
		t.Errorf("result: mode %s stages %q duration %v rate %v sent %d dropped %d", r.Mode, r.Stages, r.DurationS, r.Rate, r.Sent, r.Dropped)
	}
	parts, shardDue := run(3)
	if t.Failed() {
		return
	}
	slices.Sort(due)
	slices.Sort(shardDue)
	if !slices.Equal(due, shardDue) {
		t.Errorf("3 shards sent %d requests at other due times than the single run's %d", len(shardDue), len(due))
	}
	m, err := Merge(parts...)
	if err != nil || m.Sent != 2000 {
		t.Errorf("merged shards: %v, sent %d", err, m.Sent)
	}
}

// TestDroppedSendsAreCensoredSamples: a server that stalls near the end of
// an open-loop run leaves sends due and never started; each enters the
// latency histogram with its delay until the end (a lower bound), so the
// stall shows in the percentiles rather than thinning them.
func TestDroppedSendsAreCensoredSamples(t *testing.T) {
	rs, _ := runOnFakeClock(t, Config{URL: "http://fake/", Connections: 1, Rate: 100, Duration: time.Second}, 1, 600*time.Millisecond)
	if t.Failed() {
		return
	}
	res := rs[0]
	// Sent at 0 and (late) at 0.6 s, ended at 0.6 and 1.2 s; the 98 due
	// at 0.02 ... 0.99 s never started.
	if res.Sent != 2 || res.Dropped != 98 || res.Censored != 98 || res.Latency.Count != 100 {
		t.Fatalf("sent %d dropped %d censored %d latency count %d; want 2, 98, 98, 100", res.Sent, res.Dropped, res.Censored, res.Latency.Count)
	}
	// The median is a censored delay of about half a second: without them
	// it would be the 600 ms of the first request alone.
	if p50 := time.Duration(res.Latency.P50) * time.Microsecond; p50 < 400*time.Millisecond || p50 > 600*time.Millisecond {
		t.Errorf("p50 %v, want about 0.5 s", p50)
	}
}

// TestConnStagesRampConnections: closed loop with connection stages (up to
// 10 in 1 s, hold 1 s, down to 0 in 1 s), each request taking 10 ms on
// the fake clock: connection g sends while g < the stages' count, so the
// stages carry about 550, 1,000 and 550 requests (5.5, 10 and 5.5
// connection-seconds at 100 requests each).
func TestConnStagesRampConnections(t *testing.T) {
	stages := []Stage{{time.Second, 10}, {time.Second, 10}, {time.Second, 0}}
	rs, _ := runOnFakeClock(t, Config{URL: "http://fake/", ConnStages: stages}, 1, 10*time.Millisecond)
	if t.Failed() {
		return
	}
	res := rs[0]
	if res.Mode != "closed-loop" || res.Connections != 10 || res.ConnStages != "1s:10,1s:10,1s:0" || res.DurationS != 3 {
		t.Fatalf("mode %s connections %d stages %q duration %v", res.Mode, res.Connections, res.ConnStages, res.DurationS)
	}
	var per [3]int64
	for _, w := range res.Timeline {
		per[min(w.T, 2)] += w.Requests
	}
	for i, want := range []float64{550, 1000, 550} {
		if got := float64(per[i]); math.Abs(got-want) > 0.03*want {
			t.Errorf("stage %d: %v requests, want about %v (within 3%%); all %v", i+1, got, want, per)
		}
	}
}
