package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// A Stage is one step of a ramp, as k6's ramping stages are: over
// Duration the value moves in a straight line from where the previous
// stage ended (0 for the first) to Rate. In Config.Stages the value is
// the open-loop rate in requests per second, in Config.ConnStages the
// number of connections sending. Up to 1,000 req/s in 30 s, held a
// minute, then down:
//
//	[]load.Stage{
//		{Duration: 30 * time.Second, Rate: 1000},
//		{Duration: time.Minute, Rate: 1000},
//		{Duration: 30 * time.Second, Rate: 0},
//	}
type Stage struct {
	Duration time.Duration // more than 0
	Rate     float64       // the value at the stage's end, 0 or more: requests per second in all, or connections
}

// checkStages returns an error naming the first stage Run cannot ramp,
// what is one of "stage" and "connection stage".
func checkStages(st []Stage, what string) error {
	for i, s := range st {
		switch {
		case s.Duration <= 0:
			return fmt.Errorf("load: %s %d (%s): want a positive duration", what, i+1, formatStages(st[i:i+1]))
		case s.Rate < 0 || math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0):
			return fmt.Errorf("load: %s %d (%s): want a finite value, 0 or more", what, i+1, formatStages(st[i:i+1]))
		}
	}
	return nil
}

// formatStages writes stages as results record them (Result.Stages,
// Result.ConnStages): "30s:1000,1m0s:1000,30s:0", the form the command
// line's --stages takes.
func formatStages(st []Stage) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = s.Duration.String() + ":" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// readStages reverses formatStages, for a result read back (the HTML
// report draws the rate its stages asked for).
func readStages(s string) ([]Stage, error) {
	var out []Stage
	for part := range strings.SplitSeq(s, ",") {
		d, r, _ := strings.Cut(part, ":")
		dur, err := time.ParseDuration(d)
		if err != nil {
			return nil, err
		}
		rate, err := strconv.ParseFloat(r, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, Stage{dur, rate})
	}
	if err := checkStages(out, "stage"); err != nil {
		return nil, err
	}
	return out, nil
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
