package lab

import (
	"math"
	"strings"
	"testing"
)

func stat(med, lo, hi float64) Stat { return Stat{Median: med, Lo: lo, Hi: hi} }

func TestJudge(t *testing.T) {
	tests := []struct {
		name  string
		claim Claim
		m     Stat
		want  Verdict
		why   string
	}{
		{"in band, significant", Claim{Ratio: 70}, stat(50, 45, 55), Confirmed, "claimed 70"},
		{"band edge ×2", Claim{Ratio: 70}, stat(36, 30, 40), Confirmed, ""},
		{"smaller effect", Claim{Ratio: 70}, stat(14, 12, 17), Partly, "smaller effect"},
		{"larger effect", Claim{Ratio: 3.3}, stat(256, 237, 257), Partly, "larger effect"},
		{"not significant", Claim{Ratio: 1.6}, stat(1.3, 0.9, 1.9), Refuted, "no significant"},
		{"opposite", Claim{Ratio: 2.7}, stat(0.26, 0.22, 0.36), Refuted, "opposite"},
		{"claimed slower, measured slower", Claim{Ratio: 0.8}, stat(0.75, 0.7, 0.8), Confirmed, ""},
		{"about the same, confirmed", Claim{Ratio: 0.95, Same: true}, stat(1.02, 0.9, 1.1), Confirmed, "about the same"},
		{"about the same, refuted", Claim{Ratio: 1.05, Same: true}, stat(1.6, 1.5, 1.7), Refuted, "difference"},
		{"direction only, better", Claim{Ratio: 0}, stat(3, 2, 4), Confirmed, "as claimed"},
		{"direction only, none", Claim{Ratio: 0}, stat(1, 0.9, 1.1), Refuted, "no significant"},
		{"direction only, tiny", Claim{Ratio: 0}, stat(1.02, 1.001, 1.04), Partly, "less than 10%"},
		// "0.9×: slower" claims a direction: faster is the opposite.
		{"claimed slightly slower, measured faster", Claim{Ratio: 0.91}, stat(1.12, 1.08, 1.14), Refuted, "opposite"},
		{"claimed slightly slower, no difference", Claim{Ratio: 0.91}, stat(0.97, 0.9, 1.05), Refuted, "no significant"},
		{"±25% band near 1.6", Claim{Ratio: 1.6}, stat(2.1, 2.0, 2.2), Partly, ""},
	}
	for _, tt := range tests {
		v, why := Judge(tt.claim, tt.m)
		if v != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: Judge(%v, %+v) = %q, %q; want %q containing %q", tt.name, tt.claim, tt.m, v, why, tt.want, tt.why)
		}
	}
	// A cost the seed says vanishes is confirmed when it vanishes here.
	if v, _ := judge(Claim{Ratio: 565}, stat(48, 48, 48), true); v != Confirmed {
		t.Errorf("vanishing cost: %q", v)
	}
	if v, _ := judge(Claim{Ratio: 565}, stat(48, 48, 48), false); v != Partly {
		t.Errorf("non-vanishing cost: %q", v)
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

func TestOverall(t *testing.T) {
	c := func(vs ...Verdict) []Comparison {
		var cs []Comparison
		for _, v := range vs {
			cs = append(cs, Comparison{Verdict: v})
		}
		return cs
	}
	for _, tt := range []struct {
		cs   []Comparison
		want Verdict
	}{
		{c(Confirmed, Confirmed, Info), Confirmed},
		{c(Refuted, Refuted), Refuted},
		{c(Confirmed, Refuted), Partly},
		{c(Partly), Partly},
		{c(Info), NotReproducible},
		{c(NotReproducible, Confirmed), Partly},
		{c(Refuted, NotReproducible), Refuted}, // nothing agrees: not "partly"
	} {
		if got := Overall(tt.cs); got != tt.want {
			t.Errorf("Overall(%v) = %q, want %q", tt.cs, got, tt.want)
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
