package lab

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteMarkdown writes the report as Markdown (report.md): the machine,
// the seed articles, the verdict rule beside a summary table of every
// claim, then one section per experiment with its arms, comparisons and
// notes.
func WriteMarkdown(w io.Writer, rep *Report) error {
	var b strings.Builder
	m := rep.Machine
	fmt.Fprintf(&b, "# hotpath lab report\n\n")
	fmt.Fprintf(&b, "%s, %s, finished in %s.\n\n", rep.runsText(), rep.Started.Format("2006-01-02 15:04 MST"), rep.Duration.Round(1e9))
	fmt.Fprintf(&b, "Machine: %s, %d cores (GOMAXPROCS %d), %d MB, %s %s/%s, kernel %s.\n\n", m.CPU, m.Cores, m.GOMAXPROCS, m.MemoryMB, m.GoVersion, m.OS, m.Arch, m.Kernel)
	writeMarkdownSources(&b, rep.Sources)
	exps, claims := rep.Counts()
	fmt.Fprintf(&b, "\n**Claims:** %s. **Experiments:** %s.\n", CountsText(claims, ClaimVerdicts), CountsText(exps, ExperimentVerdicts))
	fmt.Fprintf(&b, "\n## Verdicts\n\n")
	writeMarkdownRule(&b)
	fmt.Fprintf(&b, "\n| experiment | claim | claimed | measured (95%% CI) | verdict |\n|---|---|---|---|---|\n")
	for _, r := range rep.Results {
		if len(r.Comparisons) == 0 {
			fmt.Fprintf(&b, "| %s %s | – | – | – | **%s**: %s |\n", r.ID, mdEscape(r.Title), r.Verdict, mdEscape(r.Why))
		}
		for _, c := range r.Comparisons {
			if c.Verdict == Info {
				continue
			}
			ratio, ci := c.MeasuredText()
			fmt.Fprintf(&b, "| %s | %s: %s | %s | %s (%s) | **%s** |\n", r.ID, mdEscape(c.Name), mdEscape(c.Claim.Quote), claimText(c.Claim), ratio, ci, c.Verdict)
		}
	}
	for _, r := range rep.Results {
		writeMarkdownResult(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownRule writes the verdict rule: how ratios are computed,
// then each verdict and when it applies.
func writeMarkdownRule(b *strings.Builder) {
	fmt.Fprintf(b, "**How a ratio becomes a verdict.** %s\n\nThe first rule that fits is the verdict:\n\n", RuleIntro)
	for _, l := range RuleLines {
		fmt.Fprintf(b, "- **%s**: %s\n", l.Verdict, l.When)
	}
	fmt.Fprintf(b, "\n%s\n", RuleExperiment)
}

// writeMarkdownSources lists the seed articles, each cited by its title
// (linked to its URL when it prints one) and what it says of itself.
func writeMarkdownSources(b *strings.Builder, sources []Source) {
	fmt.Fprintf(b, "## The articles whose claims are tested\n\n| seed | article | its claim, quoted |\n|---|---|---|\n")
	for _, s := range sources {
		title := "*" + mdEscape(s.Title) + "*"
		if s.URL != "" {
			title = "[" + title + "](" + s.URL + ")"
		}
		extra := ""
		if s.Code != "" {
			extra = ", code: " + s.Code
		}
		fmt.Fprintf(b, "| %s | %s (%s%s) | “%s” |\n", s.Seed, title, mdEscape(s.Byline()), extra, mdEscape(s.Claim))
	}
}

// CountsText prints non-zero counts in order: "3 confirmed, 1 opposite".
func CountsText(n map[Verdict]int, order []Verdict) string {
	var parts []string
	for _, v := range order {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func writeMarkdownResult(b *strings.Builder, r *Result) {
	verdict := string(r.Verdict)
	if r.Verdict == Mixed {
		verdict += " (" + Breakdown(r.Comparisons) + ")"
	}
	fmt.Fprintf(b, "\n## %s: %s\n\nSeed %s: *%s*. %s.\n\n**%s**: %s\n\n", r.ID, r.Title, r.Seed, sourceTitle(r.Seed), r.runsText(), verdict, r.Why)
	if r.Err != "" {
		return
	}
	fmt.Fprintf(b, "Setup: %s\n\nSame work: %s\n\n", r.Setup, r.SameWork)
	fmt.Fprintf(b, "| arm |")
	for _, m := range r.Metrics {
		fmt.Fprintf(b, " %s |", m.Name)
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---:|", len(r.Metrics)))
	for _, a := range r.Arms {
		fmt.Fprintf(b, "| %s |", mdEscape(a.Name))
		for _, m := range r.Metrics {
			s, ok := a.Stats[m.Name]
			if !ok {
				fmt.Fprintf(b, " – |")
				continue
			}
			fmt.Fprintf(b, " %s ±%s |", FormatValue(s.Median), spread(s))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "\n| comparison | metric | claim | measured (CI) | verdict | why |\n|---|---|---|---|---|---|\n")
	for _, c := range r.Comparisons {
		ratio, ci := c.MeasuredText()
		fmt.Fprintf(b, "| %s: %s → %s | %s | %s | %s (%s) | %s | %s |\n", mdEscape(c.Name), mdEscape(c.Before), mdEscape(c.After), c.Metric,
			mdEscape(c.Claim.Quote), ratio, ci, c.Verdict, mdEscape(c.Why))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n- %s", n)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, a := range r.Arms {
		if a.Code != "" {
			fmt.Fprintf(b, "\n<details><summary>%s</summary>\n\n```go\n%s\n```\n</details>\n", a.Name, a.Code)
		}
	}
}

// spread is the half-width of a stat's interval as a percentage of its
// median.
func spread(s Stat) string {
	if s.Median == 0 || math.IsNaN(s.Median) {
		return "0%"
	}
	return fmt.Sprintf("%.0f%%", 100*math.Max(s.Hi-s.Median, s.Median-s.Lo)/math.Abs(s.Median))
}

// FormatValue prints a measured value with sensible precision.
func FormatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v):
		return "–"
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
