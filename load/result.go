package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// SchemaVersion names the layout of Result's JSON form (see schema.json
// and README.md). A change that breaks readers bumps it.
const SchemaVersion = "hotpath-load/1"

// Result is what a run measured, and the JSON a --json run writes. All
// latencies are in microseconds. Histograms are kept in HdrHistogram's
// lossless V2 compressed base64 form, so results from several machines
// merge exactly (Merge) and other HdrHistogram tools can read them.
type Result struct {
	Schema string `json:"schema"`
	// Sources is how many runs were merged into this result (1 for a run).
	Sources int `json:"sources"`

	// Meta says where and how the result was made, for reports kept as
	// CI artifacts; a merged result keeps the first run's, its Host
	// listing every run's.
	Meta *Meta `json:"meta,omitempty"`

	Target      string  `json:"target"`
	Method      string  `json:"method"`
	Mode        string  `json:"mode"` // "open-loop" or "closed-loop"
	Proto       string  `json:"proto"`
	Engine      string  `json:"engine"`
	Body        string  `json:"body"`
	KeepAlive   bool    `json:"keepalive"`
	Connections int     `json:"connections"`
	Streams     int     `json:"streams,omitempty"`     // HTTP/2: requests in flight per connection, when more than 1
	Rate        float64 `json:"rate,omitempty"`        // open loop: target requests/s in all (with stages, their mean)
	Stages      string  `json:"stages,omitempty"`      // the rate's stages (--stages), as given
	ConnStages  string  `json:"conn_stages,omitempty"` // closed loop: the connections' stages (--conn-stages); connections is their peak

	Start     time.Time `json:"start"`
	DurationS float64   `json:"duration_s"` // the sending window
	ElapsedS  float64   `json:"elapsed_s"`  // sending window plus the requests in flight at its end

	Sent     int64 `json:"sent"`     // requests started
	Requests int64 `json:"requests"` // responses received, any status
	Errors   int64 `json:"errors"`   // requests that got no (valid) response
	Dropped  int64 `json:"dropped"`  // open loop: sends due in the window but never started
	// Censored counts the dropped sends whose delay until the run's end
	// (a lower bound of their latency) is in the latency histogram, as
	// censored samples: a stall at the end of a run still shows.
	Censored int64   `json:"censored,omitempty"`
	ReqPerS  float64 `json:"req_per_s"`
	// AchievedRate is, in open loop, requests sent per second of the
	// sending window, to compare with Rate.
	AchievedRate float64 `json:"achieved_rate,omitempty"`

	// Latency is from the intended send time in open loop (coordinated
	// omission corrected) and from the actual send in closed loop.
	Latency Percentiles `json:"latency"`
	// Service is from the actual send, in open loop only.
	Service *Percentiles `json:"service,omitempty"`
	// ScheduleLag is actual send - intended send, in open loop only.
	ScheduleLag *Percentiles `json:"schedule_lag,omitempty"`
	FirstByte   Percentiles  `json:"first_byte"`
	DNS         Percentiles  `json:"dns"`
	Connect     Percentiles  `json:"connect"`
	TLS         Percentiles  `json:"tls"`

	Status       map[string]int64 `json:"status"`         // "200": count
	ErrorsByKind map[string]int64 `json:"errors_by_kind"` // see README
	Protocols    map[string]int64 `json:"protocols"`      // "HTTP/1.1": responses

	Conns ConnStats `json:"conns"`
	// ClientPaths says, for the hotpath engine, which code sent the
	// requests: client.Transport's own (fast) or its net/http fallback,
	// by reason; absent for the other engines.
	ClientPaths *ClientPaths `json:"client_paths,omitempty"`

	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`

	CPU CPUStats `json:"cpu"`

	Warnings []string `json:"warnings"`

	// Targets break a mix's figures down per target (Config.Targets), in
	// the order given; absent without a mix.
	Targets []TargetResult `json:"targets,omitempty"`

	// Thresholds are the run's pass/fail conditions (Config.Thresholds,
	// --threshold), evaluated on this result; a merge evaluates them
	// again on the merged figures.
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`

	// Shard is set when the run was split across processes (see
	// Config.Shards): which part this result holds, or, merged, which
	// parts it holds and how far apart they started.
	Shard *ShardInfo `json:"shard,omitempty"`

	// HistogramConfig is the geometry of every histogram here: Merge
	// refuses results whose histograms differ (their buckets would not
	// line up).
	HistogramConfig HistogramConfig `json:"histogram_config"`
	Histograms      Histograms      `json:"histograms"`
	Timeline        []Window        `json:"timeline"`
}

// TargetResult is one target of a mix: what was sent to it and what came
// back.
type TargetResult struct {
	Method   string           `json:"method"`
	URL      string           `json:"url"`
	Weight   int              `json:"weight"`
	Sent     int64            `json:"sent"`
	Requests int64            `json:"requests"` // responses, any status
	Errors   int64            `json:"errors"`
	Status   map[string]int64 `json:"status"`
	// Latency is the target's latency (as Result.Latency), from a
	// histogram of 2 significant digits; absent past 64 targets.
	Latency *Percentiles `json:"latency,omitempty"`
	Hist    string       `json:"hist,omitempty"`
}

// Meta is where and how a result was made.
type Meta struct {
	Hotpath   string   `json:"hotpath"`           // the module version of the generator ((devel) from a checkout), and its commit when known
	GoVersion string   `json:"go_version"`        // the Go that built it
	Host      string   `json:"host"`              // the machine's name; merged, the runs' names joined by ", "
	CPUs      int      `json:"cpus"`              // logical CPUs of the machine
	Command   []string `json:"command,omitempty"` // the command line, when a command made it (Config.Command)
}

// newMeta describes this process.
func newMeta(command []string) *Meta {
	m := &Meta{Hotpath: "(unknown)", GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Command: command}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Hotpath = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				m.Hotpath += " " + s.Value[:min(12, len(s.Value))]
			}
		}
	}
	m.Host, _ = os.Hostname()
	return m
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

// mergeTargets adds r's per-target figures to out's (the same targets,
// compatible checked), its histograms to th.
func (out *Result) mergeTargets(r *Result, th targetHists) error {
	for i := range r.Targets {
		tr, st := &out.Targets[i], &r.Targets[i]
		tr.Sent += st.Sent
		tr.Requests += st.Requests
		tr.Errors += st.Errors
		for code, n := range st.Status {
			tr.Status[code] += n
		}
		if st.Hist != "" {
			h, err := decodeHist(st.Hist, newPhaseHist)
			if err != nil {
				return err
			}
			th.add(i, h)
		}
	}
	return nil
}

// targetList names a result's targets, to tell whether two runs sent the
// same mix.
func (res *Result) targetList() string {
	var b strings.Builder
	for _, t := range res.Targets {
		fmt.Fprintf(&b, "%s %s ×%d; ", t.Method, t.URL, t.Weight)
	}
	return b.String()
}

// ShardInfo describes a sharded run's part (Index ≥ 0), or a merge of
// parts (Index -1).
type ShardInfo struct {
	Index int    `json:"index"` // this shard, from 0; -1 in a merged result
	Count int    `json:"count"` // shards in the run
	RunID string `json:"run_id,omitempty"`
	// StartAt is the agreed start (Config.StartAt), if there was one.
	StartAt time.Time `json:"start_at,omitzero"`
	// LateUS is how long after StartAt this shard began, by its own clock;
	// in a merged result, the latest of the shards'.
	LateUS int64 `json:"late_us"`
	// In a merged result: the shards merged, those missing, those
	// reported more than once (one result kept for each), and the start
	// skew: how far apart the shards began (their StartAt plus LateUS).
	Merged     []int `json:"merged,omitempty"`
	Missing    []int `json:"missing,omitempty"`
	Duplicates []int `json:"duplicates,omitempty"`
	SkewUS     int64 `json:"skew_us,omitempty"`
}

// HistogramConfig is the geometry of a result's HdrHistograms, values in
// µs: the range, and the significant digits of the latency histograms
// (latency, service) and of the others (phases, schedule lag, timeline).
type HistogramConfig struct {
	LowestUS    int64 `json:"lowest_us"`
	HighestUS   int64 `json:"highest_us"`
	Digits      int   `json:"digits"`
	PhaseDigits int   `json:"phase_digits"`
}

// histogramConfig is the geometry this package records with.
var histogramConfig = HistogramConfig{LowestUS: histLowest, HighestUS: histHighest, Digits: histDigits, PhaseDigits: phaseDigits}

// ConnStats says how well connections were reused.
type ConnStats struct {
	Opened int64 `json:"opened"`
	// Reused counts requests sent on a connection that had served one.
	Reused int64 `json:"reused"`
	// ReuseRatio is Reused / Sent.
	ReuseRatio float64 `json:"reuse_ratio"`
	// PerThousand is connections opened per 1000 requests sent.
	PerThousand float64 `json:"per_1k_requests"`
}

// ClientPaths counts the requests client.Transport (the hotpath engine)
// served on its own code and those it handed to its fallback, by reason
// ("proxy", "connect", "upgrade", "scheme"): see client.Snapshot.
type ClientPaths struct {
	Fast     int64            `json:"fast"`
	Fallback map[string]int64 `json:"fallback,omitempty"`
}

// add adds p's counts to c's.
func (c *ClientPaths) add(p *ClientPaths) {
	c.Fast += p.Fast
	for k, n := range p.Fallback {
		if c.Fallback == nil {
			c.Fallback = map[string]int64{}
		}
		c.Fallback[k] += n
	}
}

// CPUStats is the generator's own CPU use during the run.
type CPUStats struct {
	UserS float64 `json:"user_s"`
	SysS  float64 `json:"sys_s"`
	// PerRequestUS is CPU-µs the generator spent per request sent.
	PerRequestUS float64 `json:"per_request_us"`
	// Cores is GOMAXPROCS: the cores the generator could use.
	Cores int `json:"cores"`
	// Utilization is CPU time / (elapsed × Cores), 0 to 1.
	Utilization float64 `json:"utilization"`
}

// Histograms are the merged HdrHistograms, V2 compressed and base64
// encoded, values in µs. Empty strings are empty histograms.
type Histograms struct {
	Latency     string `json:"latency"`
	Service     string `json:"service,omitempty"`
	ScheduleLag string `json:"schedule_lag,omitempty"`
	FirstByte   string `json:"first_byte"`
	DNS         string `json:"dns"`
	Connect     string `json:"connect"`
	TLS         string `json:"tls"`
}

// Window is one second of the run.
type Window struct {
	// T is the window's start, in whole seconds since Start.
	T int `json:"t_s"`
	// WidthS is how many seconds the window covers: 1, or a power of two
	// in runs long enough that the timeline coarsened (see maxWindows).
	WidthS   int   `json:"width_s"`
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	P50      int64 `json:"p50_us"`
	P99      int64 `json:"p99_us"`
	Max      int64 `json:"max_us"`
	// Hist is the window's latency histogram (2 significant digits).
	Hist string `json:"hist"`
}

// width is how many seconds w covers (results written before WidthS
// existed have 1-second windows).
func (w *Window) width() int { return max(w.WidthS, 1) }

// merged holds decoded histograms while a Result is built or merged.
type merged struct {
	latency, service, lag, firstByte, dns, connect, tls *hdrhistogram.Histogram
}

func buildResult(cfg *Config, t *target, recs []*recorder, tl *timeline, r *runner, elapsed time.Duration, cpu cpuUsage) *Result {
	open := cfg.Rate > 0
	m := newMerged(open)
	res := &Result{
		Schema: SchemaVersion, Sources: 1,
		Target: t.url.String(), Method: cfg.Method, Mode: cfg.Mode(), Proto: string(cfg.Proto),
		Engine: string(cfg.Engine), Body: cfg.BodyMode.String(), KeepAlive: !cfg.DisableKeepAlive,
		Connections: r.conns, Rate: cfg.Rate * float64(r.conns) / float64(cfg.Connections),
		Start: r.start.UTC(), ElapsedS: elapsed.Seconds(),
		HistogramConfig: histogramConfig,
		Status:          map[string]int64{}, ErrorsByKind: map[string]int64{}, Protocols: map[string]int64{},
		Dropped:    r.dropped.Load(),
		Meta:       newMeta(cfg.Command),
		Streams:    cfg.Streams,
		Stages:     FormatStages(cfg.Stages),
		ConnStages: FormatStages(cfg.ConnStages),
	}
	for _, t := range cfg.Thresholds {
		res.Thresholds = append(res.Thresholds, ThresholdResult{Threshold: t.Expr})
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

// Saturation thresholds: past them the generator, not the server, may be
// what was measured.
const (
	saturatedCPU  = 0.80
	minRateRatio  = 0.99
	manyConnsPerK = 100
)

func (res *Result) warnings() []string {
	var w []string
	if sh := res.Shard; sh != nil {
		late := time.Duration(sh.LateUS) * time.Microsecond
		if sh.Index >= 0 && late > startSlack {
			w = append(w, fmt.Sprintf("shard %d began %s after its start time (more than %s): its clock disagrees with the others', or it was scheduled or started late", sh.Index, late.Round(time.Microsecond), startSlack))
		}
		if len(sh.Missing) > 0 {
			w = append(w, fmt.Sprintf("shards missing: %v: this result holds %d of the run's %d shards, so its counts and rate are short by their part", sh.Missing, len(sh.Merged), sh.Count))
		}
		if len(sh.Duplicates) > 0 {
			w = append(w, fmt.Sprintf("shards reported more than once: %v (a Job may run a pod twice for one index): the report with the most requests was kept", sh.Duplicates))
		}
		if skew := time.Duration(sh.SkewUS) * time.Microsecond; sh.Index < 0 && skew > startSlack {
			w = append(w, fmt.Sprintf("the shards began up to %s apart (start skew, more than %s): their clocks disagree or some started late", skew.Round(time.Microsecond), startSlack))
		}
	}
	if res.CPU.Utilization > saturatedCPU {
		w = append(w, fmt.Sprintf("generator saturated: it used %.0f%% of its %d core(s); the numbers may measure the generator, not the server (give it more cores: GOMAXPROCS, taskset)", 100*res.CPU.Utilization, res.CPU.Cores))
	}
	if res.Rate > 0 && res.AchievedRate < minRateRatio*res.Rate {
		w = append(w, fmt.Sprintf("achieved %.1f req/s, %.1f%% of the %.0f req/s asked for: the server or the generator could not keep up (%d sends dropped)", res.AchievedRate, 100*res.AchievedRate/res.Rate, res.Rate, res.Dropped))
	}
	// Each connection's first request opens it: only connections beyond
	// those say that keep-alive failed.
	if res.Conns.PerThousand > manyConnsPerK && res.KeepAlive && res.Conns.Opened > int64(res.Connections) {
		w = append(w, fmt.Sprintf("%.0f new connections per 1k requests with keep-alive on: responses are not being reused (server closing? --body close?)", res.Conns.PerThousand))
	}
	if res.Sent > 0 && res.Requests == 0 {
		w = append(w, "no request got a response: "+res.errorKinds())
	}
	return w
}

// Check reports whether the run failed as a measurement, and why: no
// request got a response (each one an error: connection refused, a name
// that does not resolve, timeouts...), or none succeeded (every response
// had a 4xx or 5xx status: a wrong path, a server in trouble). A typo in
// a script's URL then fails instead of looking like a run. Errors and
// error statuses beside successful responses do not fail a run: the
// summary counts them. `hotpath load` exits 1 when Check returns an error.
func (res *Result) Check() error {
	if res.Requests == 0 {
		if res.Errors == 0 {
			return errors.New("load: no request was sent")
		}
		msg := fmt.Sprintf("load: no request got a response: %s errors (%s)", count(res.Errors), res.errorKinds())
		if hint := res.errorHint(); hint != "" {
			msg += ": " + hint
		}
		return errors.New(msg)
	}
	for code, n := range res.Status {
		if c, err := strconv.Atoi(code); err == nil && c < 400 && n > 0 {
			return nil
		}
	}
	return fmt.Errorf("load: no request succeeded: every response had an error status (%s): check the URL's path, method and headers, or the server's log", counts(res.Status, true))
}

// errorKinds says how many errors of each kind the run had, most
// frequent first: "connection refused 43,732, timeout 3".
func (res *Result) errorKinds() string {
	type kc struct {
		kind string
		n    int64
	}
	var ks []kc
	for k, n := range res.ErrorsByKind {
		if n > 0 {
			ks = append(ks, kc{k, n})
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].n != ks[j].n {
			return ks[i].n > ks[j].n
		}
		return ks[i].kind < ks[j].kind
	})
	parts := make([]string, len(ks))
	for i, k := range ks {
		label := errKindLabels[k.kind]
		if label == "" {
			label = k.kind
		}
		parts[i] = label + " " + count(k.n)
	}
	return strings.Join(parts, ", ")
}

// errorHint suggests a fix for the most frequent kind of error.
func (res *Result) errorHint() string {
	var top string
	var most int64
	for k, n := range res.ErrorsByKind {
		if n > most || (n == most && k < top) {
			top, most = k, n
		}
	}
	addr := res.Target
	if u, err := url.Parse(res.Target); err == nil && u.Host != "" {
		addr = u.Host
	}
	switch top {
	case "refused":
		return "nothing accepts connections at " + addr + ": is the server running, is the port right?"
	case "dns":
		return "the host name in " + addr + " does not resolve: check its spelling"
	case "unreachable":
		return "no route to " + addr + ": check the address and the network"
	case "connect_timeout":
		return "no answer to the connection attempts to " + addr + ": a wrong address, or a firewall dropping them?"
	case "timeout":
		return "the server accepted the connections but did not answer within the timeout (--timeout)"
	case "tls":
		return "the TLS handshake failed: does the server speak TLS (https:// vs http://)? -k skips certificate verification"
	case "bad_response":
		return "the answers were not HTTP/1.1: is it an HTTP server, or does it want TLS (https://)?"
	case "closed_early", "reset":
		return "the server closed the connections before answering: see its log"
	}
	return ""
}

// connectErrors counts the requests that never got a connection.
func (res *Result) connectErrors() int64 {
	var n int64
	for _, k := range connectKinds {
		n += res.ErrorsByKind[k]
	}
	return n
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

// LatencyHistogram returns the run's merged latency histogram (µs).
func (res *Result) LatencyHistogram() (*hdrhistogram.Histogram, error) {
	return decodeHist(res.Histograms.Latency, newHist)
}

// ReadResult reads a Result written by WriteJSON, checking its schema.
func ReadResult(r io.Reader) (*Result, error) {
	var res Result
	dec := json.NewDecoder(r)
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("load: not a hotpath load result: %v", err)
	}
	if res.Schema != SchemaVersion {
		return nil, fmt.Errorf("load: result schema %q, this hotpath reads %q", res.Schema, SchemaVersion)
	}
	if _, err := res.decodeAll(); err != nil {
		return nil, err
	}
	return &res, nil
}

// WriteJSON writes res as indented JSON (the --json output).
func (res *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// Merge combines runs made at the same time from several machines into
// one result, exactly: counters add up, histograms merge bucket by bucket
// (so the percentiles are those of all requests together, not averages of
// percentiles), timeline windows merge by their second since each run's
// start, and rates add up. The runs must share mode, protocol, method,
// body handling and keep-alive, and must line up: the same target URL,
// start times and durations within max(1 s, 10%) of each other. Otherwise
// Merge returns a *MergeError saying what differs.
func Merge(runs ...*Result) (*Result, error) { return merge(false, runs) }

// MergeMisaligned is Merge for runs that measured the same kind of load
// but not together (other targets, start times or durations): it merges
// them anyway and adds a warning to the result saying what differs. The
// combined numbers then describe no single moment of load: use it only
// when that is known and wanted. Runs of other modes, protocols, methods,
// body handling or keep-alive are still refused.
func MergeMisaligned(runs ...*Result) (*Result, error) { return merge(true, runs) }

// MergeError is why Merge refused to merge input Input (1-based) with
// input With. Misaligned is true when only the target, start time or
// duration differ: MergeMisaligned would merge them.
type MergeError struct {
	Input int
	// With is the input Input was compared with (1-based): input 1, or,
	// for the shards of a sharded run, the first shard given.
	With       int
	Reason     string
	Misaligned bool
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("load: cannot merge input %d with input %d: %s", e.Input, max(e.With, 1), e.Reason)
}

// mergeSlack is how far apart the start times and the durations of runs
// to merge may be: the larger of 1 s and a tenth of the longer duration.
// Runs started by hand on several machines are seconds apart at most; a
// run made minutes later measured another moment.
func mergeSlack(a, b *Result) time.Duration {
	d := time.Duration(max(a.DurationS, b.DurationS) * float64(time.Second) / 10)
	return max(time.Second, d)
}

func merge(force bool, runs []*Result) (*Result, error) {
	if len(runs) == 0 {
		return nil, errors.New("load: nothing to merge")
	}
	input := make(map[*Result]int, len(runs)) // 1-based position as given
	for i, r := range runs {
		if _, dup := input[r]; !dup {
			input[r] = i + 1
		}
	}
	runs, shard, err := pickShards(runs)
	if err != nil {
		return nil, err
	}
	out := *runs[0]
	out.Shard = shard
	if out.Meta != nil {
		meta := *out.Meta
		var hosts []string
		for _, r := range runs {
			if r.Meta != nil && !slices.Contains(hosts, r.Meta.Host) {
				hosts = append(hosts, r.Meta.Host)
			}
		}
		meta.Host = strings.Join(hosts, ", ")
		out.Meta = &meta
	}
	out.Thresholds = nil
	seen := map[string]bool{}
	for _, r := range runs { // every run's thresholds, once each
		for _, t := range r.Thresholds {
			if !seen[t.Threshold] {
				seen[t.Threshold] = true
				out.Thresholds = append(out.Thresholds, ThresholdResult{Threshold: t.Threshold})
			}
		}
	}
	out.Status, out.ErrorsByKind, out.Protocols = map[string]int64{}, map[string]int64{}, map[string]int64{}
	out.Sources, out.Sent, out.Requests, out.Errors, out.Dropped, out.Censored = 0, 0, 0, 0, 0, 0
	out.Conns, out.BytesIn, out.BytesOut, out.CPU, out.ClientPaths = ConnStats{}, 0, 0, CPUStats{}, nil
	out.Rate, out.Connections, out.DurationS, out.ElapsedS = 0, 0, 0, 0
	out.Timeline = nil
	out.Targets = nil
	for _, t := range runs[0].Targets {
		out.Targets = append(out.Targets, TargetResult{Method: t.Method, URL: t.URL, Weight: t.Weight, Status: map[string]int64{}})
	}
	th := make(targetHists, len(out.Targets))
	sum := newMerged(out.Mode == "open-loop")
	width := 1 // the widest timeline window: narrower ones merge into it
	for _, r := range runs {
		for _, w := range r.Timeline {
			width = max(width, w.width())
		}
	}
	wins := map[int]*hdrhistogram.Histogram{}
	winCounts := map[int]*Window{}
	var cpuS, coreS float64
	var misaligned []string
	base := input[runs[0]]
	for _, r := range runs {
		if reason := compatible(runs[0], r); reason != "" {
			return nil, &MergeError{Input: input[r], With: base, Reason: reason}
		}
		if reason := aligned(runs[0], r); reason != "" {
			if !force {
				return nil, &MergeError{Input: input[r], With: base, Reason: reason, Misaligned: true}
			}
			misaligned = append(misaligned, fmt.Sprintf("input %d: %s", input[r], reason))
		}
		m, err := r.decodeAll()
		if err != nil {
			return nil, fmt.Errorf("load: input %d: %s", input[r], unprefixed(err))
		}
		sum.add(m)
		out.Sources += max(r.Sources, 1)
		out.Sent += r.Sent
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Dropped += r.Dropped
		out.Censored += r.Censored
		if err := out.mergeTargets(r, th); err != nil {
			return nil, err
		}
		out.Rate += r.Rate
		out.Connections += r.Connections
		out.DurationS = max(out.DurationS, r.DurationS)
		out.ElapsedS = max(out.ElapsedS, r.ElapsedS)
		if r.Start.Before(out.Start) {
			out.Start = r.Start
		}
		out.Conns.Opened += r.Conns.Opened
		out.Conns.Reused += r.Conns.Reused
		out.BytesIn += r.BytesIn
		out.BytesOut += r.BytesOut
		out.CPU.UserS += r.CPU.UserS
		out.CPU.SysS += r.CPU.SysS
		out.CPU.Cores += r.CPU.Cores
		cpuS += r.CPU.UserS + r.CPU.SysS
		coreS += r.ElapsedS * float64(r.CPU.Cores)
		addCounts(out.Status, r.Status)
		addCounts(out.ErrorsByKind, r.ErrorsByKind)
		addCounts(out.Protocols, r.Protocols)
		if r.ClientPaths != nil {
			if out.ClientPaths == nil {
				out.ClientPaths = &ClientPaths{}
			}
			out.ClientPaths.add(r.ClientPaths)
		}
		for _, w := range r.Timeline {
			h, err := decodeHist(w.Hist, newPhaseHist)
			if err != nil {
				return nil, fmt.Errorf("load: input %d, timeline second %d: %s", input[r], w.T, unprefixed(err))
			}
			t := w.T / width * width
			if wins[t] == nil {
				wins[t] = newPhaseHist()
				winCounts[t] = &Window{T: t, WidthS: width}
			}
			wins[t].Merge(h)
			winCounts[t].Requests += w.Requests
			winCounts[t].Errors += w.Errors
		}
	}
	if coreS > 0 {
		out.CPU.Utilization = cpuS / coreS
	}
	ts := make([]int, 0, len(wins))
	for t := range wins {
		ts = append(ts, t)
	}
	sort.Ints(ts)
	for _, t := range ts {
		w := *winCounts[t]
		w.Hist = encodeHist(wins[t])
		out.Timeline = append(out.Timeline, w)
	}
	th.finish(&out)
	out.Histograms = sum.encode()
	// derive divides all requests by the longest elapsed time: the
	// combined rate of runs that ran at the same time.
	out.derive(sum)
	if len(misaligned) > 0 {
		out.Warnings = append(out.Warnings, "merged runs that do not line up, so the numbers describe no single moment of load ("+strings.Join(misaligned, "; ")+")")
	}
	return &out, nil
}

// compatible says why runs a and b cannot be merged at all ("" when they
// can): they must have measured the same kind of load (mode, protocol,
// method, body handling and keep-alive).
func compatible(a, b *Result) string {
	for _, f := range []struct{ name, x, y string }{
		{"mode", a.Mode, b.Mode},
		{"stages", a.Stages, b.Stages},
		{"connection stages", a.ConnStages, b.ConnStages},
		{"streams per connection", fmt.Sprint(a.Streams), fmt.Sprint(b.Streams)},
		{"targets", a.targetList(), b.targetList()},
		{"protocol", a.Proto, b.Proto},
		{"method", a.Method, b.Method},
		{"body handling", a.Body, b.Body},
		{"keep-alive", fmt.Sprint(a.KeepAlive), fmt.Sprint(b.KeepAlive)},
		{"histogram geometry", fmt.Sprintf("%+v", a.histConfig()), fmt.Sprintf("%+v", b.histConfig())},
	} {
		if f.x != f.y {
			return fmt.Sprintf("%s %s vs %s", f.name, f.y, f.x)
		}
	}
	return ""
}

// aligned says why runs a and b were not one load spread over several
// machines ("" when they were): the target, the start time or the
// duration differ. Each run's DurationS is its sending window.
func aligned(a, b *Result) string {
	var why []string
	if a.Target != b.Target {
		why = append(why, fmt.Sprintf("target %s vs %s", b.Target, a.Target))
	}
	slack := mergeSlack(a, b)
	if d := b.Start.Sub(a.Start).Abs(); d > slack {
		why = append(why, fmt.Sprintf("started %s apart (%s vs %s; at most %s apart for runs made at the same time)",
			d.Round(100*time.Millisecond), b.Start.Format(time.TimeOnly), a.Start.Format(time.TimeOnly), slack.Round(100*time.Millisecond)))
	}
	if d := time.Duration((b.DurationS - a.DurationS) * float64(time.Second)).Abs(); d > slack {
		why = append(why, fmt.Sprintf("duration %s vs %s (at most %s apart)", secs(b.DurationS), secs(a.DurationS), slack.Round(100*time.Millisecond)))
	}
	return strings.Join(why, ", ")
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

// unprefixed returns err's text without the "load: " a wrapping message
// already starts with.
func unprefixed(err error) string { return strings.TrimPrefix(err.Error(), "load: ") }

func addCounts(dst, src map[string]int64) {
	for k, n := range src {
		dst[k] += n
	}
}

// histConfig is res's histogram geometry (results written before it was
// recorded used this package's).
func (res *Result) histConfig() HistogramConfig {
	if res.HistogramConfig == (HistogramConfig{}) {
		return histogramConfig
	}
	return res.HistogramConfig
}

// pickShards checks the shards of a sharded run before they are merged:
// all of one run (RunID) and one shard count; a shard reported twice (a
// Kubernetes Job may run a pod twice for one index) is kept once, the
// report that sent the most requests; missing shards are listed. Results
// of runs that were not sharded pass through, with no ShardInfo.
func pickShards(runs []*Result) ([]*Result, *ShardInfo, error) {
	sharded := 0
	for _, r := range runs {
		if r.Shard != nil && r.Shard.Index >= 0 {
			sharded++
		}
	}
	if sharded == 0 {
		return runs, nil, nil
	}
	first := runs[0].Shard
	for i, r := range runs {
		switch {
		case r.Shard == nil || r.Shard.Index < 0:
			return nil, nil, &MergeError{Input: i + 1, With: 1, Reason: "it is not a shard of a sharded run, and other inputs are"}
		case first == nil || first.Index < 0:
			return nil, nil, &MergeError{Input: i + 1, With: 1, Reason: "it is a shard of a sharded run, and input 1 is not"}
		case r.Shard.RunID != first.RunID:
			return nil, nil, &MergeError{Input: i + 1, With: 1, Reason: fmt.Sprintf("run id %q vs %q: shards of another run", r.Shard.RunID, first.RunID)}
		case r.Shard.Count != first.Count:
			return nil, nil, &MergeError{Input: i + 1, With: 1, Reason: fmt.Sprintf("%d shards vs %d", r.Shard.Count, first.Count)}
		case r.Shard.Index >= r.Shard.Count:
			return nil, nil, &MergeError{Input: i + 1, With: 1, Reason: fmt.Sprintf("shard %d of %d: no such shard", r.Shard.Index, r.Shard.Count)}
		}
	}
	byIndex := map[int]*Result{}
	info := &ShardInfo{Index: -1, Count: first.Count, RunID: first.RunID, StartAt: first.StartAt}
	for _, r := range runs {
		kept, dup := byIndex[r.Shard.Index]
		if dup {
			if !slices.Contains(info.Duplicates, r.Shard.Index) {
				info.Duplicates = append(info.Duplicates, r.Shard.Index)
			}
			if r.Sent <= kept.Sent {
				continue
			}
		}
		byIndex[r.Shard.Index] = r
	}
	var kept []*Result
	var earliest, latest time.Time
	for i := range info.Count {
		r, ok := byIndex[i]
		if !ok {
			info.Missing = append(info.Missing, i)
			continue
		}
		info.Merged = append(info.Merged, i)
		kept = append(kept, r)
		began := r.Start.Add(time.Duration(r.Shard.LateUS) * time.Microsecond)
		if earliest.IsZero() || began.Before(earliest) {
			earliest = began
		}
		if began.After(latest) {
			latest = began
		}
		info.LateUS = max(info.LateUS, r.Shard.LateUS)
	}
	sort.Ints(info.Duplicates)
	info.SkewUS = latest.Sub(earliest).Microseconds()
	return kept, info, nil
}
