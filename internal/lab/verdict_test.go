package lab

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func stat(med, lo, hi float64) Stat { return Stat{Median: med, Lo: lo, Hi: hi} }

// TestOppositeThreshold: an effect against the claim reads as "opposite"
// from 10% the other way (its median at 1/1.1 or below in the claim's
// direction); under it, "no effect here" with the distance and whether it
// is beyond noise. The wording never rounds a smaller effect up to 10%.
func TestOppositeThreshold(t *testing.T) {
	for _, tt := range []struct {
		name  string
		claim Claim
		m     Stat
		want  Verdict
		why   string
	}{
		// The case: 5% the other way with a wide CI was "opposite".
		{"5% against, wide CI", Claim{Ratio: 2.7}, stat(0.95, 0.80, 0.98), NoEffect, "not reproduced: 5% the other way, beyond noise but under the 10% that reads as opposite"},
		{"5% against, tight CI", Claim{Ratio: 2.7}, stat(0.95, 0.94, 0.96), NoEffect, "not reproduced: 5% the other way, beyond noise"},
		{"5% against, within noise", Claim{Ratio: 2.7}, stat(0.95, 0.85, 1.02), NoEffect, "not reproduced: 5% the other way, within noise (the CI contains 1×)"},
		{"0.2% against, within noise", Claim{Ratio: 2.7}, stat(0.998, 0.91, 1.11), NoEffect, "no significant difference, and the claimed size is ruled out"},
		{"just under 10%", Claim{Ratio: 2.7}, stat(0.9095, 0.85, 0.95), NoEffect, "not reproduced: 9.9% the other way"},
		{"at 10%", Claim{Ratio: 2.7}, stat(1/negligible, 0.85, 0.95), Opposite, "the other direction: 10% the other way"},
		{"11% against", Claim{Ratio: 2.7}, stat(0.90, 0.85, 0.95), Opposite, "11% the other way (10% or more reads as opposite)"},
		{"far against", Claim{Ratio: 2.7}, stat(0.26, 0.22, 0.36), Opposite, "3.85× the other way"},
		// A claim that "after" is slower (C < 1) reads ratios inverted.
		{"claimed slower, 5% faster", Claim{Ratio: 0.91}, stat(1.05, 1.02, 1.08), NoEffect, "not reproduced: 5% the other way, beyond noise"},
		{"claimed slower, 12% faster", Claim{Ratio: 0.91}, stat(1.12, 1.08, 1.14), Opposite, "12% the other way"},
		// A direction-only claim ("fewer connections") the same way.
		{"direction only, 4% worse", Claim{Ratio: 0}, stat(0.96, 0.80, 0.99), NoEffect, "not reproduced: 4% the other way"},
		{"direction only, 2× worse", Claim{Ratio: 0}, stat(0.5, 0.4, 0.6), Opposite, "2.00× the other way"},
	} {
		v, why := Judge(tt.claim, tt.m)
		if v != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: Judge(%v, %+v) = %q, %q; want %q containing %q", tt.name, tt.claim, tt.m, v, why, tt.want, tt.why)
		}
	}
	// The rule the reports print states the threshold.
	if !strings.Contains(RuleIntro, "at least 10% the other way") || !strings.Contains(Rule, "not reproduced: N% the other way") {
		t.Errorf("the rule does not state the opposite threshold:\n%s", Rule)
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		claim Claim
		m     Stat
		want  Verdict
		why   string
	}{
		// confirmed: significant in the claimed direction, median in the band.
		{"in band, significant", Claim{Ratio: 70}, stat(50, 45, 55), Confirmed, "claimed 70"},
		{"band edge ×2", Claim{Ratio: 70}, stat(36, 30, 40), Confirmed, "band"},
		{"claimed slower, measured slower", Claim{Ratio: 0.8}, stat(0.75, 0.7, 0.8), Confirmed, ""},
		{"small claim, small significant effect", Claim{Ratio: 1.1}, stat(1.05, 1.02, 1.08), Confirmed, ""},
		{"about the same, confirmed", Claim{Ratio: 0.95, Same: true}, stat(1.02, 0.9, 1.1), Confirmed, "about the same"},
		{"direction only, better", Claim{Ratio: 0}, stat(3, 2, 4), Confirmed, "as claimed"},
		// smaller than claimed: significant, the whole CI below the band.
		{"smaller effect", Claim{Ratio: 70}, stat(14, 12, 17), Smaller, "below the claim's band"},
		{"000-08 garbage 2× vs 92×", Claim{Ratio: 4400.0 / 48}, stat(2, 2, 2), Smaller, ""},
		// larger than claimed: the whole CI above the band.
		{"larger effect", Claim{Ratio: 3.3}, stat(256, 237, 257), Larger, "above"},
		{"000-02: 122× vs 10×", Claim{Ratio: 430.0 / 42}, stat(122, 61, 152), Larger, "claimed 10.2×"},
		{"about the same, a real difference", Claim{Ratio: 1.05, Same: true}, stat(1.6, 1.5, 1.7), Larger, "saw none"},
		{"about the same, a real loss", Claim{Ratio: 1, Same: true}, stat(0.5, 0.4, 0.6), Larger, "saw none"},
		// no effect here: nothing, or less than 10%, where more was claimed.
		{"000-07: garbage 1.05× vs 2.25×", Claim{Ratio: 720.0 / 320}, stat(1.05, 1.05, 1.05), NoEffect, "less than 10%"},
		{"not significant, claim ruled out", Claim{Ratio: 2.7}, stat(1.01, 0.81, 1.15), NoEffect, "ruled out"},
		{"not significant, leaning the other way", Claim{Ratio: 2.7}, stat(0.99, 0.81, 1.15), NoEffect, "not reproduced: 1% the other way, within noise"},
		{"tiny opposite effect", Claim{Ratio: 4}, stat(0.97, 0.95, 0.98), NoEffect, "not reproduced: 3% the other way, beyond noise"},
		{"direction only, none", Claim{Ratio: 0}, stat(1, 0.95, 1.05), NoEffect, "no significant"},
		{"direction only, tiny", Claim{Ratio: 0}, stat(1.02, 1.001, 1.04), NoEffect, "less than 10%"},
		{"claim near 1, nothing measured", Claim{Ratio: 1.2}, stat(1, 0.98, 1.02), NoEffect, ""},
		// opposite: significant the other way, by 10% or more.
		{"opposite", Claim{Ratio: 2.7}, stat(0.26, 0.22, 0.36), Opposite, "other direction"},
		{"claimed slightly slower, measured faster", Claim{Ratio: 0.91}, stat(1.12, 1.08, 1.14), Opposite, "other direction"},
		{"direction only, worse", Claim{Ratio: 0}, stat(0.5, 0.4, 0.6), Opposite, ""},
		// inconclusive: the CI cannot decide.
		{"003 GET resty: 0.93× (0.72–1.00) vs 0.91×", Claim{Ratio: 38126.0 / 41738}, stat(0.93, 0.72, 1.00), Inconclusive, "more runs"},
		{"not significant, reaches the band", Claim{Ratio: 1.6}, stat(1.3, 0.9, 1.9), Inconclusive, "spans both"},
		{"claimed slightly slower, no clear difference", Claim{Ratio: 0.91}, stat(0.97, 0.9, 1.05), Inconclusive, ""},
		{"straddles the band's edge, median outside", Claim{Ratio: 1.6}, stat(2.1, 2.0, 2.2), Inconclusive, "edge"},
		{"about the same, CI past the band", Claim{Ratio: 1, Same: true}, stat(1.3, 1.1, 1.5), Inconclusive, ""},
		{"direction only, wide", Claim{Ratio: 0}, stat(1.2, 0.9, 1.6), Inconclusive, ""},
		// not reproducible here: nothing measured.
		{"no measurement", Claim{Ratio: 2}, stat(math.NaN(), math.NaN(), math.NaN()), NotReproducible, "no measurement"},
	}
	seen := map[Verdict]bool{}
	for _, tt := range tests {
		v, why := Judge(tt.claim, tt.m)
		seen[v] = true
		if v != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: Judge(%v, %+v) = %q, %q; want %q containing %q", tt.name, tt.claim, tt.m, v, why, tt.want, tt.why)
		}
	}
	for _, v := range ClaimVerdicts {
		if !seen[v] {
			t.Errorf("no test case for %q", v)
		}
	}
	// A cost the seed says vanishes is confirmed when it vanishes here.
	if v, _ := judge(Claim{Ratio: 565}, stat(48, 48, 48), true); v != Confirmed {
		t.Errorf("vanishing cost: %q", v)
	}
	if v, _ := judge(Claim{Ratio: 565}, stat(48, 48, 48), false); v != Smaller {
		t.Errorf("non-vanishing cost: %q", v)
	}
	if v, _ := judge(Claim{Ratio: 0}, stat(100, 100, 100), true); v != Confirmed {
		t.Errorf("connections gone, claimed fewer: %q", v)
	}
}

// Every verdict a claim can get is defined in the rule the reports print.
func TestRuleDefinesEveryVerdict(t *testing.T) {
	defined := map[Verdict]bool{}
	for _, l := range RuleLines {
		defined[l.Verdict] = true
		if !strings.Contains(Rule, string(l.Verdict)+": "+l.When) {
			t.Errorf("Rule lacks the line for %q", l.Verdict)
		}
	}
	for _, v := range ClaimVerdicts {
		if !defined[v] {
			t.Errorf("the rule does not define %q", v)
		}
	}
	if !strings.Contains(Rule, string(Mixed)) {
		t.Errorf("the rule does not say what %q means", Mixed)
	}
}

func TestBand(t *testing.T) {
	r16, r2 := math.Sqrt(1.6), math.Sqrt(2)
	for _, tt := range []struct{ c, lo, hi float64 }{{70, 35, 140}, {4, 2, 8}, {1.6, 1.6 / r16, 1.6 * r16}, {0.5, 0.5 / r2, 0.5 * r2}, {1.1, 0.88, 1.375}} {
		lo, hi := band(tt.c)
		if abs(lo-tt.lo) > 1e-9 || abs(hi-tt.hi) > 1e-9 {
			t.Errorf("band(%v) = %v, %v; want %v, %v", tt.c, lo, hi, tt.lo, tt.hi)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// comparisons returns comparisons with the verdicts vs.
func comparisons(vs ...Verdict) []Comparison {
	var cs []Comparison
	for _, v := range vs {
		cs = append(cs, Comparison{Verdict: v})
	}
	return cs
}

func TestOverall(t *testing.T) {
	c := comparisons
	for _, tt := range []struct {
		cs        []Comparison
		want      Verdict
		breakdown string
	}{
		{c(Confirmed, Confirmed, Info), Confirmed, "2 confirmed"},
		{c(Opposite, Opposite), Opposite, "2 opposite"},
		{c(NoEffect), NoEffect, "1 no effect here"},
		{c(Smaller, Smaller, Info), Smaller, "2 smaller than claimed"},
		{c(Confirmed, Smaller, Larger), Mixed, "1 confirmed, 1 smaller than claimed, 1 larger than claimed"},
		{c(Inconclusive, Confirmed), Mixed, "1 confirmed, 1 inconclusive"},
		{c(Inconclusive), Inconclusive, "1 inconclusive"},
		{c(Info), NotReproducible, ""},
		{nil, NotReproducible, ""},
		{c(NotReproducible, Confirmed), Mixed, "1 confirmed, 1 not reproducible here"},
	} {
		if got := Overall(tt.cs); got != tt.want {
			t.Errorf("Overall(%v) = %q, want %q", tt.cs, got, tt.want)
		}
		if got := Breakdown(tt.cs); got != tt.breakdown {
			t.Errorf("Breakdown(%v) = %q, want %q", tt.cs, got, tt.breakdown)
		}
	}
}

func TestOutcome(t *testing.T) {
	c := comparisons
	for _, tt := range []struct {
		cs   []Comparison
		want outcome
		ok   bool
	}{
		{c(Confirmed, Info), asClaimed, true},
		{c(Confirmed, Smaller), partlyAsClaimed, true},
		{c(Larger), partlyAsClaimed, true},
		{c(NoEffect, Opposite, Inconclusive), notAsClaimed, true},
		{c(Inconclusive, Inconclusive), 0, false},
	} {
		if got, ok := outcomeOf(tt.cs); got != tt.want || ok != tt.ok {
			t.Errorf("outcomeOf(%v) = %v, %v; want %v, %v", tt.cs, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10})
	if s.Median != 5.5 || s.Lo > s.Median || s.Hi < s.Median || s.Confidence < 0.95 {
		t.Errorf("summarize = %+v", s)
	}
	// Too few values for 95%: the interval is [min, max] at its true level.
	s = summarize([]float64{3, 1, 2})
	if s.Lo != 1 || s.Hi != 3 || s.Confidence != 0.75 {
		t.Errorf("summarize(3 values) = %+v", s)
	}
}

func TestImprovement(t *testing.T) {
	if got := improvement(NsPerOp, 200, 100); got != 2 {
		t.Errorf("cost ratio %v", got)
	}
	if got := improvement(ReqPerSec, 100, 300); got != 3 {
		t.Errorf("throughput ratio %v", got)
	}
	if got := improvement(AllocsPerOp, 3, 0); got != 300 {
		t.Errorf("zero cost uses the floor: %v", got)
	}
}

func TestGroupDigits(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 3574: "3,574", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

// The text of 000-02 and 000-04 follows what the run measured.
func TestSizeTexts(t *testing.T) {
	if s := proxySizeNote(200 << 20); !strings.Contains(s, "This run used the seed's 200 MB") {
		t.Errorf("200 MB note: %q", s)
	}
	if s := proxySizeNote(proxySize(Smoke)); !strings.Contains(s, "This run used 8 MB") {
		t.Errorf("smoke note: %q", s)
	}
	e, _ := Select([]string{"000-04"})
	if want := fmt.Sprintf("%.1f KB", float64(payloadSize)/1000); !strings.Contains(e[0].Title, want) || strings.Contains(e[0].Title, "5 KB") {
		t.Errorf("000-04 title %q, want the measured size %s", e[0].Title, want)
	}
}
