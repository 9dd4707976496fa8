package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Stage ramps the open-loop rate, as k6's ramping arrival rate does:
// over Duration the rate moves in a straight line from where the previous
// stage ended (0 for the first) to Rate. "30s:1000,1m:1000,30s:0" ramps
// up to 1,000 req/s in 30 s, holds it a minute and ramps down.
type Stage struct {
	Duration time.Duration
	Rate     float64 // requests per second at the stage's end, in all
}

// ParseStages parses "DURATION:RATE,..." (30s:1000,1m:5000,30s:0).
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for _, part := range strings.Split(s, ",") {
		d, r, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("load: stage %q: want DURATION:RATE, e.g. 30s:1000", part)
		}
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("load: stage %q: %q is not a positive duration (30s, 2m)", part, d)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("load: stage %q: %q is not a rate (requests per second, 0 or more)", part, r)
		}
		out = append(out, Stage{dur, rate})
	}
	return out, nil
}

// FormatStages writes stages as ParseStages reads them.
func FormatStages(st []Stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.Duration.String() + ":" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// ramp is the arrival curve of a staged run: the rate is piecewise
// linear in time, and the n-th arrival (from 0) is due when the
// cumulative count N(t) = ∫ rate reaches n.
type ramp struct {
	segs  []rampSeg
	total float64 // N at the end of the last stage
}

type rampSeg struct {
	t0, d  float64 // start and length, in seconds from the run's start
	r0, r1 float64 // rate at the start and at the end
	n0     float64 // arrivals before the segment
}

func newRamp(stages []Stage) *ramp {
	rp := &ramp{}
	t, r, n := 0.0, 0.0, 0.0
	for _, s := range stages {
		d := s.Duration.Seconds()
		rp.segs = append(rp.segs, rampSeg{t0: t, d: d, r0: r, r1: s.Rate, n0: n})
		n += (r + s.Rate) / 2 * d
		t += d
		r = s.Rate
	}
	rp.total = n
	return rp
}

// count returns N(t): the arrivals due before t seconds from the start.
func (rp *ramp) count(t float64) float64 {
	for _, s := range rp.segs {
		if t <= s.t0+s.d {
			tau := max(t-s.t0, 0)
			return s.n0 + s.r0*tau + (s.r1-s.r0)/(2*s.d)*tau*tau
		}
	}
	return rp.total
}

// timeOf returns when arrival n is due, in seconds from the start, and
// false when the stages end before it.
func (rp *ramp) timeOf(n float64) (float64, bool) {
	if n >= rp.total {
		return 0, false
	}
	for _, s := range rp.segs {
		segN := (s.r0 + s.r1) / 2 * s.d
		if n >= s.n0+segN {
			continue
		}
		// Solve n - n0 = r0·τ + a·τ², a = (r1-r0)/(2d), in the form that
		// stays exact when a is 0 or negative.
		m := n - s.n0
		a := (s.r1 - s.r0) / (2 * s.d)
		disc := s.r0*s.r0 + 4*a*m
		den := s.r0 + math.Sqrt(max(disc, 0))
		if den <= 0 {
			return s.t0, true // a zero rate at the start of a ramp: m is 0 here
		}
		return s.t0 + min(2*m/den, s.d), true
	}
	return 0, false
}

// mean is the average rate over the stages.
func (rp *ramp) mean() float64 {
	last := rp.segs[len(rp.segs)-1]
	return rp.total / (last.t0 + last.d)
}

// activeFrom is for connection stages (Config.ConnStages), where the
// stages' values are connection counts: connection g (from 0) runs while
// g < v(t), v the stages' piecewise-linear count. It returns the earliest
// time from t on (seconds from the start) at which g runs, and false when
// it does not before the stages end.
func (rp *ramp) activeFrom(g, t float64) (float64, bool) {
	for _, s := range rp.segs {
		end := s.t0 + s.d
		if t >= end {
			continue
		}
		from := max(t, s.t0)
		v := s.r0 + (s.r1-s.r0)*(from-s.t0)/s.d
		if v > g {
			return from, true
		}
		if s.r1 > s.r0 && s.r1 > g {
			// v reaches g on the way up; just past it g runs.
			at := s.t0 + (g-s.r0)/(s.r1-s.r0)*s.d
			return math.Nextafter(max(at, from), math.Inf(1)), true
		}
	}
	return 0, false
}

// peak is the highest value of the stages.
func (rp *ramp) peak() float64 {
	p := 0.0
	for _, s := range rp.segs {
		p = max(p, s.r1)
	}
	return p
}
