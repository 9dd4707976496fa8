package lab

import (
	"fmt"
	"math"
	"strings"
)

// Verdict is what this machine says about a claim, or about an
// experiment's claims taken together.
type Verdict string

// The verdicts of a claim. Each word answers one question a reader asks
// ("did it hold?", "how far off?", "which way?", "can we tell?"), so no
// word covers two different outcomes. RuleLines defines them.
const (
	Confirmed    Verdict = "confirmed"
	Smaller      Verdict = "smaller than claimed"
	Larger       Verdict = "larger than claimed"
	NoEffect     Verdict = "no effect here"
	Opposite     Verdict = "opposite"
	Inconclusive Verdict = "inconclusive"
	// NotReproducible: the experiment could not run as the seed describes.
	NotReproducible Verdict = "not reproducible here"
	// Info marks a comparison that carries no claim.
	Info Verdict = "info"
	// Mixed is an experiment's verdict when its claims got different
	// verdicts; Breakdown says which.
	Mixed Verdict = "mixed"
)

// ClaimVerdicts lists a claim's verdicts in the order reports count them.
var ClaimVerdicts = []Verdict{Confirmed, Smaller, Larger, NoEffect, Opposite, Inconclusive, NotReproducible}

// ExperimentVerdicts lists an experiment's verdicts in report order: the
// claim verdicts (when all its claims agree) and Mixed.
var ExperimentVerdicts = append(append([]Verdict{}, ClaimVerdicts[:len(ClaimVerdicts)-1]...), Mixed, NotReproducible)

// negligible is the half-width of the "no real effect" zone around 1×:
// a ratio within [1/1.1, 1.1] changes a cost by less than 10%. It is also
// the threshold of "opposite": an effect against the claim reads as
// opposite only when its median is at least 10% the other way (≤ 1/1.1 in
// the claim's direction); a smaller one is "no effect here", and its why
// says how far the other way and whether the CI excludes 1× (beyond noise)
// or not (within noise).
const negligible = 1.1

// RuleIntro says how a ratio and its interval are computed.
const RuleIntro = `Every ratio is an improvement factor: before/after for costs (ns/op, B/op, allocs/op, latency, CPU per request, connections), after/before for throughput (req/s); above 1× the "after" arm is better. It is computed run by run (the arms are interleaved) and summarized by its median and a distribution-free 95% confidence interval (CI; golang.org/x/perf/benchmath, AssumeNothing; with fewer than 6 runs [min, max]). A claim of C× (C < 1 claims "after is slower"; the rule then reads every ratio as its inverse) is judged against its band [C/b, C·b], b = √max(C, 1/C) bounded to [1.25, 2]: ×/÷2 for claims of 4× and more, ±25% near 1. A claim without a number ("fewer connections") has the band [1.1×, ∞). "Negligible" means the CI lies within [0.91×, 1.1×] (less than 10% either way). Against the claim the threshold is the same 10%: a median at least 10% the other way (0.91× or below where the seed claims a gain) is "opposite"; less than that is "no effect here", reported as "not reproduced: N% the other way", within noise when the CI contains 1×, beyond noise when it does not.`

// RuleLines defines each verdict, checked in this order (judge follows
// it case by case); the first that applies is the verdict.
var RuleLines = []struct {
	Verdict Verdict
	When    string
}{
	{Confirmed, "the CI lies entirely on the claimed side of 1× and the median lies in the band. An \"about the same\" claim (\"unaffected\") needs only the median in its band; a cost the seed says vanishes (C ≥ 20×) is confirmed when it drops to ~0 here too."},
	{Smaller, "the CI lies entirely on the claimed side of 1× and entirely below the band, and is not negligible."},
	{Larger, "the whole CI lies above the band (for an \"about the same\" claim: outside the band, either side)."},
	{NoEffect, "the CI contains 1× or is negligible, and it lies below the band or is negligible; or the CI lies on the other side of 1× with the median less than 10% the other way: the claimed effect is ruled out, and what is left is nothing or less than 10% either way (\"not reproduced: N% the other way\" when it leans against the claim)."},
	{Opposite, "the CI lies entirely on the other side of 1× and the median is at least 10% the other way: \"after\" is worse where the seed says better, or the reverse."},
	{Inconclusive, "anything else: the CI straddles 1× and reaches the band, or straddles the band's edge with the median outside it. More runs would decide: the lab adds runs (up to --max-runs, within its time budget) before it settles on this, and --runs N starts with more."},
	{NotReproducible, "the experiment could not run as the seed describes on this machine (error, missing capability)."},
}

// RuleExperiment says how claims combine into an experiment's verdict.
const RuleExperiment = `An experiment's verdict is its claims' verdict when they all agree, and "mixed" (with the count of each verdict) when they do not; comparisons marked "info" carry no claim and do not count.`

// Rule is the whole verdict rule in words, as results.json records it.
var Rule = func() string {
	var b strings.Builder
	b.WriteString(RuleIntro)
	for _, l := range RuleLines {
		fmt.Fprintf(&b, "\n- %s: %s", l.Verdict, l.When)
	}
	b.WriteString("\n" + RuleExperiment)
	return b.String()
}()

// band returns the agreement band around a claimed ratio.
func band(claim float64) (lo, hi float64) {
	b := math.Sqrt(math.Max(claim, 1/claim))
	b = math.Min(2, math.Max(1.25, b))
	return claim / b, claim * b
}

// Judge applies the rule (RuleLines) to a claim and a measured ratio. A
// claim with Ratio 0 claims the direction only (after is better).
func Judge(c Claim, m Stat) (Verdict, string) {
	return judge(c, m, false)
}

// judge is Judge; afterZero says that the measured "after" cost is at its
// metric's floor (~0).
func judge(c Claim, m Stat, afterZero bool) (Verdict, string) {
	if math.IsNaN(m.Median) || math.IsNaN(m.Lo) || math.IsNaN(m.Hi) {
		return NotReproducible, "no measurement"
	}
	got := fmt.Sprintf("measured %s (CI %s–%s)", FormatRatio(m.Median), FormatRatio(m.Lo), FormatRatio(m.Hi))
	if afterZero {
		got = "measured: the cost drops to ~0"
	}
	want := "claimed better"
	if c.Ratio > 0 {
		want = "claimed " + FormatRatio(c.Ratio)
	}
	say := func(v Verdict, why string) (Verdict, string) {
		return v, fmt.Sprintf("%s vs %s: %s", got, want, why)
	}
	if c.Same && c.Ratio > 0 { // "about the same"
		lo, hi := band(c.Ratio)
		switch {
		case m.Median >= lo && m.Median <= hi:
			return say(Confirmed, "about the same, as claimed")
		case m.Lo > hi || m.Hi < lo:
			return say(Larger, "a real difference where the seed saw none")
		}
		return say(Inconclusive, "the CI reaches past the band of \"about the same\"; more runs would tell")
	}
	// Normalize so that the claimed direction is up.
	med, lo, hi := m.Median, m.Lo, m.Hi
	bandLo, bandHi := negligible, math.Inf(1) // a claim of direction only
	claim := c.Ratio
	if claim > 0 {
		if claim < 1 {
			claim, med, lo, hi = 1/claim, 1/med, 1/hi, 1/lo
		}
		bandLo, bandHi = band(claim)
	}
	sig := lo > 1   // significant in the claimed direction
	wrong := hi < 1 // significant in the other direction
	containsOne := !sig && !wrong
	tiny := lo >= 1/negligible && hi <= negligible
	below := hi < bandLo
	switch {
	case afterZero && sig && (c.Ratio == 0 || c.Ratio >= 20):
		return say(Confirmed, "the cost vanishes here too")
	case sig && med >= bandLo && med <= bandHi:
		if c.Ratio == 0 {
			return say(Confirmed, "better by 10% or more, as claimed")
		}
		return say(Confirmed, "within the claim's band")
	case sig && below && !tiny:
		return say(Smaller, "same direction, the whole CI below the claim's band")
	case lo > bandHi:
		return say(Larger, "the whole CI lies above the claim's band")
	case (containsOne || tiny) && (below || tiny):
		leans := med < 1/1.005 // at least 0.5% the other way: "0% the other way" says nothing
		switch {
		case leans && containsOne:
			return say(NoEffect, "not reproduced: "+otherWay(med)+", within noise (the CI contains 1×)")
		case leans:
			return say(NoEffect, "not reproduced: "+otherWay(med)+", beyond noise but under the 10% that reads as opposite")
		case sig || wrong:
			return say(NoEffect, "a difference of less than 10%")
		}
		return say(NoEffect, "no significant difference, and the claimed size is ruled out")
	case wrong && med > 1/negligible: // the CI is wider than negligible, the median is not
		return say(NoEffect, "not reproduced: "+otherWay(med)+", beyond noise but under the 10% that reads as opposite")
	case wrong:
		return say(Opposite, "the other direction: "+otherWay(med)+" (10% or more reads as opposite)")
	case containsOne:
		return say(Inconclusive, "the CI spans both 1× and the claim's band; more runs would tell")
	}
	return say(Inconclusive, "the CI straddles the band's edge; more runs would tell")
}

// otherWay says how far a median ratio below 1× (in the claim's direction)
// lies the other way: "5% the other way", "3.85× the other way". Under the
// 10% threshold it never rounds up to "10%".
func otherWay(med float64) string {
	f := 1 / med
	if f >= 2 {
		return FormatRatio(f) + " the other way"
	}
	pct := 100 * (f - 1)
	text := fmt.Sprintf("%.0f%%", pct)
	if pct < 100*(negligible-1) && math.Round(pct) >= 100*(negligible-1) {
		text = fmt.Sprintf("%.1f%%", math.Floor(pct*10)/10)
	}
	return text + " the other way"
}

// Overall combines comparisons into an experiment's verdict: the verdict
// its claims share, Mixed when they differ, NotReproducible when it has
// none. Info comparisons do not count.
func Overall(cs []Comparison) Verdict {
	var v Verdict
	for _, c := range cs {
		switch {
		case c.Verdict == Info:
		case v == "":
			v = c.Verdict
		case v != c.Verdict:
			return Mixed
		}
	}
	if v == "" {
		return NotReproducible
	}
	return v
}

// Breakdown counts the claim verdicts of cs: "2 confirmed, 1 smaller than
// claimed" (Info comparisons left out).
func Breakdown(cs []Comparison) string {
	n := map[Verdict]int{}
	for _, c := range cs {
		n[c.Verdict]++
	}
	var parts []string
	for _, v := range ClaimVerdicts {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

// needsMoreRuns reports whether more runs could change r's verdicts: a
// claim is inconclusive.
func needsMoreRuns(r *Result) bool {
	for _, c := range r.Comparisons {
		if c.Verdict == Inconclusive {
			return true
		}
	}
	return false
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
