package lab

import (
	"fmt"
	"strings"
)

// explain returns the experiment's one-line why: the mechanism for its
// overall verdict (from byVerdict) followed by its headline figures.
func explain(r *Result, byVerdict map[Verdict]string) string {
	v := Overall(r.Comparisons)
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
	why := byVerdict[v]
	if why == "" {
		why = "see the comparisons"
	}
	return why + ". Measured: " + strings.Join(parts, ", ") + "."
}

func claimText(c Claim) string {
	if c.Ratio == 0 {
		return "better"
	}
	return FormatRatio(c.Ratio)
}
