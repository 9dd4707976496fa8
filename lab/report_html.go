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
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>hotpath lab report</title><style>` + reportCSS + `</style></head><body><main>`)
	fmt.Fprintf(&b, `<h1>hotpath lab</h1><p class="lead">Every performance claim in hotpath's seeds, measured on this machine, with a verdict.</p>`)
	fmt.Fprintf(&b, `<dl class="machine"><dt>CPU</dt><dd>%s</dd><dt>Cores</dt><dd>%d (GOMAXPROCS %d)</dd><dt>Memory</dt><dd>%d MB</dd><dt>Go</dt><dd>%s %s/%s</dd><dt>Kernel</dt><dd>%s</dd><dt>Run</dt><dd>%s budget, %d runs per arm, %s, %s</dd></dl>`,
		esc(m.CPU), m.Cores, m.GOMAXPROCS, m.MemoryMB, esc(m.GoVersion), m.OS, m.Arch, esc(m.Kernel), esc(rep.Budget), rep.Runs, rep.Started.Format("2006-01-02 15:04 MST"), rep.Duration.Round(1e9))
	counts, claims := map[Verdict]int{}, map[Verdict]int{}
	for _, r := range rep.Results {
		counts[r.Verdict]++
		for _, c := range r.Comparisons {
			claims[c.Verdict]++
		}
		if r.Err != "" {
			claims[NotReproducible]++
		}
	}
	b.WriteString(`<p class="counts"><span class="label">claims</span> `)
	for _, v := range []Verdict{Confirmed, Partly, Refuted, NotReproducible} {
		fmt.Fprintf(&b, `<span class="badge %s">%d %s</span> `, verdictClass(v), claims[v], v)
	}
	b.WriteString(`<br><span class="label">experiments</span> `)
	for _, v := range []Verdict{Confirmed, Partly, Refuted, NotReproducible} {
		fmt.Fprintf(&b, `<span class="badge %s">%d %s</span> `, verdictClass(v), counts[v], v)
	}
	b.WriteString(`</p><h2>Claims and measurements</h2><table class="summary"><thead><tr><th>experiment</th><th>claim</th><th class="num">claimed</th><th class="num">measured (CI)</th><th>verdict</th></tr></thead><tbody>`)
	for _, r := range rep.Results {
		first := true
		link := fmt.Sprintf(`<a href="#e-%s">%s</a>`, esc(r.ID), esc(r.ID))
		if len(r.Comparisons) == 0 {
			fmt.Fprintf(&b, `<tr class="first"><td>%s</td><td colspan="3">%s</td><td>%s</td></tr>`, link, esc(r.Why), badge(r.Verdict))
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
	fmt.Fprintf(&b, `<details class="rule"><summary>How a ratio becomes a verdict</summary><p>%s</p></details>`, strings.ReplaceAll(esc(rep.Rule), "\n", "<br>"))
	for _, r := range rep.Results {
		writeHTMLResult(&b, r)
	}
	b.WriteString(`<footer>Written by <code>hotpath lab</code>. Ratios are improvement factors: above 1× the "after" arm is better. Bars: measured median with its confidence interval; ◆: the seed's claim.</footer></main></body></html>`)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeHTMLResult(b *strings.Builder, r *Result) {
	esc := html.EscapeString
	fmt.Fprintf(b, `<section id="e-%s"><h2>%s <span class="sub">%s · seed %s</span></h2><p class="verdict">%s %s</p>`, esc(r.ID), esc(r.ID), esc(r.Title), esc(r.Seed), badge(r.Verdict), esc(r.Why))
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

func verdictClass(v Verdict) string {
	switch v {
	case Confirmed:
		return "ok"
	case Partly:
		return "partly"
	case Refuted:
		return "bad"
	case Info:
		return "info"
	}
	return "na"
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
.badge.ok{background:var(--ok)}.badge.partly{background:var(--partly)}.badge.bad{background:var(--bad)}.badge.na{background:var(--na)}.badge.info{background:#9aa3b2}
.counts{line-height:2.2}.counts .badge{font-size:13px;padding:3px 10px}.counts .label{display:inline-block;width:90px;color:var(--muted);font-size:13px}
section{border-top:1px solid var(--line);margin-top:26px}
.verdict{margin:4px 0 8px}.setup{font-size:13.5px;color:#384052;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:18px;margin:8px 0}.charts svg{background:#fbfbfd;border:1px solid var(--line);border-radius:6px}
.notes{font-size:13.5px;color:#384052}details.code summary,details.rule summary{cursor:pointer;color:var(--muted);font-size:13px}
pre{background:#f3f4f7;padding:10px 12px;border-radius:6px;font-size:12.5px;overflow:auto}
footer{margin-top:40px;color:var(--muted);font-size:13px}
a{color:var(--bar)}
`
