package lab

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// confidence is the level of the intervals the lab reports.
const confidence = 0.95

// summarize returns the median of vs and a distribution-free confidence
// interval for it (benchmath.AssumeNothing: order statistics, no
// normality assumed). With fewer than 6 values a 95% interval does not
// exist; the interval is then [min, max] and Confidence says what level
// that is.
func summarize(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	vals := slices.Clone(vs)
	s := benchmath.NewSample(vals, &benchmath.DefaultThresholds)
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	st := Stat{Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Confidence: sum.Confidence, Values: slices.Clone(vs)}
	if math.IsInf(st.Lo, 0) || math.IsInf(st.Hi, 0) {
		st.Lo, st.Hi = s.Values[0], s.Values[len(s.Values)-1]
		// Two-sided coverage of [min, max] for the median: 1 - 2·0.5^n.
		st.Confidence = 1 - 2*math.Pow(0.5, float64(len(vs)))
	}
	return st
}

// median returns the median of vs (NaN if empty).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile returns the p-th percentile (0..100) of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func mean(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}
