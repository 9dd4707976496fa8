package load

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes a short Markdown summary (a CI job summary, a pull
// request comment): what was run, throughput, latency percentiles,
// errors and statuses, warnings, and each threshold's verdict.
func (res *Result) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	verdict := "passed"
	if !res.ThresholdsPassed() {
		verdict = "**failed**"
	}
	p("### hotpath load: `%s %s`\n\n", res.Method, res.Target)
	what := fmt.Sprintf("%s, %d connections", res.Mode, res.Connections)
	if res.Rate > 0 {
		what += fmt.Sprintf(", %s req/s asked, %s achieved", num(res.Rate), num(res.AchievedRate))
	}
	p("%s, %s, %s. %s requests in %s, %s req/s, %s errors.\n\n", what, res.Proto, res.Engine,
		count(res.Requests), secs(res.ElapsedS), num(res.ReqPerS), count(res.Errors))
	q := res.Latency
	p("| latency | p50 | p90 | p99 | p99.9 | max | mean |\n|---|---|---|---|---|---|---|\n")
	p("| %s | %s | %s | %s | %s | %s | %s |\n\n", res.Mode, us(q.P50), us(q.P90), us(q.P99), us(q.P999), us(q.Max), us(int64(q.Mean)))
	p("Status: %s", counts(res.Status, true))
	if res.Errors > 0 {
		p("; errors: %s", res.errorKinds())
	}
	p("\n\n")
	for _, warn := range res.Warnings {
		p("> **Warning:** %s\n\n", warn)
	}
	if len(res.Thresholds) > 0 {
		p("Thresholds %s:\n\n| threshold | measured | verdict |\n|---|---|---|\n", verdict)
		for _, t := range res.Thresholds {
			v := "pass"
			if !t.Pass {
				v = "**FAIL**"
			}
			if t.Note != "" {
				v += " (" + t.Note + ")"
			}
			p("| `%s` | %s | %s |\n", t.Threshold, t.Measured, v)
		}
		p("\n")
	}
	p("<sub>%s</sub>\n", res.madeLine())
	_, err := io.WriteString(w, b.String())
	return err
}
