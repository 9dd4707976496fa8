package load

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// slot is one connection's worth of an engine: it sends a request and
// fills a sample, one at a time, from a single goroutine.
type slot interface {
	do(s *sample)
	stop()  // from another goroutine: abort I/O in progress, no more dials
	close() // from the slot's goroutine at the end: release the connection
}

type engine interface {
	newSlot(rec *recorder) slot
}

// runner is one Run in progress.
type runner struct {
	cfg    Config
	picked atomic.Uint64 // requests given a target of the mix so far
	start  time.Time
	end    time.Time // zero without a duration
	limit  int64     // Requests, or 0
	left   atomic.Int64
	stopCh chan struct{}
	halt   atomic.Bool

	dropped atomic.Int64
	conns   int           // this shard's connections
	late    time.Duration // how long after Config.StartAt the run began

	failOnce sync.Once
	failErr  error
	cancel   context.CancelFunc

	// answered is set by the first request that was not refused: from
	// then on, refusals (a server restarting) no longer stop the run.
	answered atomic.Bool
	host     string // the address dialed, for the refusal error
}

// refusedFor is how long a run goes on while every request's dial is
// refused (nothing listens at the address) before it stops early.
const refusedFor = time.Second

// refused notes a request whose dial was refused at end: if every request
// since the start was refused, and for refusedFor, the run stops with an
// error naming the address, instead of dialing for its whole duration.
func (r *runner) refused(end time.Time) {
	if !r.answered.Load() && end.Sub(r.start) >= refusedFor {
		r.fail(fmt.Errorf("load: nothing accepts connections at %s: %w (every request of the run's first %v was refused: stopped early)", r.host, syscall.ECONNREFUSED, refusedFor))
	}
}

// fail stops the run with err (the first one wins).
func (r *runner) fail(err error) {
	r.failOnce.Do(func() {
		r.failErr = err
		r.cancel()
	})
}

// Run generates the load cfg describes and returns what it measured. It
// returns when the duration is over or the request count reached (requests
// in flight then finish, within Timeout), when ctx is canceled (the result
// so far comes back, with ctx's error), or when a response used another
// protocol than cfg.Proto (the result comes back with the error: the run
// failed). A run whose every request is refused for its first second
// (nothing listens at the address) stops then, with its result and an
// error that wraps syscall.ECONNREFUSED; once any request got further,
// refusals (a server restarting) are counted and the run goes on.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, t, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	open := cfg.Rate > 0
	// Recorders: one per connection up to a bound, then shared. Each holds
	// about 0.5 MB of histograms; its mutex is uncontended while there are
	// more recorders than Ps.
	// A shard opens its part of the connections and sends its part of
	// the requests; the schedule stays the whole run's (see loop).
	shards := cfg.shards()
	conns := int(share(int64(cfg.Connections), cfg.Shard, shards))
	limit := cfg.Requests
	if limit > 0 {
		limit = share(limit, cfg.Shard, shards)
	}
	nrec := min(conns, max(16, 4*runtime.GOMAXPROCS(0)))
	tl := &timeline{}
	recs := make([]*recorder, nrec)
	for i := range recs {
		recs[i] = newRecorder(tl, open)
		if cfg.mix != nil {
			recs[i].withTargets(len(cfg.mix.targets))
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{cfg: cfg, limit: limit, conns: conns, stopCh: make(chan struct{}), cancel: cancel, host: t.addr}
	r.left.Store(limit)

	eng := cfg.engine
	switch {
	case eng != nil:
	case cfg.Engine == EngineFast && cfg.Proto != H1:
		he, err := newH2Engine(runCtx, &cfg, &t, recs[0], r.fail)
		if err != nil {
			return nil, err
		}
		eng = he
	case cfg.Engine == EngineFast:
		fe, err := newFastEngine(runCtx, &cfg, &t, recs[0])
		if err != nil {
			return nil, err
		}
		eng = fe
	default:
		eng = &netHTTPEngine{cfg: &cfg, t: &t, mismatch: r.fail}
	}

	// A slot is one request at a time; an HTTP/2 connection carries
	// Streams of them (the fast engine shares one connection, the
	// net/http engine one Transport, among a connection's slots).
	streams := cfg.streams()
	slots := make([]slot, conns*streams)
	for i := range slots {
		slots[i] = eng.newSlot(recs[(i/streams)%nrec])
	}

	if !cfg.StartAt.IsZero() {
		if err := sleepUntil(ctx, cfg.StartAt); err != nil {
			for _, sl := range slots {
				sl.close()
			}
			return nil, err
		}
	}
	cpu0 := cpuTime()
	r.start = time.Now()
	if !cfg.StartAt.IsZero() {
		// The schedule starts at StartAt on every shard; how late this one
		// woke is its start skew (sends due before it woke are not charged
		// to the server: see the slop in loop).
		r.late = r.start.Sub(cfg.StartAt)
		r.start = cfg.StartAt
	}
	tl.start = r.start
	for _, rec := range recs {
		rec.winIdx = 0
	}
	if cfg.Duration > 0 {
		r.end = r.start.Add(cfg.Duration)
	}

	var wg sync.WaitGroup
	for i, sl := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.loop(i, sl, recs[(i/streams)%nrec])
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	// Stop: on cancel (Ctrl-C, a protocol mismatch), abort what is in
	// flight; at the end of the duration, only stop sending.
	var progress *time.Ticker
	var tick <-chan time.Time
	if cfg.Progress != nil {
		progress = time.NewTicker(cfg.ProgressEvery)
		defer progress.Stop()
		tick = progress.C
	}
	done := func() int64 {
		var n int64
		for _, rec := range recs {
			n += rec.done.Load()
		}
		return n
	}
wait:
	for {
		select {
		case <-allDone:
			break wait
		case <-runCtx.Done():
			r.halt.Store(true)
			close(r.stopCh)
			for _, sl := range slots {
				sl.stop()
			}
			<-allDone
			break wait
		case <-tick:
			cfg.Progress(done(), time.Since(r.start))
		}
	}
	elapsed := time.Since(r.start)
	cpu1 := cpuTime()
	if cfg.Progress != nil {
		cfg.Progress(done(), elapsed)
	}

	for _, rec := range recs {
		rec.mu.Lock()
		rec.flushWindow()
		rec.mu.Unlock()
	}
	res := buildResult(&cfg, &t, recs, tl, r, elapsed, cpu1.sub(cpu0))
	if pc, ok := eng.(interface{ clientPaths() *ClientPaths }); ok {
		res.ClientPaths = pc.clientPaths()
	}
	if r.failErr != nil {
		return res, r.failErr
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if cfg.Proto != H1 && res.Requests == 0 && res.Errors > 0 && res.connectErrors() < res.Errors {
		// HTTP/2 asked for and not one response: a server that does not
		// speak it (h2c to an HTTP/1.1-only server fails every request
		// before any response can show its protocol).
		return res, noResponseError(cfg.Proto, res.errorKinds())
	}
	return res, nil
}

// loop is connection i's goroutine: closed loop, send as soon as the last
// response is in; open loop, send each request at its due time.
func (r *runner) loop(i int, sl slot, rec *recorder) {
	defer sl.close()
	open := r.cfg.Rate > 0
	var sch schedule
	var timer *time.Timer
	if open {
		// Connection c of shard s is connection c*shards+s of the whole
		// run, whose schedule spreads Rate over all its connections' slots
		// (Streams each).
		shards, streams := r.cfg.shards(), r.cfg.streams()
		g := (i/streams*shards+r.cfg.Shard)*streams + i%streams
		if r.cfg.ramp != nil {
			sch = newRampSchedule(r.start, r.cfg.ramp, g, r.cfg.Connections*streams)
		} else {
			sch = newSchedule(r.start, r.cfg.Rate, g, r.cfg.Connections*streams)
		}
		timer = time.NewTimer(time.Hour)
		timer.Stop()
	}
	hasEnd := !r.end.IsZero()
	now := later(r.start, time.Now()) // a shard may wake after its StartAt
	cr := r.cfg.connRamp
	if cr != nil && timer == nil {
		timer = time.NewTimer(time.Hour)
		timer.Stop()
	}
	var s sample
	for k := int64(0); ; k++ {
		if r.halt.Load() {
			return
		}
		if cr != nil {
			// Connection stages: this connection sends only while the
			// stages count it in; it waits (keeping its connection) until
			// they do, or ends with them.
			at, ok := cr.activeFrom(float64(i/r.cfg.streams()*r.cfg.shards()+r.cfg.Shard), now.Sub(r.start).Seconds())
			if !ok {
				return
			}
			if wake := r.start.Add(time.Duration(math.Ceil(at * float64(time.Second)))); wake.After(now) {
				timer.Reset(wake.Sub(now))
				select {
				case <-timer.C:
				case <-r.stopCh:
					timer.Stop()
					return
				}
				now = later(wake, time.Now())
			}
		}
		s = sample{}
		// Claim this request of a -n budget before any wait: a slot that
		// waited for a due time and then found the budget spent would
		// hold the run open for a whole interval.
		if r.limit > 0 && r.left.Add(-1) < 0 {
			return
		}
		if open {
			due := sch.at(k)
			if hasEnd {
				if !due.Before(r.end) {
					return
				}
				if !now.Before(r.end) {
					n := sch.dueBefore(k, r.end)
					r.dropped.Add(n)
					rec.addCensored(&sch, k, n, r.end)
					return
				}
			}
			if wait := due.Sub(now); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-r.stopCh:
					timer.Stop()
					return
				}
				// A timer fires after its time, never before: now ≥ due.
			}
			s.intended = due
		} else if hasEnd && !now.Before(r.end) {
			return
		}
		if m := r.cfg.mix; m != nil {
			s.target = m.seq[(r.picked.Add(1)-1)%uint64(len(m.seq))]
		}
		sl.do(&s)
		if open {
			// Ready is when the request was due and its connection free:
			// the wait before it is the server's doing, the wait after it
			// the generator's.
			s.slop = max(s.start.Sub(later(s.intended, now)), 0)
		}
		rec.add(&s)
		if s.failed && s.err == errRefused {
			r.refused(s.end)
		} else if !r.answered.Load() {
			// Stored once: a store per request would bounce the
			// runner's cache line between every worker's core.
			r.answered.Store(true)
		}
		now = s.end
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sleepUntil waits until t, or returns ctx's error.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
