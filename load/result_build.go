package load

import (
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// merged holds decoded histograms while a Result is built or merged.
type merged struct {
	latency, service, lag, firstByte, dns, connect, tls *hdrhistogram.Histogram
}

func buildResult(cfg *Config, t *target, recs []*recorder, tl *timeline, r *runner, elapsed time.Duration, cpu cpuUsage) *Result {
	open := cfg.Rate > 0
	m := newMerged(open)
	res := &Result{
		Schema: SchemaVersion, Sources: 1,
		Target: t.url.String(), Method: cfg.Method, Mode: cfg.mode(), Proto: string(cfg.Proto),
		Engine: string(cfg.Engine), ResponseBody: cfg.ResponseBody.String(), KeepAlive: !cfg.DisableKeepAlive,
		Connections: r.conns, Rate: cfg.Rate * float64(r.conns) / float64(cfg.Connections),
		Start: r.start.UTC(), ElapsedS: elapsed.Seconds(),
		HistogramConfig: histogramConfig,
		Status:          map[string]int64{}, ErrorsByKind: map[string]int64{}, Protocols: map[string]int64{},
		Dropped:    r.dropped.Load(),
		Meta:       newMeta(cfg.Command),
		Streams:    cfg.Streams,
		Stages:     formatStages(cfg.Stages),
		ConnStages: formatStages(cfg.ConnStages),
	}
	for _, t := range cfg.Thresholds {
		res.Thresholds = append(res.Thresholds, ThresholdResult{Threshold: Threshold(strings.TrimSpace(string(t)))})
	}
	if m := cfg.mix; m != nil {
		for _, tg := range m.targets {
			res.Targets = append(res.Targets, TargetResult{Method: tg.Method, URL: tg.URL, Weight: tg.Weight, Status: map[string]int64{}})
		}
	}
	// The sending window: the duration asked for, unless the run stopped
	// early (canceled, or -n reached: then the time it ran); without a
	// duration, the whole run.
	res.DurationS = res.ElapsedS
	if early := r.halt.Load() || (r.limit > 0 && r.left.Load() <= 0); cfg.Duration > 0 && !early {
		res.DurationS = cfg.Duration.Seconds()
	} else if cfg.Duration > 0 {
		res.DurationS = min(cfg.Duration.Seconds(), res.ElapsedS)
	}
	th := make(targetHists, len(res.Targets))
	for _, rec := range recs {
		m.add(&merged{rec.latency, rec.service, rec.lag, rec.firstByte, rec.dns, rec.connect, rec.tls})
		res.Sent += rec.sent
		res.Requests += rec.requests
		res.Censored += rec.censored
		res.addTargets(rec.targets, th)
		res.Conns.Opened += rec.opened
		res.Conns.Reused += rec.reused
		res.BytesIn += rec.bytesIn
		res.BytesOut += rec.bytesOut
		for code, n := range rec.status {
			if n > 0 {
				res.Status[strconv.Itoa(code)] += n
			}
		}
		for k, n := range rec.errs {
			if n > 0 {
				res.ErrorsByKind[errKindNames[k]] += n
				res.Errors += n
			}
		}
		for p, n := range rec.protos {
			if n > 0 {
				res.Protocols[protoNames[p]] += n
			}
		}
	}
	res.Sent = res.Requests + res.Errors // failed dials count as sent requests
	if cfg.Shards > 1 || !cfg.StartAt.IsZero() || cfg.RunID != "" {
		res.Shard = &ShardInfo{Index: cfg.Shard, Count: cfg.shards(), RunID: cfg.RunID, StartAt: cfg.StartAt.UTC(), LateUS: r.late.Microseconds()}
		if cfg.StartAt.IsZero() {
			res.Shard.StartAt = time.Time{}
		}
	}
	res.Histograms = m.encode()
	for i, w := range tl.wins {
		if w == nil {
			continue
		}
		width := max(tl.width, 1)
		res.Timeline = append(res.Timeline, Window{T: i * width, WidthS: width, Requests: w.requests, Errors: w.errors, Hist: encodeHist(w.hist)})
	}
	u := cpu.user.Seconds() + cpu.sys.Seconds()
	res.CPU = CPUStats{UserS: cpu.user.Seconds(), SysS: cpu.sys.Seconds(), Cores: runtime.GOMAXPROCS(0)}
	if res.ElapsedS > 0 {
		res.CPU.Utilization = u / (res.ElapsedS * float64(res.CPU.Cores))
	}
	th.finish(res)
	res.derive(m)
	return res
}

// derive computes every field that follows from the counts and the
// histograms: percentiles, rates, ratios and warnings. Merge calls it on
// the sum.
func (res *Result) derive(m *merged) {
	res.Latency = summarize(m.latency)
	res.FirstByte = summarize(m.firstByte)
	res.DNS = summarize(m.dns)
	res.Connect = summarize(m.connect)
	res.TLS = summarize(m.tls)
	res.Service, res.ScheduleLag = nil, nil
	if m.service != nil {
		s, l := summarize(m.service), summarize(m.lag)
		res.Service, res.ScheduleLag = &s, &l
	}
	for i := range res.Timeline {
		w := &res.Timeline[i]
		if h, err := decodeHist(w.Hist, newPhaseHist); err == nil {
			p := summarize(h)
			w.P50, w.P99, w.Max = p.P50, p.P99, p.Max
		}
	}
	// Throughput is over the sending window, as wrk reports it: not over
	// the elapsed time, which in open loop may end before the window does
	// (the last due time came early) and in closed loop includes the
	// requests still in flight when the window closed (a stalled one can
	// hold it open up to the timeout).
	switch {
	case res.DurationS > 0:
		res.ReqPerS = float64(res.Requests) / res.DurationS
	case res.ElapsedS > 0:
		res.ReqPerS = float64(res.Requests) / res.ElapsedS
	}
	res.AchievedRate = 0
	if res.Rate > 0 && res.DurationS > 0 {
		res.AchievedRate = float64(res.Sent) / res.DurationS
	}
	res.Conns.ReuseRatio, res.Conns.PerThousand = 0, 0
	if res.Sent > 0 {
		res.Conns.ReuseRatio = float64(res.Conns.Reused) / float64(res.Sent)
		res.Conns.PerThousand = 1000 * float64(res.Conns.Opened) / float64(res.Sent)
		res.CPU.PerRequestUS = 1e6 * (res.CPU.UserS + res.CPU.SysS) / float64(res.Sent)
	}
	res.Warnings = res.warnings()
	res.evaluateThresholds(m.latency)
}

// decodeAll decodes res's histograms.
func (res *Result) decodeAll() (*merged, error) {
	var m merged
	var err error
	dec := func(dst **hdrhistogram.Histogram, s string, like func() *hdrhistogram.Histogram) {
		if err == nil {
			*dst, err = decodeHist(s, like)
		}
	}
	h := &res.Histograms
	dec(&m.latency, h.Latency, newHist)
	dec(&m.firstByte, h.FirstByte, newPhaseHist)
	dec(&m.dns, h.DNS, newPhaseHist)
	dec(&m.connect, h.Connect, newPhaseHist)
	dec(&m.tls, h.TLS, newPhaseHist)
	if res.Mode == "open-loop" {
		dec(&m.service, h.Service, newHist)
		dec(&m.lag, h.ScheduleLag, newPhaseHist)
	}
	return &m, err
}

// newMerged returns empty histograms; service and lag only for open loop.
func newMerged(open bool) *merged {
	m := &merged{latency: newHist(), firstByte: newPhaseHist(), dns: newPhaseHist(), connect: newPhaseHist(), tls: newPhaseHist()}
	if open {
		m.service, m.lag = newHist(), newPhaseHist()
	}
	return m
}

// add merges src's histograms into m's.
func (m *merged) add(src *merged) {
	m.latency.Merge(src.latency)
	m.firstByte.Merge(src.firstByte)
	m.dns.Merge(src.dns)
	m.connect.Merge(src.connect)
	m.tls.Merge(src.tls)
	if m.service != nil && src.service != nil {
		m.service.Merge(src.service)
		m.lag.Merge(src.lag)
	}
}

// encode returns m in the JSON form.
func (m *merged) encode() Histograms {
	h := Histograms{
		Latency: encodeHist(m.latency), FirstByte: encodeHist(m.firstByte),
		DNS: encodeHist(m.dns), Connect: encodeHist(m.connect), TLS: encodeHist(m.tls),
	}
	if m.service != nil {
		h.Service, h.ScheduleLag = encodeHist(m.service), encodeHist(m.lag)
	}
	return h
}

// targetHists gathers the per-target latency histograms of the results
// or recorders that make one result, so that each is encoded once, at the
// end (finish).
type targetHists []*hdrhistogram.Histogram

// add merges h into target i's histogram.
func (th targetHists) add(i int, h *hdrhistogram.Histogram) {
	if th[i] == nil {
		th[i] = newPhaseHist()
	}
	th[i].Merge(h)
}

// finish writes the gathered histograms and their percentiles into
// res.Targets.
func (th targetHists) finish(res *Result) {
	for i, h := range th {
		if h != nil {
			res.Targets[i].Hist = encodeHist(h)
			p := summarize(h)
			res.Targets[i].Latency = &p
		}
	}
}

// addTargets adds a recorder's per-target figures to res.Targets, its
// histograms to th.
func (res *Result) addTargets(ts []targetStats, th targetHists) {
	for i := range ts {
		tr, st := &res.Targets[i], &ts[i]
		tr.Sent += st.sent
		tr.Requests += st.requests
		tr.Errors += st.errors
		for code, n := range st.status {
			tr.Status[strconv.Itoa(code)] += n
		}
		if st.latency != nil {
			th.add(i, st.latency)
		}
	}
}
