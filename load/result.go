package load

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
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

	Target       string  `json:"target"`
	Method       string  `json:"method"`
	Mode         string  `json:"mode"` // "open-loop" or "closed-loop"
	Proto        string  `json:"proto"`
	Engine       string  `json:"engine"`
	ResponseBody string  `json:"body"` // the response body policy (Config.ResponseBody): drain, close or limit:N
	KeepAlive    bool    `json:"keepalive"`
	Connections  int     `json:"connections"`
	Streams      int     `json:"streams,omitempty"`     // HTTP/2: requests in flight per connection, when more than 1
	Rate         float64 `json:"rate,omitempty"`        // open loop: target requests/s in all (with stages, their mean)
	Stages       string  `json:"stages,omitempty"`      // open loop: the rate's stages (Config.Stages) as DURATION:RATE,..., e.g. 30s:1000,1m0s:1000,30s:0
	ConnStages   string  `json:"conn_stages,omitempty"` // closed loop: the connections' stages (Config.ConnStages), written as Stages; Connections is their peak

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
	// omission corrected), less the generator's own lateness (see
	// ScheduleLag), and from the actual send in closed loop.
	Latency Percentiles `json:"latency"`
	// Service is from the actual send, in open loop only.
	Service *Percentiles `json:"service,omitempty"`
	// ScheduleLag is actual send - intended send, in open loop only: the
	// wait behind a busy connection (counted in Latency too) plus the
	// generator's own lateness (not counted), so it can exceed Latency.
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
	// Hist is that histogram, encoded as Histograms' are.
	Hist string `json:"hist,omitempty"`
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

// Window is a slice of the run's timeline: one second, or WidthS seconds
// in a long run.
type Window struct {
	// T is the window's start, in whole seconds since Start.
	T int `json:"t_s"`
	// WidthS is how many seconds the window covers: 1, or a power of two
	// in a run long enough that the timeline coarsened (past 1,200
	// windows, the widths double).
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

// latencyHist decodes the run's merged latency histogram (µs).
func (res *Result) latencyHist() (*hdrhistogram.Histogram, error) {
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
