package load

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

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
