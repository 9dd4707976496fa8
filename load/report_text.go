package load

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteText writes the human summary of res: what ran, the latency
// percentiles (labelled closed-loop or open-loop), throughput, connection
// reuse, phases, status codes, errors, the generator's CPU and warnings.
func (res *Result) WriteText(w io.Writer) error {
	b := &strings.Builder{}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }

	what := fmt.Sprintf("%d connections", res.Connections)
	if res.Streams > 1 {
		what += fmt.Sprintf(" × %d streams", res.Streams)
	}
	if res.ConnStages != "" {
		what = fmt.Sprintf("connection stages %s (peak %d)", res.ConnStages, res.Connections)
	}
	if res.Stages != "" {
		what += fmt.Sprintf(", stages %s (mean %s req/s)", res.Stages, num(res.Rate))
	} else if res.Rate > 0 {
		what += fmt.Sprintf(", %s req/s target", num(res.Rate))
	}
	if len(res.Targets) > 0 {
		p("a mix of %d targets on %s  [%s, %s, engine %s, body %s, keep-alive %s]\n", len(res.Targets), res.Target, what, res.Proto, res.Engine, res.ResponseBody, onOff(res.KeepAlive))
	} else {
		p("%s %s  [%s, %s, engine %s, body %s, keep-alive %s]\n", res.Method, res.Target, what, res.Proto, res.Engine, res.ResponseBody, onOff(res.KeepAlive))
	}
	if res.Sources > 1 {
		p("merged from %d runs\n", res.Sources)
	}
	if sh := res.Shard; sh != nil {
		run := ""
		if sh.RunID != "" {
			run = " of run " + sh.RunID
		}
		if sh.Index >= 0 {
			p("shard %d of %d%s", sh.Index, sh.Count, run)
			if !sh.StartAt.IsZero() {
				p(", began %s after its start time", us(sh.LateUS))
			}
			p("\n")
		} else {
			p("shards %v of %d%s merged, start skew %s", sh.Merged, sh.Count, run, us(sh.SkewUS))
			if len(sh.Missing) > 0 {
				p(", MISSING %v", sh.Missing)
			}
			if len(sh.Duplicates) > 0 {
				p(", reported twice %v (one kept)", sh.Duplicates)
			}
			p("\n")
		}
	}
	p("%s requests in %s (%s sending), %s errors\n", count(res.Requests), secs(res.ElapsedS), secs(res.DurationS), count(res.Errors))
	if res.Censored > 0 {
		p("%s sends were still due when the run ended: the latency below counts each with its delay until the end, a lower bound (censored)\n", count(res.Censored))
	}

	p("\nLatency (%s", res.Mode)
	switch res.Mode {
	case "open-loop":
		p(": from each request's intended send time, coordinated omission corrected)\n")
	default:
		p(": from the actual send; stalls hide in fewer samples, use --rate for the latency users see)\n")
	}
	p("  %-13s %9s %9s %9s %9s %9s %9s %9s\n", "", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean")
	row := func(name string, q Percentiles) {
		if q.Count == 0 {
			return
		}
		p("  %-13s %9s %9s %9s %9s %9s %9s %9s\n", name, us(q.P50), us(q.P90), us(q.P99), us(q.P999), us(q.P9999), us(q.Max), us(int64(q.Mean)))
	}
	row("latency", res.Latency)
	if res.Service != nil {
		row("service", *res.Service)
		row("schedule lag", *res.ScheduleLag)
	}
	row("first byte", res.FirstByte)
	row("dns", res.DNS)
	row("connect", res.Connect)
	row("tls", res.TLS)
	if res.ScheduleLag != nil {
		p("%s", lagNote)
	}

	p("\nThroughput  %s req/s", num(res.ReqPerS))
	if res.Rate > 0 {
		p("  (sent %s req/s of %s asked = %.2f%%, %s dropped starts)", num(res.AchievedRate), num(res.Rate), 100*res.AchievedRate/res.Rate, count(res.Dropped))
	}
	p("\n")
	p("Transfer    %s in, %s out\n", bytesStr(res.BytesIn), bytesStr(res.BytesOut))
	p("Connections %s opened, reuse %.1f%%, %.2f per 1k requests\n", count(res.Conns.Opened), 100*res.Conns.ReuseRatio, res.Conns.PerThousand)
	p("Protocols   %s\n", counts(res.Protocols, false))
	if cp := res.ClientPaths; cp != nil {
		fb := "none"
		if len(cp.Fallback) > 0 {
			fb = counts(cp.Fallback, false)
		}
		p("Client      %s on client.Transport's own code, fallback to net/http: %s\n", count(cp.Fast), fb)
	}
	p("Status      %s\n", counts(res.Status, true))
	if len(res.Targets) > 0 {
		p("Targets     (a mix: weight, share of the requests sent, latency p50/p99)\n")
		for _, t := range res.Targets {
			lat := ""
			if t.Latency != nil && t.Latency.Count > 0 {
				lat = fmt.Sprintf("  p50 %s p99 %s", us(t.Latency.P50), us(t.Latency.P99))
			}
			errs := ""
			if t.Errors > 0 {
				errs = fmt.Sprintf(", %s errors", count(t.Errors))
			}
			p("  %-7s %-40s ×%-3d %5.1f%%  %s sent%s  %s%s\n", t.Method, t.URL, t.Weight,
				100*float64(t.Sent)/float64(max(res.Sent, 1)), count(t.Sent), errs, counts(t.Status, true), lat)
		}
	}
	if res.Errors > 0 {
		p("Errors      %s of %s requests sent (%.1f%%): %s\n", count(res.Errors), count(res.Sent), 100*float64(res.Errors)/float64(max(res.Sent, 1)), res.errorKinds())
	}
	p("Generator   %.2f CPU-s (user %.2f, sys %.2f), %.1f CPU-µs/request, %.0f%% of %d core(s)\n",
		res.CPU.UserS+res.CPU.SysS, res.CPU.UserS, res.CPU.SysS, res.CPU.PerRequestUS, 100*res.CPU.Utilization, res.CPU.Cores)
	for _, warn := range res.Warnings {
		p("WARNING: %s\n", warn)
	}
	for i, t := range res.Thresholds {
		if i == 0 {
			p("Thresholds\n")
		}
		verdict := "pass"
		if !t.Pass {
			verdict = "FAIL"
		}
		metric, _, _ := strings.Cut(strings.TrimLeft(string(t.Threshold), " "), "<")
		metric, _, _ = strings.Cut(metric, ">")
		p("  %s  %-16s %s = %s", verdict, t.Threshold, strings.TrimSpace(metric), t.Measured)
		if t.Note != "" {
			p(" (%s)", t.Note)
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// us formats a value in microseconds with a unit that keeps 3-4 digits.
func us(v int64) string {
	d := time.Duration(v) * time.Microsecond
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", v)
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(v)/1e3)
	}
	return fmt.Sprintf("%.2fs", float64(v)/1e6)
}

func secs(s float64) string { return fmt.Sprintf("%.2fs", s) }

// count formats n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func num(f float64) string {
	if f >= 100 {
		return count(int64(f + 0.5))
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

func bytesStr(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// counts formats a map as "k=v k=v", keys sorted (by number when numeric).
func counts(m map[string]int64, numeric bool) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if numeric {
			a, _ := strconv.Atoi(keys[i])
			b, _ := strconv.Atoi(keys[j])
			return a < b
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + count(m[k])
	}
	return strings.Join(parts, " ")
}

// WriteHgrm writes the latency histogram as HdrHistogram's percentile
// distribution text (the .hgrm format wrk2 prints and HdrHistogram's
// plotter reads), values in milliseconds.
func (res *Result) WriteHgrm(w io.Writer) error {
	h, err := res.latencyHist()
	if err != nil {
		return err
	}
	_, err = h.PercentilesPrint(w, 5, 1000)
	return err
}

// lagNote says, under an open-loop table, what latency and schedule lag
// measure (see recorder.add): a lag above the latency is no contradiction.
const lagNote = `  latency: from the due time, less the generator's own lateness; service: from the actual send.
  schedule lag: actual send - due time = the wait behind a busy connection (in latency too) plus
  the generator's own lateness (timer granularity, a busy generator: not charged to latency),
  so lag exceeds latency where that lateness exceeds the service time.
`
