package load

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

func TestScheduleAt(t *testing.T) {
	start := time.Unix(100, 0)
	// 3 connections sharing 3000 req/s: each sends every 1 ms, and
	// connection i starts i/3000 s in, so together they send every 333 µs.
	var got []time.Duration
	for i := range 3 {
		s := newSchedule(start, 3000, i, 3)
		for k := range int64(3) {
			got = append(got, s.at(k).Sub(start))
		}
	}
	want := []time.Duration{0, time.Millisecond, 2 * time.Millisecond,
		333333, 1333333, 2333333,
		666667, 1666667, 2666667}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: due at %v, want %v", i, got[i], want[i])
		}
	}
	// No drift: request 3 million of a 7 req/s schedule is due at exactly
	// 3e6/7 s, rounded once.
	s := newSchedule(start, 7, 0, 1)
	if d, want := s.at(3_000_000).Sub(start), time.Duration(428571428571429); d != want {
		t.Errorf("request 3e6 at 7/s: %v, want %v", d, want)
	}
}

func TestScheduleDueBefore(t *testing.T) {
	start := time.Unix(100, 0)
	s := newSchedule(start, 1000, 0, 1) // every 1 ms from 0
	cases := []struct {
		k    int64
		end  time.Duration
		want int64
	}{
		{0, 10 * time.Millisecond, 10},               // 0..9 ms
		{0, 10*time.Millisecond + 1, 11},             // 10 ms is before the end too
		{4, 10 * time.Millisecond, 6},                // 4..9 ms left
		{12, 10 * time.Millisecond, 0},               // already past
		{0, 0, 0},                                    // nothing due before the start
		{0, 999 * time.Microsecond, 1},               // only request 0
		{0, 1000*time.Millisecond - 1, 1000},         // 0..999 ms
		{999, 1000 * time.Millisecond, 1},            // the last one
		{1000, 1000*time.Millisecond + 1, 1},         // exactly at 1000 ms
		{1001, 1000*time.Millisecond + 1, 0},         // none
		{0, -time.Second, 0},                         // end before start
		{5, 5*time.Millisecond + time.Nanosecond, 1}, // request 5 at 5 ms
	}
	for _, c := range cases {
		if got := s.dueBefore(c.k, start.Add(c.end)); got != c.want {
			t.Errorf("dueBefore(%d, start+%v) = %d, want %d", c.k, c.end, got, c.want)
		}
	}
}

// fakeEngine answers every request after service, except the request that
// starts at or after stallAt, which takes stall instead (once). It runs on
// synctest's fake clock, so every time below is exact.
type fakeEngine struct {
	service, stall time.Duration
	stallAt        time.Duration
	start          time.Time
	stalled        bool
}

func (e *fakeEngine) newSlot(*recorder) slot { return &fakeSlot{e: e} }

type fakeSlot struct{ e *fakeEngine }

func (f *fakeSlot) do(s *sample) {
	s.start = time.Now()
	s.reused = true
	d := f.e.service
	if !f.e.stalled && s.start.Sub(f.e.start) >= f.e.stallAt {
		f.e.stalled, d = true, f.e.stall
	}
	time.Sleep(d)
	s.firstByte = time.Now()
	s.end = s.firstByte
	s.status, s.proto = 200, protoHTTP11
}
func (f *fakeSlot) stop()  {}
func (f *fakeSlot) close() {}

// stallRun runs 1 s against a fake server that answers in 100 µs but
// stalls once for 100 ms half way, at 1000 req/s on one connection
// (open loop) or closed loop when rate is 0.
func stallRun(t *testing.T, rate float64) *Result {
	t.Helper()
	var res *Result
	synctest.Test(t, func(t *testing.T) {
		eng := &fakeEngine{service: 100 * time.Microsecond, stall: 100 * time.Millisecond, stallAt: 500 * time.Millisecond, start: time.Now()}
		var err error
		res, err = Run(context.Background(), Config{URL: "http://fake/", Connections: 1, Duration: time.Second, Rate: rate, engine: eng})
		if err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// TestOpenLoopAccuracy checks the open loop on a fake clock: the rate is
// exact, nothing is dropped, and the stall shows in the percentiles as
// the wait of every request that was due during it.
func TestOpenLoopAccuracy(t *testing.T) {
	res := stallRun(t, 1000)
	if res.Sent != 1000 || res.Requests != 1000 || res.Dropped != 0 || res.AchievedRate != 1000 {
		t.Errorf("sent %d, responses %d, dropped %d, achieved %v req/s; want 1000, 1000, 0, 1000", res.Sent, res.Requests, res.Dropped, res.AchievedRate)
	}
	if res.Mode != "open-loop" {
		t.Errorf("mode %q", res.Mode)
	}
	h, err := res.latencyHist()
	if err != nil {
		t.Fatal(err)
	}
	// The request due at 500 ms takes 100 ms. Those due at 501 ... 599 ms
	// wait behind it, and while the backlog drains (100 µs each) ten more
	// fall due, and one more: request 500+j completes at about
	// 600+0.1j ms, latency 100-0.9j ms, for j = 0..110. 111 of 1000
	// requests are slow; a closed loop records one.
	var slow int64
	for _, b := range h.Distribution() {
		if b.From >= 1000 { // ≥ 1 ms
			slow += b.Count
		}
	}
	if slow < 109 || slow > 112 {
		t.Errorf("%d requests over 1 ms, want 111 (those due during the stall and its backlog)", slow)
	}
	// p90 is rank 900: the 11th fastest slow one, 100-0.9*100 = 10 ms.
	if p := res.Latency.P90; p < 9_000 || p > 11_000 {
		t.Errorf("p90 %d µs, want about 10 ms", p)
	}
	// p99 is rank 990: the 101st fastest slow one, 100-0.9*10 = 91 ms.
	if p := res.Latency.P99; p < 89_000 || p > 93_000 {
		t.Errorf("p99 %d µs, want about 91 ms", p)
	}
	if res.Service == nil || res.Service.P99 > 1000 {
		t.Errorf("service time p99 %+v: want 100 µs (one 100 ms outlier of 1000)", res.Service)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
}

// TestClosedLoopHidesStall is the same server in closed loop: the stall
// is one sample of a hundred thousand, and the output says closed-loop.
func TestClosedLoopHidesStall(t *testing.T) {
	res := stallRun(t, 0)
	if res.Mode != "closed-loop" || res.Service != nil || res.Rate != 0 {
		t.Errorf("mode %q service %v rate %v", res.Mode, res.Service, res.Rate)
	}
	if res.Latency.Max < 100_000 || res.Latency.P9999 >= 1000 {
		t.Errorf("max %d µs, p99.99 %d µs: want one 100 ms sample and everything else 100 µs", res.Latency.Max, res.Latency.P9999)
	}
	if want := int64(9000); res.Requests < want {
		t.Errorf("%d requests in 1 s of 100 µs each (less a 100 ms stall), want ≥ %d", res.Requests, want)
	}
}

// TestOpenLoopDropped: a server slower than the schedule leaves sends due
// in the window unstarted; they are counted, and the run warns.
func TestOpenLoopDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng := &fakeEngine{service: 2 * time.Millisecond, stallAt: time.Hour, start: time.Now()}
		res, err := Run(context.Background(), Config{URL: "http://fake/", Connections: 1, Duration: time.Second, Rate: 1000, engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		// 2 ms per request: 500 sent in 1 s, the other 500 due were dropped.
		if res.Sent != 500 || res.Dropped != 500 {
			t.Errorf("sent %d dropped %d, want 500 and 500", res.Sent, res.Dropped)
		}
		if len(res.Warnings) == 0 {
			t.Error("no warning for 50% of the asked rate")
		}
		// The last request was due at 499 ms and sent at 998 ms.
		if lag := res.ScheduleLag.Max; lag < 498_000 || lag > 500_000 {
			t.Errorf("max schedule lag %d µs, want ~499 ms", lag)
		}
	})
}

// -n with --rate ends when the last request is answered: no connection
// waits for a due time past the limit.
func TestOpenLoopRequestLimitEndsOnTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 20, Connections: 10, Requests: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sent=%d elapsed=%.2fs achieved=%.1f/%v warnings=%q", res.Sent, res.ElapsedS, res.AchievedRate, res.Rate, res.Warnings)
	// A connection waiting for a due time past the limit takes about
	// 0.95 s; the achieved rate, which read elapsed time to 0.56 s, left
	// a loaded machine 110 ms for the last round trip and is not checked.
	if res.ElapsedS > 0.8 || res.Sent != 10 {
		t.Errorf("10 requests at 20/s should take ~0.45s; took %.2fs, sent %d", res.ElapsedS, res.Sent)
	}
}

// A NaN rate is refused (it would run closed loop and give a result that
// cannot be written as JSON).
func TestNaNRateRefused(t *testing.T) {
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

// Open loop, -d 1s at 2 req/s on one connection sends at 0 and 0.5 s: the
// throughput is counted over the duration, not to the last answer.
func TestOpenLoopThroughputOverDuration(t *testing.T) {
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
