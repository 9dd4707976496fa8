package lab

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// ratioChart draws each comparison's measured ratio (a bar from 1× to the
// median, coloured by its verdict, with the confidence interval as a
// whisker) against the claimed ratio (a diamond), on a log axis with 1×
// marked, and a legend under the axis.
func ratioChart(r *Result) string {
	cs := r.Comparisons
	if len(cs) == 0 {
		return ""
	}
	const w, labelW, top, lineH = 545, 190, 30, 13
	rows, ys, h := chartRows(cs, 27, func(c Comparison) string { return c.Name }, 28, top)
	h += 44 // the axis labels and the legend
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
	axisY := h - 44
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="measured vs claimed ratios" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="12" font-weight="600" fill="#1d2330">measured vs claimed ratio (log scale, &gt;1× = after better)</text>`)
	for _, t := range logTicks(lo, hi) {
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e3e6ec"/><text x="%.1f" y="%d" text-anchor="middle" fill="#5d6677">%s</text>`, x(t), x(t), top-4, axisY, x(t), axisY+14, FormatRatio(t))
	}
	fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#1d2330" stroke-width="1.2"/>`, x(1), x(1), top-6, axisY)
	for i, c := range cs {
		y := ys[i]
		writeLabel(&b, labelW-8, y, rows[i], lineH)
		m := c.Measured
		claimX := math.NaN()
		if c.Claim.Ratio > 0 && !c.Claim.Info {
			claimX = x(c.Claim.Ratio)
		}
		if c.AfterZero {
			// The label goes where the claim's diamond is not: at the right
			// end of the line, or just right of 1× when the diamond is there.
			const textW = 54
			tx, anchor := x1, "end"
			if !math.IsNaN(claimX) && claimX > x1-textW-10 {
				tx, anchor = x(1)+6, "start"
			}
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="3" stroke-dasharray="4 3"/>`, x(1), x1, y, y, verdictColor(c.Verdict))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="%s" fill="%s" font-weight="600" paint-order="stroke" stroke="#fbfbfd" stroke-width="4">cost → 0</text>`, tx, y-6, anchor, verdictColor(c.Verdict))
		} else if !math.IsNaN(m.Median) {
			a, z := x(1), x(m.Median)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="10" fill="%s" opacity="0.85"><title>measured %s (CI %s–%s): %s</title></rect>`, math.Min(a, z), y-5, math.Max(1, math.Abs(z-a)), verdictColor(c.Verdict), FormatRatio(m.Median), FormatRatio(m.Lo), FormatRatio(m.Hi), c.Verdict)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1d2330"/>`, x(m.Lo), x(m.Hi), y, y)
			for _, e := range []float64{m.Lo, m.Hi} {
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="#1d2330"/>`, x(e), x(e), y-4, y+4)
			}
		}
		if !math.IsNaN(claimX) {
			fmt.Fprintf(&b, `<path d="M%.1f %.1f l6 6 l-6 6 l-6 -6 z" fill="#fff" stroke="#1d2330" stroke-width="1.5"><title>claimed %s</title></path>`, claimX, y-6, FormatRatio(c.Claim.Ratio))
		}
	}
	// Legend: what the marks mean, beside the marks themselves.
	ly := float64(h - 12)
	fmt.Fprintf(&b, `<rect x="10" y="%.1f" width="18" height="9" fill="#6b7280" opacity="0.85"/><text x="33" y="%.1f" dominant-baseline="middle" fill="#384052">measured median (colour: verdict)</text>`, ly-5, ly)
	fmt.Fprintf(&b, `<line x1="215" x2="239" y1="%.1f" y2="%.1f" stroke="#1d2330"/><line x1="215" x2="215" y1="%.1f" y2="%.1f" stroke="#1d2330"/><line x1="239" x2="239" y1="%.1f" y2="%.1f" stroke="#1d2330"/><text x="245" y="%.1f" dominant-baseline="middle" fill="#384052">95%% CI</text>`, ly, ly, ly-4, ly+4, ly-4, ly+4, ly)
	fmt.Fprintf(&b, `<path d="M300 %.1f l6 6 l-6 6 l-6 -6 z" fill="#fff" stroke="#1d2330" stroke-width="1.5"/><text x="312" y="%.1f" dominant-baseline="middle" fill="#384052">claimed</text>`, ly-6, ly)
	fmt.Fprintf(&b, `<line x1="368" x2="392" y1="%.1f" y2="%.1f" stroke="#6b7280" stroke-width="3" stroke-dasharray="4 3"/><text x="398" y="%.1f" dominant-baseline="middle" fill="#384052">cost → 0 (after ≈ 0)</text>`, ly, ly, ly)
	b.WriteString(`</svg>`)
	return b.String()
}

// chartRows wraps each row's label to at most two lines and returns the
// lines, each row's centre y and the height used so far (top + rows).
func chartRows[T any](items []T, rowH int, label func(T) string, width, top int) (rows [][]string, ys []float64, h int) {
	y := top
	for _, it := range items {
		lines := wrapLabel(label(it), width)
		rh := rowH
		if len(lines) > 1 {
			rh += 10
		}
		rows = append(rows, lines)
		ys = append(ys, float64(y)+float64(rh)/2)
		y += rh
	}
	return rows, ys, y + 4
}

// writeLabel writes a right-aligned label of one or two lines centred on y.
func writeLabel(b *strings.Builder, x int, y float64, lines []string, lineH int) {
	y0 := y - float64(lineH)*float64(len(lines)-1)/2
	fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="#1d2330">`, x, y0)
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintf(b, `<tspan x="%d">%s</tspan>`, x, html.EscapeString(l))
		} else {
			fmt.Fprintf(b, `<tspan x="%d" dy="%d">%s</tspan>`, x, lineH, html.EscapeString(l))
		}
	}
	b.WriteString(`</text>`)
}

// wrapLabel splits s at spaces into at most two lines of about width
// runes; only what still does not fit is cut, with "…".
func wrapLabel(s string, width int) []string {
	if len([]rune(s)) <= width {
		return []string{s}
	}
	words := strings.Fields(s)
	first := ""
	i := 0
	for ; i < len(words); i++ {
		next := strings.TrimSpace(first + " " + words[i])
		if len([]rune(next)) > width && first != "" {
			break
		}
		first = next
	}
	rest := strings.Join(words[i:], " ")
	if rest == "" {
		return []string{truncate(first, width)}
	}
	return []string{truncate(first, width), truncate(rest, width)}
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
	const w, labelW, top, lineH = 545, 230, 30, 13
	rows, ys, h := chartRows(bars, 22, func(b bar) string { return b.name }, 34, top)
	h += 6
	scale := float64(w-labelW-70) / maxV
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="arms" font-family="sans-serif" font-size="11">`, w, h, w, h)
	m, _ := r.metric(metric)
	dir := "lower is better"
	if !m.LowerIsBetter {
		dir = "higher is better"
	}
	fmt.Fprintf(&b, `<text x="10" y="18" font-size="12" font-weight="600" fill="#1d2330">%s by arm (%s)<tspan font-weight="400" fill="#5d6677"> · bar: median, line: 95%% CI</tspan></text>`, html.EscapeString(metric), dir)
	for i, br := range bars {
		y := ys[i] - 8
		writeLabel(&b, labelW-8, y+8, rows[i], lineH)
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
