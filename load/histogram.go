package load

import (
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry. Every latency is recorded in microseconds, so an
// hgrm file or an encoded histogram reads in µs like wrk2's.
const (
	histLowest  = 1             // 1 µs
	histHighest = 3_600_000_000 // 1 h: open-loop latencies grow with the backlog
	histDigits  = 3             // 0.1% value resolution for latency
	phaseDigits = 2             // 1% for the connection phases and the timeline
	usPerSecond = int64(time.Second / time.Microsecond)
)

// newHist returns a latency histogram (3 significant digits).
func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// newPhaseHist returns a histogram for connection phases and timeline
// windows (2 significant digits: a fifth of the memory).
func newPhaseHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, phaseDigits)
}

// micros converts d to whole microseconds clamped to the histograms'
// range, so that RecordValue never fails (and never allocates an error).
func micros(d time.Duration) int64 {
	us := int64(d / time.Microsecond)
	return min(max(us, histLowest), histHighest)
}

// record adds d to h. It does not allocate.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(micros(d)) // micros keeps d in range: no error
}

// encodeHist returns h in HdrHistogram's V2 compressed, base64 form: the
// form the Java, C and Go HdrHistogram tools read, and lossless, so
// decoded histograms merge exactly.
func encodeHist(h *hdrhistogram.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil { // only for an unknown version
		panic(err)
	}
	return string(b)
}

// decodeHist reverses encodeHist. An empty string is an empty histogram
// of geometry like, so that a missing phase merges as nothing.
func decodeHist(s string, like func() *hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return like(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("load: bad encoded histogram: %v", err)
	}
	return h, nil
}

// Percentiles summarises a histogram, in microseconds.
type Percentiles struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min_us"`
	Mean  float64 `json:"mean_us"`
	P50   int64   `json:"p50_us"`
	P90   int64   `json:"p90_us"`
	P99   int64   `json:"p99_us"`
	P999  int64   `json:"p99_9_us"`
	P9999 int64   `json:"p99_99_us"`
	Max   int64   `json:"max_us"`
}

// summarize computes p's fields from h. An empty histogram gives zeros.
func summarize(h *hdrhistogram.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	q := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9, 99.99})
	return Percentiles{
		Count: h.TotalCount(), Min: h.Min(), Mean: h.Mean(),
		P50: q[0], P90: q[1], P99: q[2], P999: q[3], P9999: q[4], Max: h.Max(),
	}
}
