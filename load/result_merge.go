package load

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

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
	seen := map[Threshold]bool{}
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
		{"body handling", a.ResponseBody, b.ResponseBody},
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
