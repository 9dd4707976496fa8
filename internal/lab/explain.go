package lab

import (
	"fmt"
	"strings"
)

// outcome is how an experiment's claims fared, coarsely: it picks the
// experiment's written explanation (the mechanism), while the verdicts
// themselves say precisely how each claim fared.
type outcome int

const (
	// asClaimed: every claim is confirmed.
	asClaimed outcome = iota
	// partlyAsClaimed: some claims hold or go the claimed way (confirmed,
	// smaller or larger than claimed), others do not.
	partlyAsClaimed
	// notAsClaimed: no claim holds or even goes the claimed way (no effect
	// here, opposite, not reproducible).
	notAsClaimed
)

// outcomeOf classifies an experiment's claims; ok is false when every
// claim is inconclusive (or there is none), which no mechanism explains.
func outcomeOf(cs []Comparison) (o outcome, ok bool) {
	var n, confirmed, sameWay, inconclusive int
	for _, c := range cs {
		switch c.Verdict {
		case Info:
			continue
		case Confirmed:
			confirmed++
			sameWay++
		case Smaller, Larger:
			sameWay++
		case Inconclusive:
			inconclusive++
		}
		n++
	}
	switch {
	case n == 0 || inconclusive == n:
		return 0, false
	case confirmed == n:
		return asClaimed, true
	case sameWay > 0:
		return partlyAsClaimed, true
	}
	return notAsClaimed, true
}

// explain returns the experiment's one-line why: the mechanism for its
// outcome (from byOutcome) followed by its headline figures.
func explain(r *Result, byOutcome map[outcome]string) string {
	var parts []string
	for _, c := range r.Comparisons {
		if c.Verdict == Info {
			continue
		}
		if len(parts) == 3 {
			parts = append(parts, "…")
			break
		}
		ratio, _ := c.MeasuredText()
		parts = append(parts, fmt.Sprintf("%s %s (claimed %s)", c.Name, ratio, claimText(c.Claim)))
	}
	why := "see the comparisons"
	if o, ok := outcomeOf(r.Comparisons); !ok {
		why = "the runs were too noisy to tell; rerun with more runs (--runs N)"
	} else if s := byOutcome[o]; s != "" {
		why = s
	}
	return why + ". Measured: " + strings.Join(parts, ", ") + "."
}

func claimText(c Claim) string {
	if c.Ratio == 0 {
		return "better"
	}
	return FormatRatio(c.Ratio)
}
