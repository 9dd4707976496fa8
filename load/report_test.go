package load

import (
	"bytes"
	"strings"
	"testing"
)

func TestReports(t *testing.T) {
	open, closed := stallRun(t, 1000), stallRun(t, 0)

	var b bytes.Buffer
	if err := closed.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Latency (closed-loop", "use --rate", "Status      200=", "reuse 100.0%", "p99.99"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("closed-loop summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	open.WriteText(&b)
	for _, want := range []string{"Latency (open-loop", "coordinated omission corrected", "schedule lag", "sent 1,000 req/s of 1,000 asked = 100.00%, 0 dropped"} {
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
