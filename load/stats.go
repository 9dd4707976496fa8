package load

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// errKind classifies a failed request. The names are the keys of
// Result.ErrorsByKind; errKindLabels says each in words for the summary.
type errKind uint8

const (
	errConnect        errKind = iota // the dial failed for another reason
	errTimeout                       // no progress within --timeout after the connection was up
	errWrite                         // writing the request failed (not a reset)
	errRead                          // reading the response failed (not a reset or an EOF)
	errClosed                        // the server closed the connection before a full response
	errParse                         // the response was not valid HTTP/1.1
	errProtocol                      // the response used another protocol than asked for
	errCanceled                      // the run was stopped (Ctrl-C) with the request in flight
	errOther                         // none of the kinds here
	errRefused                       // the dial got ECONNREFUSED: nothing listens at that port
	errDNS                           // the host name did not resolve
	errUnreachable                   // no route to the host or network
	errConnectTimeout                // the dial got no answer within --timeout
	errReset                         // the connection was reset (ECONNRESET, EPIPE)
	errTLS                           // the TLS handshake failed (certificate, alert, not TLS)
	errCheck                         // Config.CheckResponse refused the response
	numErrKinds
)

var errKindNames = [numErrKinds]string{
	errConnect:        "connect",
	errTimeout:        "timeout",
	errWrite:          "write",
	errRead:           "read",
	errClosed:         "closed_early",
	errParse:          "bad_response",
	errProtocol:       "protocol_mismatch",
	errCanceled:       "canceled",
	errOther:          "other",
	errRefused:        "refused",
	errDNS:            "dns",
	errUnreachable:    "unreachable",
	errConnectTimeout: "connect_timeout",
	errReset:          "reset",
	errTLS:            "tls",
	errCheck:          "check",
}

// errKindLabels are the kinds as the text summary names them.
var errKindLabels = map[string]string{
	"connect":           "connect failed",
	"timeout":           "timeout",
	"write":             "write failed",
	"read":              "read failed",
	"closed_early":      "closed before a full response",
	"bad_response":      "invalid HTTP response",
	"protocol_mismatch": "protocol mismatch",
	"canceled":          "canceled",
	"other":             "other",
	"refused":           "connection refused",
	"dns":               "DNS lookup failed",
	"unreachable":       "host unreachable",
	"connect_timeout":   "connect timeout",
	"reset":             "connection reset",
	"tls":               "TLS handshake failed",
	"check":             "refused by the response check",
}

// connectKinds are the kinds of a request that never got a connection.
var connectKinds = []string{"connect", "refused", "dns", "unreachable", "connect_timeout"}

// classify maps an I/O error of phase (errWrite or errRead) to its kind.
func classify(err error, phase errKind) errKind {
	var ne net.Error
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return errTimeout
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		return errReset
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errClosed
	}
	return phase
}

// classifyDial maps a failed dial to its kind.
func classifyDial(err error) errKind {
	var dnsErr *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &dnsErr):
		return errDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return errRefused
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTDOWN) || errors.Is(err, syscall.ENETDOWN):
		return errUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return errConnectTimeout
	}
	return errConnect
}

// maxStatus bounds the status codes counted one by one: the response
// parser accepts 100 to 999.
const maxStatus = 1000

// recorder accumulates what a group of connections measured. It is the
// "histogram per worker" of the design: connection loops record into the
// recorder they were given, under its mutex (held for a handful of
// counter updates, and uncontended when the recorders outnumber the
// Go scheduler's Ps), and the runner merges the recorders at the end.
// Recording allocates nothing.
type recorder struct {
	mu sync.Mutex

	latency   *hdrhistogram.Histogram // open loop: from intended send; closed: from send
	service   *hdrhistogram.Histogram // open loop only: from actual send
	lag       *hdrhistogram.Histogram // open loop only: actual send - intended send
	firstByte *hdrhistogram.Histogram // send to the first byte of the response
	dns       *hdrhistogram.Histogram
	connect   *hdrhistogram.Histogram
	tls       *hdrhistogram.Histogram

	status   [maxStatus]int64
	errs     [numErrKinds]int64
	requests int64         // responses received (any status)
	sent     int64         // requests started
	censored int64         // open loop: sends still due at the end, their delay recorded
	targets  []targetStats // per target of a mix
	opened   int64         // connections opened
	reused   int64         // requests sent on a connection that served one before
	bytesIn  int64
	bytesOut int64
	protos   [3]int64 // responses by protocol: HTTP/1.0, HTTP/1.1, HTTP/2

	tl      *timeline
	win     *hdrhistogram.Histogram // the current timeline window
	winIdx  int
	winReqs int64
	winErrs int64

	done atomic.Int64 // requests + errors, for the progress line
}

// protocol indexes of recorder.protos.
const (
	protoHTTP10 = iota
	protoHTTP11
	protoHTTP2
)

var protoNames = [...]string{"HTTP/1.0", "HTTP/1.1", "HTTP/2.0"}

func newRecorder(tl *timeline, open bool) *recorder {
	r := &recorder{
		latency:   newHist(),
		firstByte: newPhaseHist(),
		dns:       newPhaseHist(),
		connect:   newPhaseHist(),
		tls:       newPhaseHist(),
		tl:        tl,
		win:       newPhaseHist(),
	}
	if open {
		r.service = newHist()
		r.lag = newPhaseHist()
	}
	return r
}

// sample is what one request measured, filled by an engine.
type sample struct {
	intended time.Time // open loop: the scheduled send time; else zero
	// slop is the generator's own lateness in open loop: how long after
	// the request was both due and its connection free it was sent (timer
	// granularity, a busy generator). It is not charged to the server's
	// latency; schedule lag reports it.
	slop      time.Duration
	start     time.Time // when the request was written
	firstByte time.Time // when the first response byte arrived; zero if none
	end       time.Time // when the response (or the error) was complete
	status    int       // 0 when err
	proto     int       // protoHTTP10...
	reused    bool
	target    uint16  // the mix's target (Config.Targets), 0 without one
	err       errKind // meaningful when failed
	failed    bool
	bytesIn   int64
	bytesOut  int64
}

// add records s. Latency is end - intended in open loop (coordinated
// omission corrected: the wait behind a slow response counts), less the
// generator's own slop, and end - start in closed loop.
func (r *recorder) add(s *sample) {
	r.mu.Lock()
	// The window first: the sample belongs to the second it ended in, not
	// to the one before.
	r.advance(s.end)
	r.sent++
	r.bytesIn += s.bytesIn
	r.bytesOut += s.bytesOut
	if s.reused {
		r.reused++
	}
	if !s.intended.IsZero() {
		record(r.lag, s.start.Sub(s.intended))
	}
	if r.targets != nil {
		r.targets[s.target].sent++
	}
	if s.failed {
		r.errs[s.err]++
		r.winErrs++
		if r.targets != nil {
			r.targets[s.target].errors++
		}
	} else {
		from := s.start
		if !s.intended.IsZero() {
			from = s.intended.Add(s.slop)
			record(r.service, s.end.Sub(s.start))
		}
		lat := s.end.Sub(from)
		record(r.latency, lat)
		if r.targets != nil {
			ts := &r.targets[s.target]
			ts.requests++
			ts.status[s.status]++
			if ts.latency != nil {
				record(ts.latency, lat)
			}
		}
		_ = r.win.RecordValue(micros(lat))
		r.winReqs++
		if !s.firstByte.IsZero() {
			record(r.firstByte, s.firstByte.Sub(s.start))
		}
		r.requests++
		r.status[s.status]++
		r.protos[s.proto]++
	}
	r.mu.Unlock()
	r.done.Add(1)
}

// targetStats are one mix target's figures in a recorder.
type targetStats struct {
	sent, requests, errors int64
	status                 map[int]int64
	latency                *hdrhistogram.Histogram // nil past maxTargetHists targets
}

// maxTargetHists bounds the targets that get a latency histogram of their
// own (each about 20 KB per recorder): past it, counts only.
const maxTargetHists = 64

// withTargets gives r the per-target figures of a mix of n targets.
func (r *recorder) withTargets(n int) {
	r.targets = make([]targetStats, n)
	for i := range r.targets {
		r.targets[i].status = map[int]int64{}
		if n <= maxTargetHists {
			r.targets[i].latency = newPhaseHist()
		}
	}
}

// addCensored records, for the n sends from k on that sch had due before
// end and that never started, their delay until end: a lower bound of
// the latency each would have had, a censored sample. Leaving them out
// would make a server that stalls at the end of a run look faster.
func (r *recorder) addCensored(sch *schedule, k, n int64, end time.Time) {
	r.mu.Lock()
	for j := range n {
		record(r.latency, end.Sub(sch.at(k+j)))
	}
	r.censored += n
	r.mu.Unlock()
}

// addConn records a connection opened, with its phase times (zero ones are
// skipped).
func (r *recorder) addConn(dns, connect, tls time.Duration) {
	r.mu.Lock()
	r.opened++
	if dns > 0 {
		record(r.dns, dns)
	}
	if connect > 0 {
		record(r.connect, connect)
	}
	if tls > 0 {
		record(r.tls, tls)
	}
	r.mu.Unlock()
}

// advance moves the timeline window to the second that holds t, handing
// the finished window to the timeline. r.mu is held.
func (r *recorder) advance(t time.Time) {
	idx := r.tl.index(t)
	if idx == r.winIdx {
		return
	}
	r.flushWindow()
	r.winIdx = idx
}

// flushWindow hands the current window to the timeline. r.mu is held.
func (r *recorder) flushWindow() {
	if r.winReqs == 0 && r.winErrs == 0 {
		return
	}
	r.tl.add(r.winIdx, r.win, r.winReqs, r.winErrs)
	r.win.Reset()
	r.winReqs, r.winErrs = 0, 0
}

// timeline holds one window per second of the run: requests, errors and a
// latency histogram, for the latency-over-time plot. Its memory is
// bounded: past maxWindows windows, adjacent windows merge in pairs and
// each then covers twice the time (2 s, 4 s, ...), so a 24-hour run keeps
// under maxWindows windows of 128 s.
type timeline struct {
	start time.Time
	mu    sync.Mutex
	width int // seconds per window: 1, 2, 4, ...
	wins  []*window
}

// maxWindows bounds a timeline: each window's histogram is about 27 KB,
// so at most about 32 MB. Runs up to 20 minutes keep 1-second windows.
const maxWindows = 1200

type window struct {
	hist     *hdrhistogram.Histogram
	requests int64
	errors   int64
}

func (tl *timeline) index(t time.Time) int {
	return max(int(t.Sub(tl.start)/time.Second), 0)
}

// add merges a recorder's window for second sec into the timeline.
func (tl *timeline) add(sec int, h *hdrhistogram.Histogram, reqs, errs int64) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.width == 0 {
		tl.width = 1
	}
	for sec/tl.width >= maxWindows {
		tl.coarsen()
	}
	idx := sec / tl.width
	for len(tl.wins) <= idx {
		tl.wins = append(tl.wins, nil)
	}
	w := tl.wins[idx]
	if w == nil {
		w = &window{hist: newPhaseHist()}
		tl.wins[idx] = w
	}
	w.hist.Merge(h)
	w.requests += reqs
	w.errors += errs
}

// coarsen doubles the width of the windows, merging them in pairs.
func (tl *timeline) coarsen() {
	half := make([]*window, (len(tl.wins)+1)/2)
	for i, w := range tl.wins {
		if w == nil {
			continue
		}
		if m := half[i/2]; m != nil {
			m.hist.Merge(w.hist)
			m.requests += w.requests
			m.errors += w.errors
			continue
		}
		half[i/2] = w
	}
	tl.wins = half
	tl.width *= 2
}

// dnsSample records one name lookup.
func (r *recorder) dnsSample(d time.Duration) {
	r.mu.Lock()
	record(r.dns, d)
	r.mu.Unlock()
}
