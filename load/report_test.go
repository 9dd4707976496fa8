package load

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReports(t *testing.T) {
	open, closed := stallRun(t, 1000), stallRun(t, 0)

	var b bytes.Buffer
	if err := closed.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "schedule lag") {
		t.Errorf("closed-loop summary speaks of schedule lag:\n%s", b.String())
	}
	for _, want := range []string{"Latency (closed-loop", "use --rate", "Status      200=", "reuse 100.0%", "p99.99"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("closed-loop summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	open.WriteText(&b)
	// The note under the table says why schedule lag can read above
	// latency (issue 40: lag p50 543µs over latency p50 86µs, unexplained).
	for _, want := range []string{"Latency (open-loop", "coordinated omission corrected", "schedule lag", "sent 1,000 req/s of 1,000 asked = 100.00%, 0 dropped",
		"schedule lag: actual send - due time", "not charged to latency", "so lag exceeds latency where"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("open-loop summary lacks %q:\n%s", want, b.String())
		}
	}

	b.Reset()
	if err := open.WriteHgrm(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Value\tPercentile\tTotalCount\t1/(1-Percentile)") || !strings.Contains(b.String(), "Total count    =         1000") {
		t.Errorf("hgrm output:\n%s", b.String())
	}

	b.Reset()
	if err := open.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if n := strings.Count(html, "<svg"); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	if strings.Contains(html, "<script") || strings.Contains(html, "src=") || strings.Contains(html, "href=") {
		t.Error("the HTML report must be self-contained: no scripts, no external resources")
	}
	if !strings.Contains(html, "schedule lag: actual send - due time") || !strings.Contains(html, "less the generator&#39;s own lateness") {
		t.Error("the HTML report does not say what latency and schedule lag measure")
	}
	if !strings.Contains(html, "polyline") || !strings.Contains(html, "99.9%") {
		t.Error("the charts have no lines or no percentile axis")
	}
}

func TestCountFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
	for v, want := range map[int64]string{5: "5µs", 1500: "1.50ms", 2_500_000: "2.50s"} {
		if got := us(v); got != want {
			t.Errorf("us(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestAxisHelpers(t *testing.T) {
	for v, want := range map[float64]string{0: "0 µs", 250: "250 µs", 1500: "1.5 ms", 1000: "1 ms", 100_000: "100 ms", 2_000_000: "2 s", 12_345: "12.3 ms"} {
		if got := durLabel(v); got != want {
			t.Errorf("durLabel(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0: "0", 500: "500", 75_000: "75k", 1_500_000: "1.5M", 20_000: "20k"} {
		if got := countLabel(v); got != want {
			t.Errorf("countLabel(%v) = %q, want %q", v, got, want)
		}
	}
	for x, want := range map[float64]string{1: "0%", 10: "90%", 100: "99%", 1000: "99.9%", 1e6: "99.9999%"} {
		if got := pctLabel(x); got != want {
			t.Errorf("pctLabel(%v) = %q, want %q", x, got, want)
		}
	}
	ticks := func(a axis) string {
		var s []string
		for _, t := range a.ticks {
			s = append(s, a.label(t))
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		a    axis
		want string
	}{
		// Whole seconds, never 0.667 s.
		{linearAxis(0, 4, 10, true, secsLabel), "0 s 1 s 2 s 3 s 4 s"},
		{linearAxis(0, 5, 10, true, secsLabel), "0 s 1 s 2 s 3 s 4 s 5 s"},
		{linearAxis(0, 30, 10, true, secsLabel), "0 s 5 s 10 s 15 s 20 s 25 s 30 s"},
		{linearAxis(0, 2, 10, true, secsLabel), "0 s 1 s 2 s"},
		// Counts in 1-2-5 steps, SI labels, the top rounded up.
		{linearAxis(0, 88_293, 6, true, countLabel), "0 20k 40k 60k 80k 100k"},
		{linearAxis(0, 7, 6, true, countLabel), "0 2 4 6 8"},
		// Latency: 1-2-5 per decade over a short range, decades over a long one.
		{logAxis(120, 900, durLabel), "100 µs 200 µs 500 µs 1 ms"},
		{logAxis(60, 1_000_000, durLabel), "100 µs 1 ms 10 ms 100 ms 1 s"},
	} {
		if got := ticks(tc.a); got != tc.want {
			t.Errorf("ticks %q, want %q", got, tc.want)
		}
	}
	if a := logAxis(60, 1_000_000, durLabel); a.lo != 50 || a.hi != 1_000_000 {
		t.Errorf("log axis covers %v-%v, want 50-1e6", a.lo, a.hi)
	}
}

// TestHTMLPartialSecond: the last second of a run that did not last a
// whole number of seconds is not drawn as if it were one (its count looks
// like a collapse); the caption says so.
func TestHTMLPartialSecond(t *testing.T) {
	res := resultOf(t, spread(100, time.Millisecond, time.Microsecond), 200)
	res.DurationS, res.ElapsedS = 2.3, 2.3
	hist := res.Timeline[0].Hist
	res.Timeline = []Window{
		{T: 0, Requests: 1000, P50: 100, P99: 900, Max: 5000, Hist: hist},
		{T: 1, Requests: 1100, P50: 110, P99: 950, Max: 4000, Hist: hist},
		{T: 2, Requests: 300, P50: 120, P99: 990, Max: 3000, Hist: hist},
	}
	full, partial := res.wholeSeconds()
	if len(full) != 2 || len(partial) != 1 || partial[0].T != 2 {
		t.Fatalf("whole seconds %v, partial %v; want seconds 0 and 1 whole, 2 partial", full, partial)
	}
	var b bytes.Buffer
	if err := res.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, "last 300 ms (from 2 s on: 300 responses and errors) is not a whole second and is not drawn") {
		t.Errorf("the caption does not mark the partial last second:\n%s", html)
	}
	// Drawn at the middle of each whole second: two points per line.
	rate := html[strings.Index(html, "<h2>Throughput"):strings.Index(html, "<h2>Latency by percentile")]
	if n := strings.Count(rate, "<circle"); n != 2 {
		t.Errorf("throughput chart has %d points, want 2 (the partial second dropped)", n)
	}
	for _, bad := range []string{"e+0", "0.667", "NaN", "Inf"} {
		if strings.Contains(html, bad) {
			t.Errorf("the report contains %q", bad)
		}
	}
	for _, want := range []string{"latency (log scale)", "responses per second", "time since start of the run", "p50 (median)", "Figure 1.", "Figure 2.", "Figure 3."} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// A run whose whole seconds end exactly: nothing is dropped.
	res.ElapsedS, res.DurationS = 3, 3
	if _, partial := res.wholeSeconds(); len(partial) != 0 {
		t.Errorf("a 3 s run has partial seconds %v", partial)
	}
}
