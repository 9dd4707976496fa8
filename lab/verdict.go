package lab

import (
	"fmt"
	"math"
)

// Verdict is what this machine says about a claim.
type Verdict string

// The verdicts.
const (
	Confirmed       Verdict = "confirmed"
	Partly          Verdict = "partly"
	Refuted         Verdict = "refuted"
	NotReproducible Verdict = "not reproducible here"
	// Info marks a comparison that carries no claim.
	Info Verdict = "info"
)

// Rule is the verdict rule in words, printed in every report.
const Rule = `Every ratio is an improvement factor: before/after for costs (ns/op, B/op, allocs/op, latency, CPU per request, connections), after/before for throughput (req/s); above 1 means "after" is better. It is computed run by run (the arms are interleaved) and summarized by its median and a distribution-free confidence interval (golang.org/x/perf/benchmath, AssumeNothing; 95% from 6 runs up, [min, max] below). The effect is significant when the interval excludes 1. The agreement band around a claimed ratio C is [C/b, C·b] with b = √max(C, 1/C) bounded to [1.25, 2]: ×/÷2 for claims of 4× and more, ±25% for claims near 1.
- confirmed: the median ratio lies in the band and, unless the seed claims "no real difference" (such as "unaffected"), the effect is significant in the claimed direction (a claim of 0.9× claims "slower"). A cost the seed says vanishes (C ≥ 20) is confirmed when it is ~0 here too.
- partly: significant in the claimed direction, but the median lies outside the band (the effect is much smaller or much larger than claimed).
- A claim without a number ("better", "fewer connections") is confirmed by a significant improvement of at least 10%, partly by a smaller one.
- refuted: no significant effect, or a significant effect in the other direction.
- not reproducible here: the experiment could not run as the seed describes on this machine (error, missing capability).
An experiment's verdict is confirmed or refuted when all its claims are, refuted when none is confirmed or partly, partly otherwise.`

// band returns the agreement band around a claimed ratio.
func band(claim float64) (lo, hi float64) {
	b := math.Sqrt(math.Max(claim, 1/claim))
	b = math.Min(2, math.Max(1.25, b))
	return claim / b, claim * b
}

// Judge applies Rule to a claim and a measured ratio. A claim with Ratio
// 0 claims the direction only (after is better).
func Judge(c Claim, m Stat) (Verdict, string) {
	return judge(c, m, false)
}

// judge is Judge; afterZero says that the measured "after" cost is at its
// metric's floor (~0).
func judge(c Claim, m Stat, afterZero bool) (Verdict, string) {
	claim := c.Ratio
	if math.IsNaN(m.Median) {
		return NotReproducible, "no measurement"
	}
	got := fmt.Sprintf("measured %s (CI %s–%s)", FormatRatio(m.Median), FormatRatio(m.Lo), FormatRatio(m.Hi))
	if afterZero {
		got = "measured: the cost drops to ~0"
	}
	better, worse := m.Lo > 1, m.Hi < 1
	if claim == 0 { // direction only
		switch {
		case better && (m.Median >= 1.1 || afterZero):
			return Confirmed, got + ": better, as claimed"
		case better:
			return Partly, got + ": better, but by less than 10%"
		case worse:
			return Refuted, got + ": worse, not better"
		}
		return Refuted, got + ": no significant difference"
	}
	lo, hi := band(claim)
	inBand := m.Median >= lo && m.Median <= hi
	want := fmt.Sprintf("claimed %s", FormatRatio(claim))
	if c.Same { // "about the same"
		if inBand {
			return Confirmed, fmt.Sprintf("%s vs %s: about the same, as claimed", got, want)
		}
		return Refuted, fmt.Sprintf("%s vs %s: a real difference where the seed saw none", got, want)
	}
	rightWay := (claim > 1 && better) || (claim < 1 && worse)
	wrongWay := (claim > 1 && worse) || (claim < 1 && better)
	switch {
	case rightWay && (inBand || (afterZero && claim >= 20)):
		if !inBand {
			return Confirmed, fmt.Sprintf("%s vs %s: the cost vanishes here too", got, want)
		}
		return Confirmed, fmt.Sprintf("%s vs %s", got, want)
	case rightWay:
		size := "smaller"
		if math.Abs(math.Log(m.Median)) > math.Abs(math.Log(claim)) {
			size = "larger"
		}
		return Partly, fmt.Sprintf("%s vs %s: same direction, %s effect", got, want, size)
	case wrongWay:
		return Refuted, fmt.Sprintf("%s vs %s: the opposite direction", got, want)
	}
	return Refuted, fmt.Sprintf("%s vs %s: no significant difference", got, want)
}

// Overall combines comparisons into an experiment's verdict: confirmed
// when every claim is, refuted when none is confirmed or partly (refuted
// and not reproducible claims only), not reproducible when none could be
// measured, partly otherwise. Info comparisons do not count.
func Overall(cs []Comparison) Verdict {
	counts := map[Verdict]int{}
	n := 0
	for _, c := range cs {
		if c.Verdict == Info {
			continue
		}
		counts[c.Verdict]++
		n++
	}
	switch {
	case n == 0 || counts[NotReproducible] == n:
		return NotReproducible
	case counts[Confirmed] == n:
		return Confirmed
	case counts[Confirmed]+counts[Partly] == 0:
		return Refuted
	}
	return Partly
}

// FormatRatio prints a ratio compactly: "70×", "1.6×", "0.92×".
func FormatRatio(r float64) string {
	switch {
	case math.IsNaN(r):
		return "–"
	case math.IsInf(r, 0):
		return "∞"
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	}
	return fmt.Sprintf("%.2f×", r)
}
