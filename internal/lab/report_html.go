package lab

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page
// (index.html): inline CSS and SVG charts, no scripts, no external URLs.
func WriteHTML(w io.Writer, rep *Report) error {
	var b strings.Builder
	esc := html.EscapeString
	m := rep.Machine
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>hotpath lab report</title><style>` + reportCSS + verdictCSS() + `</style></head><body><main>`)
	fmt.Fprintf(&b, `<h1>hotpath lab</h1><p class="lead">Every performance claim of the five articles below, measured on this machine, with a verdict.</p>`)
	fmt.Fprintf(&b, `<dl class="machine"><dt>CPU</dt><dd>%s</dd><dt>Cores</dt><dd>%d (GOMAXPROCS %d)</dd><dt>Memory</dt><dd>%d MB</dd><dt>Go</dt><dd>%s %s/%s</dd><dt>Kernel</dt><dd>%s</dd><dt>Run</dt><dd>%s, %s, %s</dd></dl>`,
		esc(m.CPU), m.Cores, m.GOMAXPROCS, m.MemoryMB, esc(m.GoVersion), m.OS, m.Arch, esc(m.Kernel), esc(rep.runsText()), rep.Started.Format("2006-01-02 15:04 MST"), rep.Duration.Round(1e9))
	writeHTMLSources(&b, rep)
	exps, claims := rep.Counts()
	b.WriteString(`<p class="counts"><span class="label">claims</span> `)
	for _, v := range ClaimVerdicts {
		if claims[v] > 0 || v != NotReproducible {
			fmt.Fprintf(&b, `<span class="badge %s">%d %s</span> `, verdictClass(v), claims[v], v)
		}
	}
	b.WriteString(`<br><span class="label">experiments</span> `)
	for _, v := range ExperimentVerdicts {
		if exps[v] > 0 {
			fmt.Fprintf(&b, `<span class="badge %s">%d %s</span> `, verdictClass(v), exps[v], v)
		}
	}
	b.WriteString(`</p><h2 id="claims">Claims and measurements</h2>`)
	writeHTMLRule(&b)
	b.WriteString(`<table class="summary"><thead><tr><th>experiment</th><th>claim</th><th class="num">claimed</th><th class="num">measured (95% CI)</th><th>verdict</th></tr></thead><tbody>`)
	for _, r := range rep.Results {
		first := true
		link := fmt.Sprintf(`<a href="#e-%s">%s</a>`, esc(r.ID), esc(r.ID))
		if len(r.Comparisons) == 0 {
			fmt.Fprintf(&b, `<tr class="first"><td>%s<div class="title">%s</div></td><td colspan="3">%s</td><td>%s</td></tr>`, link, esc(r.Title), esc(r.Why), badge(r.Verdict))
		}
		for _, c := range r.Comparisons {
			if c.Verdict == Info {
				continue
			}
			cell, cls := "", ""
			if first {
				cell, cls = link+`<div class="title">`+esc(r.Title)+`</div>`, ` class="first"`
				first = false
			}
			ratio, ci := c.MeasuredText()
			fmt.Fprintf(&b, `<tr%s><td>%s</td><td><b>%s</b> · %s</td><td class="num">%s</td><td class="num">%s <span class="ci">%s</span></td><td>%s</td></tr>`,
				cls, cell, esc(c.Name), esc(c.Claim.Quote), claimText(c.Claim), ratio, ci, badge(c.Verdict))
		}
	}
	b.WriteString(`</tbody></table>`)
	for _, r := range rep.Results {
		writeHTMLResult(&b, r)
	}
	b.WriteString(`<footer>Written by <code>hotpath lab</code>. The rule above is also in results.json ("rule").</footer></main></body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHTMLRule writes the verdict rule as a visible box: each verdict's
// badge beside its condition.
func writeHTMLRule(b *strings.Builder) {
	esc := html.EscapeString
	fmt.Fprintf(b, `<div class="rule"><p><b>How a ratio becomes a verdict.</b> %s</p><table class="rule">`, esc(RuleIntro))
	for _, l := range RuleLines {
		fmt.Fprintf(b, `<tr><td>%s</td><td>%s</td></tr>`, badge(l.Verdict), esc(l.When))
	}
	fmt.Fprintf(b, `</table><p>Rules apply in this order; the first that fits is the verdict. %s</p></div>`, esc(RuleExperiment))
}

// writeHTMLSources writes the seed articles the run's experiments test.
func writeHTMLSources(b *strings.Builder, rep *Report) {
	esc := html.EscapeString
	b.WriteString(`<h2 id="sources">The articles whose claims are tested</h2><table class="sources"><thead><tr><th>seed</th><th>article</th><th>its claim, quoted</th><th>experiments</th></tr></thead><tbody>`)
	for _, s := range rep.Sources {
		var ids []string
		for _, r := range rep.Results {
			if r.Seed == s.Seed {
				ids = append(ids, fmt.Sprintf(`<a href="#e-%s">%s</a>`, esc(r.ID), esc(r.ID)))
			}
		}
		extra := ""
		if s.URL != "" {
			extra += `<div class="ci">` + esc(stripScheme(s.URL)) + `</div>`
		}
		if s.Code != "" {
			extra += `<div class="ci">code: ` + esc(stripScheme(s.Code)) + `</div>`
		}
		fmt.Fprintf(b, `<tr id="seed-%s"><td>%s</td><td><b>%s</b><div class="ci">%s</div>%s</td><td class="quote">“%s”</td><td>%s</td></tr>`,
			esc(s.Seed), esc(s.Seed), esc(s.Title), esc(s.Byline()), extra, esc(s.Claim), strings.Join(ids, " "))
	}
	b.WriteString(`</tbody></table>`)
}

// stripScheme shows a URL without "https://": the page links nothing
// outside itself (it is self-contained), and the rest of the address
// reads the same.
func stripScheme(u string) string {
	return strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
}

func writeHTMLResult(b *strings.Builder, r *Result) {
	esc := html.EscapeString
	fmt.Fprintf(b, `<section id="e-%s"><h2>%s <span class="sub">%s</span></h2><p class="source">Seed %s: <a href="#seed-%s">%s</a> · %s</p><p class="verdict">%s%s %s</p>`, esc(r.ID), esc(r.ID), esc(r.Title), esc(r.Seed), esc(r.Seed), esc(sourceTitle(r.Seed)), esc(r.runsText()), badge(r.Verdict), breakdownHTML(r), esc(r.Why))
	if r.Err != "" {
		b.WriteString(`</section>`)
		return
	}
	b.WriteString(`<div class="charts">`)
	b.WriteString(ratioChart(r))
	b.WriteString(armsChart(r))
	b.WriteString(`</div>`)
	fmt.Fprintf(b, `<p class="setup"><b>Setup.</b> %s</p><p class="setup"><b>Same work.</b> %s</p>`, esc(r.Setup), esc(r.SameWork))
	b.WriteString(`<table class="arms"><thead><tr><th>arm</th>`)
	for _, m := range r.Metrics {
		fmt.Fprintf(b, `<th class="num">%s</th>`, esc(m.Name))
	}
	b.WriteString(`</tr></thead><tbody>`)
	for _, a := range r.Arms {
		fmt.Fprintf(b, `<tr><td>%s</td>`, esc(a.Name))
		for _, m := range r.Metrics {
			if s, ok := a.Stats[m.Name]; ok {
				fmt.Fprintf(b, `<td class="num">%s <span class="ci">±%s</span></td>`, FormatValue(s.Median), spread(s))
			} else {
				b.WriteString(`<td class="num ci">–</td>`)
			}
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table><table class="cmp"><thead><tr><th>comparison</th><th>metric</th><th>verdict</th><th>why</th></tr></thead><tbody>`)
	for _, c := range r.Comparisons {
		fmt.Fprintf(b, `<tr><td><b>%s</b><div class="ci">%s → %s</div></td><td>%s</td><td>%s</td><td>%s</td></tr>`, esc(c.Name), esc(c.Before), esc(c.After), esc(c.Metric), badge(c.Verdict), esc(c.Why))
	}
	b.WriteString(`</tbody></table>`)
	if len(r.Notes) > 0 {
		b.WriteString(`<ul class="notes">`)
		for _, n := range r.Notes {
			fmt.Fprintf(b, `<li>%s</li>`, esc(n))
		}
		b.WriteString(`</ul>`)
	}
	for _, a := range r.Arms {
		if a.Code != "" {
			fmt.Fprintf(b, `<details class="code"><summary>%s</summary><pre>%s</pre></details>`, esc(a.Name), esc(a.Code))
		}
	}
	b.WriteString(`</section>`)
}

func badge(v Verdict) string {
	return fmt.Sprintf(`<span class="badge %s">%s</span>`, verdictClass(v), html.EscapeString(string(v)))
}

// breakdownHTML counts a mixed experiment's claim verdicts.
func breakdownHTML(r *Result) string {
	if r.Verdict != Mixed {
		return ""
	}
	return ` <span class="ci">(` + html.EscapeString(Breakdown(r.Comparisons)) + `)</span>`
}

// verdictStyles gives each verdict its CSS class and colour; an
// inconclusive badge is outlined, not filled: it is not an answer yet.
var verdictStyles = map[Verdict]struct{ class, color string }{
	Confirmed:       {"ok", "#1a7f4b"},
	Smaller:         {"smaller", "#b26a00"},
	Larger:          {"larger", "#2d6cb5"},
	NoEffect:        {"noeffect", "#c0392b"},
	Opposite:        {"opposite", "#7b1e3a"},
	Inconclusive:    {"inconclusive", "#6b7280"},
	NotReproducible: {"na", "#8a919e"},
	Mixed:           {"mixed", "#5b4a8a"},
	Info:            {"info", "#9aa3b2"},
}

func verdictClass(v Verdict) string {
	if s, ok := verdictStyles[v]; ok {
		return s.class
	}
	return "na"
}

func verdictColor(v Verdict) string {
	if s, ok := verdictStyles[v]; ok {
		return s.color
	}
	return "#6b7280"
}

func verdictCSS() string {
	var b strings.Builder
	for _, v := range append(ExperimentVerdicts, Info) {
		s := verdictStyles[v]
		if v == Inconclusive {
			fmt.Fprintf(&b, ".badge.%s{background:#fff;color:%s;box-shadow:inset 0 0 0 1.5px %s}", s.class, s.color, s.color)
			continue
		}
		fmt.Fprintf(&b, ".badge.%s{background:%s}", s.class, s.color)
	}
	return b.String()
}

// sourceTitle is the title of a seed's article, or "?" if none is known.
func sourceTitle(seed string) string {
	if s, ok := SourceOf(seed); ok {
		return s.Title
	}
	return "?"
}

const reportCSS = `
:root{--fg:#1d2330;--muted:#5d6677;--line:#e3e6ec;--bg:#fff;--ok:#1a7f4b;--partly:#b26a00;--bad:#c0392b;--na:#6b7280;--bar:#3b6fd8}
*{box-sizing:border-box}body{margin:0;background:#f6f7f9;color:var(--fg);font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:28px 32px 60px;background:var(--bg)}
h1{margin:0;font-size:30px}h2{font-size:21px;margin:30px 0 8px}.sub{font-weight:400;color:var(--muted);font-size:15px}
.lead{color:var(--muted);margin:4px 0 16px}
dl.machine{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0 0 10px;font-size:14px}dl.machine dt{color:var(--muted)}dl.machine dd{margin:0}
table{border-collapse:collapse;width:100%;margin:10px 0;font-size:13.5px}th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:12.5px}
td.num,th.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
tr.first td{border-top:2px solid #cfd4dc}.title{color:var(--muted);font-size:12.5px}
.ci{color:var(--muted);font-size:12px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;color:#fff;white-space:nowrap}
.counts{line-height:2.2}.counts .badge{font-size:13px;padding:3px 10px}.counts .label{display:inline-block;width:90px;color:var(--muted);font-size:13px}
section{border-top:1px solid var(--line);margin-top:26px}
.verdict{margin:4px 0 8px}.setup{font-size:13.5px;color:#384052;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:18px;margin:8px 0}.charts svg{background:#fbfbfd;border:1px solid var(--line);border-radius:6px}
.notes{font-size:13.5px;color:#384052}details.code summary{cursor:pointer;color:var(--muted);font-size:13px}
div.rule{background:#f6f8fb;border:1px solid var(--line);border-radius:6px;padding:8px 14px;margin:6px 0 12px;font-size:13px;color:#384052}div.rule p{margin:4px 0}
table.rule{margin:4px 0;font-size:13px}table.rule td{border:0;padding:2px 8px 2px 0}table.rule td:first-child{white-space:nowrap;width:1%}
table.sources td.quote{font-style:italic;color:#384052}.source{margin:0 0 4px;color:var(--muted);font-size:13.5px}
pre{background:#f3f4f7;padding:10px 12px;border-radius:6px;font-size:12.5px;overflow:auto}
footer{margin-top:40px;color:var(--muted);font-size:13px}
a{color:var(--bar)}
`
