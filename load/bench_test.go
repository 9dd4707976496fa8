package load

import (
	"context"
	"testing"
	"time"
)

// BenchmarkRecord is the recording path alone: one sample into a
// recorder (histograms, counters, timeline). It must not allocate.
func BenchmarkRecord(b *testing.B) {
	start := time.Now()
	rec := newRecorder(&timeline{start: start}, true)
	s := sample{intended: start, start: start.Add(time.Microsecond), firstByte: start.Add(40 * time.Microsecond), end: start.Add(50 * time.Microsecond), status: 200, proto: protoHTTP11, reused: true}
	b.ReportAllocs()
	for b.Loop() {
		s.end = s.end.Add(time.Microsecond) // crosses a timeline second every 10⁶ ops
		rec.add(&s)
	}
}

// BenchmarkFastEngine is one request and its recording on the fast
// engine against hotpath's server on loopback: the whole per-request path
// of a closed-loop run. allocs/op must be 0.
func BenchmarkFastEngine(b *testing.B) {
	base := startHotpath(b)
	cfg, tg, err := Config{URL: base + "/", Connections: 1}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	rec := newRecorder(&timeline{start: time.Now()}, false)
	eng, err := newFastEngine(context.Background(), &cfg, &tg, rec)
	if err != nil {
		b.Fatal(err)
	}
	sl := eng.newSlot(rec)
	defer sl.close()
	var s sample
	sl.do(&s) // dial outside the measurement
	b.ReportAllocs()
	for b.Loop() {
		s = sample{}
		sl.do(&s)
		if s.failed || s.status != 200 {
			b.Fatalf("request failed: %+v", s)
		}
		rec.add(&s)
	}
}
