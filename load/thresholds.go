package load

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A Threshold is a pass/fail condition on a run's result, for CI: a
// metric, a comparison and a bound, written as k6 and the like write them:
//
//	p99<50ms       a latency percentile (any pN: p50, p99.9, ...), max or mean, under a bound
//	errors<0.1%    requests without a valid response, as a share of those sent (or a count: errors<5)
//	rate>99%       open loop: the achieved rate as a share of Config.Rate
//	rps>1000       responses per second
//	status:5xx<1   responses with a status in a class (1xx..5xx) or one code (status:503);
//	               a count, or a share of the responses with %
//
// A count's bound is a whole number: errors<0.01 is refused (it would
// mean no error at all), with a hint to write errors<1% or errors<1.
//
// The comparisons are <, <=, > and >=. Latencies take ns, us (or µs), ms
// and s. Thresholds are evaluated on the final result, and on a merged
// one again from the shards' (Merge), so a sharded run passes or fails as
// one process would on the same load: a result keeps each threshold in
// this form (ThresholdResult.Threshold), and Merge reads it back.
type Threshold string

// Validate returns nil if t is a threshold a run can evaluate, and
// otherwise an error that says what is wrong and how to write it. Run
// refuses a Config whose Thresholds Validate refuses.
func (t Threshold) Validate() error {
	_, err := parseThreshold(t)
	return err
}

// threshold is a Threshold parsed.
type threshold struct {
	expr   Threshold // as written, without surrounding spaces
	metric string    // p99.9, max, mean, errors, rate, rps, status:5xx
	op     string    // <, <=, >, >=
	bound  float64   // µs for latencies, a fraction when share, else a count or a rate
	share  bool      // the bound was a percentage
	pct    float64   // for pN: N
}

// ThresholdResult is a threshold evaluated on a result.
type ThresholdResult struct {
	Threshold Threshold `json:"threshold"` // as written
	Pass      bool      `json:"pass"`
	Value     float64   `json:"value"`          // measured, in the bound's unit (µs, a fraction, a count, req/s)
	Measured  string    `json:"measured"`       // the value as the bound is written: "12.3ms", "0.05%"
	Note      string    `json:"note,omitempty"` // why it could not pass, when that is not the value: "no response was timed"
}

// parseThreshold parses one threshold (see Threshold).
func parseThreshold(s Threshold) (threshold, error) {
	expr := strings.TrimSpace(string(s))
	i := strings.IndexAny(expr, "<>")
	if i <= 0 {
		return threshold{}, fmt.Errorf("load: threshold %q: want METRIC<BOUND or METRIC>BOUND, e.g. p99<50ms, errors<0.1%%, rate>99%%, status:5xx<1", s)
	}
	t := threshold{expr: Threshold(expr), metric: strings.ToLower(strings.TrimSpace(expr[:i])), op: expr[i : i+1]}
	rest := expr[i+1:]
	if strings.HasPrefix(rest, "=") {
		t.op += "="
		rest = rest[1:]
	}
	bound := strings.TrimSpace(rest)
	if bound == "" {
		return threshold{}, fmt.Errorf("load: threshold %q: no bound after %s", s, t.op)
	}
	switch m := t.metric; {
	case m == "max" || m == "mean" || strings.HasPrefix(m, "p"):
		if strings.HasPrefix(m, "p") {
			p, err := strconv.ParseFloat(m[1:], 64)
			if err != nil || p <= 0 || p > 100 {
				return threshold{}, fmt.Errorf("load: threshold %q: %q is no percentile (p50, p99, p99.9 ...)", s, m)
			}
			t.pct = p
		}
		d, err := parseLatency(bound)
		if err != nil {
			return threshold{}, fmt.Errorf("load: threshold %q: %v", s, err)
		}
		t.bound = d
	case m == "errors" || m == "rate" || m == "rps" || strings.HasPrefix(m, "status:"):
		if strings.HasPrefix(m, "status:") && !validStatusClass(m[len("status:"):]) {
			return threshold{}, fmt.Errorf("load: threshold %q: want status:1xx ... status:5xx or a code such as status:503", s)
		}
		v := bound
		if t.share = strings.HasSuffix(v, "%"); t.share {
			v = strings.TrimSuffix(v, "%")
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return threshold{}, fmt.Errorf("load: threshold %q: bound %q is not a number", s, bound)
		}
		if t.share {
			f /= 100
		}
		if m == "rate" && !t.share {
			return threshold{}, fmt.Errorf("load: threshold %q: rate is a share of --rate, e.g. rate>99%%", s)
		}
		if m == "rps" && t.share {
			return threshold{}, fmt.Errorf("load: threshold %q: rps is requests per second, without %%", s)
		}
		if (m == "errors" || strings.HasPrefix(m, "status:")) && !t.share && f != math.Trunc(f) {
			// errors<0.01 would silently mean "no error at all": most
			// likely a share was meant.
			// The whole count offered means what the bound meant.
			lhs, whole := t.metric+t.op, math.Ceil(f)
			if t.op == "<=" || t.op == ">" {
				whole = math.Floor(f)
			}
			hint := fmt.Sprintf("write %s%s%% for a share or %s%v for a count", lhs, strconv.FormatFloat(100*f, 'g', 6, 64), lhs, whole)
			if f > 1 {
				hint = fmt.Sprintf("write a whole number, e.g. %s%v", lhs, whole)
			}
			return threshold{}, fmt.Errorf("load: threshold %q: %s is a count; %s", s, t.metric, hint)
		}
		t.bound = f
	default:
		return threshold{}, fmt.Errorf("load: threshold %q: unknown metric %q (p99, max, mean, errors, rate, rps, status:5xx)", s, m)
	}
	return t, nil
}

// validStatusClass accepts "5xx" style classes and three-digit codes.
func validStatusClass(c string) bool {
	if len(c) != 3 || c[0] < '1' || c[0] > '5' {
		return false
	}
	if c[1:] == "xx" {
		return true
	}
	return c[1] >= '0' && c[1] <= '9' && c[2] >= '0' && c[2] <= '9'
}

// parseLatency parses a duration bound into µs. A bare number is refused:
// the unit is part of the meaning.
func parseLatency(s string) (float64, error) {
	s = strings.ReplaceAll(s, "µs", "us")
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bound %q is not a duration (50ms, 1.5s, 800us)", s)
	}
	if d <= 0 {
		return 0, errors.New("a latency bound must be positive")
	}
	return float64(d) / float64(time.Microsecond), nil
}

// evaluate measures t on res, whose latency histogram is lat (nil when
// the result has none).
func (t threshold) evaluate(res *Result, lat *hdrhistogram.Histogram) ThresholdResult {
	out := ThresholdResult{Threshold: t.expr}
	var v float64
	switch m := t.metric; {
	case m == "max":
		v = float64(res.Latency.Max)
	case m == "mean":
		v = res.Latency.Mean
	case strings.HasPrefix(m, "p"):
		if lat != nil && lat.TotalCount() > 0 {
			v = float64(lat.ValueAtPercentile(t.pct))
		}
	case m == "errors":
		v = float64(res.Errors)
		if t.share {
			v = fraction(res.Errors, res.Sent)
		}
	case m == "rate":
		if res.Rate <= 0 {
			out.Note = "a closed-loop run has no rate to reach: use --rate"
			out.Measured = "n/a"
			return out
		}
		v = res.AchievedRate / res.Rate
	case m == "rps":
		v = res.ReqPerS
	default: // status:
		n := statusCount(res.Status, m[len("status:"):])
		v = float64(n)
		if t.share {
			v = fraction(n, res.Requests)
		}
	}
	out.Value = v
	out.Measured = t.format(v)
	if t.isLatency() && res.Latency.Count == 0 {
		out.Note = "no response was timed"
		return out
	}
	switch t.op {
	case "<":
		out.Pass = v < t.bound
	case "<=":
		out.Pass = v <= t.bound
	case ">":
		out.Pass = v > t.bound
	case ">=":
		out.Pass = v >= t.bound
	}
	return out
}

func (t threshold) isLatency() bool {
	return t.metric == "max" || t.metric == "mean" || strings.HasPrefix(t.metric, "p")
}

// format writes v as the bound is written.
func (t threshold) format(v float64) string {
	switch {
	case t.isLatency():
		return time.Duration(v * float64(time.Microsecond)).Round(time.Microsecond).String()
	case t.share:
		return strconv.FormatFloat(100*v, 'g', 4, 64) + "%"
	case t.metric == "rps":
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func fraction(n, of int64) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// statusCount counts the responses of a class ("5xx") or a code ("503").
func statusCount(status map[string]int64, class string) int64 {
	var n int64
	for code, c := range status {
		if code == class || class[1:] == "xx" && len(code) == 3 && code[0] == class[0] {
			n += c
		}
	}
	return n
}

// evaluateThresholds evaluates the expressions of res.Thresholds again on
// res (a run's result as it is built, or a merge of shards that carried
// them), with lat its latency histogram.
func (res *Result) evaluateThresholds(lat *hdrhistogram.Histogram) {
	for i, tr := range res.Thresholds {
		t, err := parseThreshold(tr.Threshold)
		if err != nil { // read from a file someone edited
			res.Thresholds[i] = ThresholdResult{Threshold: tr.Threshold, Measured: "n/a", Note: err.Error()}
			continue
		}
		res.Thresholds[i] = t.evaluate(res, lat)
	}
}

// ThresholdsPassed reports whether every threshold of the result passed
// (true when it has none).
func (res *Result) ThresholdsPassed() bool {
	for _, t := range res.Thresholds {
		if !t.Pass {
			return false
		}
	}
	return true
}
