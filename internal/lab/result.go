package lab

import (
	"fmt"
	"math"
	"time"
)

// Metric describes one measured quantity.
type Metric struct {
	// Name is the unit-bearing name shown in tables: "ns/op", "req/s".
	Name string `json:"name"`
	// LowerIsBetter is true for costs (time, bytes, allocations, CPU).
	LowerIsBetter bool `json:"lower_is_better"`
	// Floor is the smallest value told apart from zero (0.01 allocs/op):
	// ratios use max(value, Floor) so a cost that drops to zero gives a
	// large finite ratio, not +Inf.
	Floor float64 `json:"floor"`
}

// The metrics the experiments use.
var (
	NsPerOp      = Metric{Name: "ns/op", LowerIsBetter: true, Floor: 0.1}
	BytesPerOp   = Metric{Name: "B/op", LowerIsBetter: true, Floor: 1}
	AllocsPerOp  = Metric{Name: "allocs/op", LowerIsBetter: true, Floor: 0.01}
	ReqPerSec    = Metric{Name: "req/s", Floor: 1}
	LatMeanUs    = Metric{Name: "mean µs", LowerIsBetter: true, Floor: 0.1}
	LatP50Us     = Metric{Name: "p50 µs", LowerIsBetter: true, Floor: 0.1}
	LatP99Us     = Metric{Name: "p99 µs", LowerIsBetter: true, Floor: 0.1}
	ClientCPUUs  = Metric{Name: "client CPU-µs/req", LowerIsBetter: true, Floor: 0.01}
	ServerCPUUs  = Metric{Name: "server CPU-µs/req", LowerIsBetter: true, Floor: 0.01}
	ServerAllocs = Metric{Name: "server allocs/req", LowerIsBetter: true, Floor: 0.01}
	ConnsPer1k   = Metric{Name: "new conns/1k req", LowerIsBetter: true, Floor: 0.01}
	Goroutines   = Metric{Name: "server goroutines", LowerIsBetter: true, Floor: 1}
)

// Stat summarizes repeated measurements: the median and a confidence
// interval around it (95% where there are enough runs; see Confidence).
type Stat struct {
	Median     float64   `json:"median"`
	Lo         float64   `json:"lo"`
	Hi         float64   `json:"hi"`
	Confidence float64   `json:"confidence"`
	Values     []float64 `json:"values"`
}

// Arm is one variant of the code under test and its measurements.
type Arm struct {
	// Name is short: "before", "after", "fasthttp", "pool @200 conns".
	Name string `json:"name"`
	// Code is the heart of the code measured, as a reader would write it.
	Code string `json:"code,omitempty"`
	// Stats holds the summary of each metric, by Metric.Name.
	Stats map[string]Stat `json:"stats"`

	samples map[string][]float64
}

// Claim is what a seed says about a comparison.
type Claim struct {
	// Quote is the seed's words and numbers.
	Quote string `json:"quote"`
	// Ratio is the claimed improvement factor (after better when > 1).
	// Zero means the seed claims a direction only.
	Ratio float64 `json:"ratio"`
	// Info marks a comparison the seed makes no claim about: it is shown
	// but has no verdict and does not count in the experiment's verdict.
	Info bool `json:"info,omitempty"`
	// Same marks a claim of no real difference ("unaffected"): Ratio is
	// then about 1 and is confirmed by a median inside its band whatever
	// the direction. Without it a ratio near 1 still claims a direction
	// ("0.9×: slower").
	Same bool `json:"same,omitempty"`
}

// Comparison is one claim checked against the measurement.
type Comparison struct {
	Name     string  `json:"name"`
	Before   string  `json:"before"`
	After    string  `json:"after"`
	Metric   string  `json:"metric"`
	Claim    Claim   `json:"claim"`
	Measured Stat    `json:"measured"`
	Verdict  Verdict `json:"verdict"`
	Why      string  `json:"why"`
	// AfterZero is set when the "after" arm's cost is ~0 (at the metric's
	// floor): the ratio is then only a lower bound, shown as "→ 0".
	AfterZero bool `json:"after_zero,omitempty"`
}

// MeasuredText prints the measured ratio and its interval, or "→ 0" when
// the after arm's cost vanished.
func (c Comparison) MeasuredText() (ratio, ci string) {
	if c.AfterZero {
		return "→ 0", "cost gone"
	}
	return FormatRatio(c.Measured.Median), FormatRatio(c.Measured.Lo) + "–" + FormatRatio(c.Measured.Hi)
}

// Result is what an experiment reports.
type Result struct {
	ID    string `json:"id"`
	Seed  string `json:"seed"`
	Title string `json:"title"`
	// Setup says how it was measured: sizes, concurrency, where the
	// server ran, what is and is not counted.
	Setup string `json:"setup"`
	// SameWork says what the same-work check compared.
	SameWork    string       `json:"same_work"`
	Metrics     []Metric     `json:"metrics"`
	Arms        []*Arm       `json:"arms"`
	Comparisons []Comparison `json:"comparisons"`
	// Runs is how many runs each arm got (more than the budget's when the
	// adaptive stop added runs for an inconclusive claim).
	Runs int `json:"runs"`
	// Verdict summarizes the comparisons; Why says why in one line.
	Verdict Verdict `json:"verdict"`
	Why     string  `json:"why"`
	// Notes explain a disagreement with the seed or a limit of the method.
	Notes    []string      `json:"notes,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Err      string        `json:"error,omitempty"`
}

// newResult starts a result with the given metrics and arms (the runner
// adds the experiment's identity).
func newResult(metrics []Metric, arms ...*Arm) *Result {
	return &Result{Metrics: metrics, Arms: arms}
}

// arm returns the arm named name, or nil.
func (r *Result) arm(name string) *Arm {
	for _, a := range r.Arms {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func (r *Result) metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// samples returns a copy of every arm's raw samples, by arm name and
// metric, for a later round to continue from (Env.carry).
func (r *Result) samples() map[string]map[string][]float64 {
	out := map[string]map[string][]float64{}
	for _, a := range r.Arms {
		ms := map[string][]float64{}
		for m, vs := range a.samples {
			ms[m] = append([]float64(nil), vs...)
		}
		out[a.Name] = ms
	}
	return out
}

// runsText says how many runs each arm got.
func (r *Result) runsText() string {
	if r.Runs == 1 {
		return "1 run per arm"
	}
	return fmt.Sprintf("%d runs per arm", r.Runs)
}

// record adds one run's value of a metric to an arm.
func (a *Arm) record(metric string, v float64) {
	if a.samples == nil {
		a.samples = map[string][]float64{}
	}
	a.samples[metric] = append(a.samples[metric], v)
}

// summarize computes every arm's Stats from its samples.
func (r *Result) summarize() {
	for _, a := range r.Arms {
		a.Stats = map[string]Stat{}
		for m, vs := range a.samples {
			a.Stats[m] = summarize(vs)
		}
	}
}

// compare adds a comparison of metric between arms before and after,
// judged against claim. The measured ratio is computed run by run (runs
// are interleaved, so run i of both arms saw the same machine state).
func (r *Result) compare(name, before, after string, m Metric, claim Claim) {
	c := Comparison{Name: name, Before: before, After: after, Metric: m.Name, Claim: claim}
	b, a := r.arm(before), r.arm(after)
	if b == nil || a == nil || len(b.samples[m.Name]) == 0 || len(a.samples[m.Name]) == 0 {
		c.Verdict, c.Why = NotReproducible, fmt.Sprintf("no measurement of %s for %q and %q", m.Name, before, after)
		r.Comparisons = append(r.Comparisons, c)
		return
	}
	bs, as := b.samples[m.Name], a.samples[m.Name]
	n := min(len(bs), len(as))
	ratios := make([]float64, n)
	for i := range n {
		ratios[i] = improvement(m, bs[i], as[i])
	}
	c.Measured = summarize(ratios)
	afterZero := median(as) <= m.Floor && median(bs) > m.Floor
	c.AfterZero = afterZero
	if claim.Info {
		c.Verdict, c.Why = Info, "no claim in the seed; shown for context"
	} else {
		c.Verdict, c.Why = judge(claim, c.Measured, afterZero)
	}
	r.Comparisons = append(r.Comparisons, c)
}

// improvement is the factor by which after beats before on m.
func improvement(m Metric, before, after float64) float64 {
	before, after = math.Max(before, m.Floor), math.Max(after, m.Floor)
	if m.LowerIsBetter {
		return before / after
	}
	return after / before
}

// finish sets the experiment's verdict from its comparisons, with why as
// the one-line explanation (computed by the experiment from its figures).
func (r *Result) finish(why string, notes ...string) {
	r.Verdict = Overall(r.Comparisons)
	r.Why = why
	r.Notes = append(r.Notes, notes...)
}

// median returns the median of metric for the arm named name (NaN if
// none), for explanations computed from the figures.
func (r *Result) median(arm, metric string) float64 {
	if a := r.arm(arm); a != nil {
		if s, ok := a.Stats[metric]; ok {
			return s.Median
		}
	}
	return math.NaN()
}
