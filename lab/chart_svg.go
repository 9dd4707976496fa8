package lab

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// ratioChart draws each comparison's measured ratio (a bar from 1× to the
// median, with the confidence interval as a whisker) against the claimed
// ratio (a diamond), on a log axis with 1× marked.
func ratioChart(r *Result) string {
	cs := r.Comparisons
	if len(cs) == 0 {
		return ""
	}
	const w, labelW, rowH, top = 545, 180, 26, 30
	h := top + rowH*len(cs) + 28
	lo, hi := 1.0, 1.0
	for _, c := range cs {
		vs := []float64{c.Claim.Ratio}
		if !c.AfterZero {
			vs = append(vs, c.Measured.Lo, c.Measured.Hi, c.Measured.Median)
		}
		for _, v := range vs {
			if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo)*2)/2), math.Pow(10, math.Ceil(math.Log10(hi)*2)/2)
	if hi/lo < 10 {
		lo, hi = lo/2, hi*2
	}
	x0, x1 := float64(labelW), float64(w-20)
	x := func(v float64) float64 {
		v = math.Min(hi, math.Max(lo, v))
		return x0 + (x1-x0)*(math.Log(v)-math.Log(lo))/(math.Log(hi)-math.Log(lo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="measured vs claimed ratios" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="12" font-weight="600" fill="#1d2330">measured vs claimed ratio (log scale, &gt;1× = after better)</text>`)
	for _, t := range logTicks(lo, hi) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e3e6ec"/><text x="%.1f" y="%d" text-anchor="middle" fill="#5d6677">%s</text>`, x(t), x(t), top-4, h-22, x(t), h-8, FormatRatio(t))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#1d2330" stroke-width="1.2"/>`, x(1), x(1), top-6, h-22)
	for i, c := range cs {
		y := float64(top + rowH*i + rowH/2)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#1d2330">%s</text>`, labelW-8, y, html.EscapeString(truncate(c.Name, 30)))
		m := c.Measured
		if c.AfterZero {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1a7f4b" stroke-width="3" stroke-dasharray="4 3"/><text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#1a7f4b">cost → 0</text>`, x(1), x1-46, y, y, x1, y)
		} else if !math.IsNaN(m.Median) {
			color := map[Verdict]string{Confirmed: "#1a7f4b", Partly: "#d08a1c", Refuted: "#c0392b", Info: "#9aa3b2"}[c.Verdict]
			if color == "" {
				color = "#6b7280"
			}
			a, z := x(1), x(m.Median)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s" opacity="0.85"><title>measured %s (CI %s–%s)</title></rect>`, math.Min(a, z), y-5, math.Max(1, math.Abs(z-a)), color, FormatRatio(m.Median), FormatRatio(m.Lo), FormatRatio(m.Hi))
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1d2330"/>`, x(m.Lo), x(m.Hi), y, y)
			for _, e := range []float64{m.Lo, m.Hi} {
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1d2330"/>`, x(e), x(e), y-4, y+4)
			}
		}
		if c.Claim.Ratio > 0 && !c.Claim.Info {
			cx := x(c.Claim.Ratio)
			fmt.Fprintf(&b, `<path d="M%.1f %.1f l6 6 l-6 6 l-6 -6 z" fill="#fff" stroke="#1d2330" stroke-width="1.5"><title>claimed %s</title></path>`, cx, y-6, FormatRatio(c.Claim.Ratio))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// armsChart draws every arm's median on the first compared metric.
func armsChart(r *Result) string {
	if len(r.Comparisons) == 0 {
		return ""
	}
	metric := r.Comparisons[0].Metric
	type bar struct {
		name string
		s    Stat
	}
	var bars []bar
	maxV := 0.0
	for _, a := range r.Arms {
		if s, ok := a.Stats[metric]; ok && !math.IsNaN(s.Median) {
			bars = append(bars, bar{a.Name, s})
			maxV = math.Max(maxV, math.Max(s.Median, s.Hi))
		}
	}
	if len(bars) == 0 || maxV <= 0 {
		return ""
	}
	const w, labelW, rowH, top = 545, 220, 22, 30
	h := top + rowH*len(bars) + 10
	scale := float64(w-labelW-70) / maxV
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="arms" font-family="sans-serif" font-size="11">`, w, h, w, h)
	m, _ := r.metric(metric)
	dir := "lower is better"
	if !m.LowerIsBetter {
		dir = "higher is better"
	}
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="12" font-weight="600" fill="#1d2330">%s by arm (%s)</text>`, html.EscapeString(metric), dir)
	for i, br := range bars {
		y := float64(top + rowH*i)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#1d2330">%s</text>`, labelW-8, y+8, html.EscapeString(truncate(br.name, 38)))
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%.1f" height="14" fill="#3b6fd8" opacity="0.8"/>`, labelW, y+1, math.Max(1, br.s.Median*scale))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1d2330"/>`, float64(labelW)+br.s.Lo*scale, float64(labelW)+br.s.Hi*scale, y+8, y+8)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle" fill="#384052">%s</text>`, float64(labelW)+math.Max(br.s.Median, br.s.Hi)*scale+6, y+8, FormatValue(br.s.Median))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// logTicks returns 1-2-5 ticks between lo and hi, at most about eight.
func logTicks(lo, hi float64) []float64 {
	var ts []float64
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			if t := m * math.Pow(10, e); t >= lo*0.999 && t <= hi*1.001 {
				ts = append(ts, t)
			}
		}
	}
	if len(ts) > 8 {
		var out []float64
		for _, t := range ts {
			if l := math.Log10(t); math.Abs(l-math.Round(l)) < 1e-9 {
				out = append(out, t)
			}
		}
		return out
	}
	return ts
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
