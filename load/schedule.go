package load

import (
	"math"
	"time"
)

// schedule is one connection's open-loop timetable, wrk2-style: the
// connection sends its k-th request at start + offset + k*interval,
// whatever happened to the previous ones. A late response delays the next
// send, but not the time the next send was due: the latency of every
// request is measured from its due time, so a stall shows in the
// percentiles instead of silently thinning the samples (coordinated
// omission).
//
// With rate R over c connections each connection has interval c/R, and
// connection i starts at offset i/R, so together they send evenly spaced
// requests at R per second.
type schedule struct {
	start  time.Time
	offset time.Duration
	perSec float64 // this connection's rate

	// With stages, arrivals follow ramp: this connection sends arrivals
	// first, first+step, first+2·step... of the whole run.
	ramp        *ramp
	first, step int64
}

// newRampSchedule returns connection i's schedule among conns sharing a
// staged rate: the run's arrivals in turn, as with a constant rate.
func newRampSchedule(start time.Time, rp *ramp, i, conns int) schedule {
	return schedule{start: start, ramp: rp, first: int64(i), step: int64(conns)}
}

// never is a due time no run reaches.
const never = 100 * 365 * 24 * time.Hour

// newSchedule returns connection i's schedule among conns sharing rate.
func newSchedule(start time.Time, rate float64, i, conns int) schedule {
	per := rate / float64(conns)
	return schedule{
		start:  start,
		offset: time.Duration(math.Round(float64(i) / rate * float64(time.Second))),
		perSec: per,
	}
}

// at returns when request k (from 0) is due. It computes k/rate in
// floating point from the start rather than adding an interval k times,
// so rounding never accumulates: over any run the schedule holds exactly
// rate requests per second.
func (s *schedule) at(k int64) time.Time {
	if s.ramp != nil {
		t, ok := s.ramp.timeOf(float64(s.first + k*s.step))
		if !ok {
			return s.start.Add(never)
		}
		return s.start.Add(time.Duration(math.Round(t * float64(time.Second))))
	}
	return s.start.Add(s.offset + time.Duration(math.Round(float64(k)/s.perSec*float64(time.Second))))
}

// dueBefore returns how many requests from k on are due before end: the
// starts a stopped run dropped.
func (s *schedule) dueBefore(k int64, end time.Time) int64 {
	d := end.Sub(s.start.Add(s.offset))
	if d <= 0 {
		return 0
	}
	// Requests 0..n-1 are due before end, n = ceil(d * perSec); with a
	// ramp, those of the run's N(end) arrivals that are this
	// connection's.
	n := int64(math.Ceil(d.Seconds() * s.perSec))
	if s.ramp != nil {
		n = int64(math.Ceil((s.ramp.count(d.Seconds()) - float64(s.first)) / float64(s.step)))
		n = max(n, 0)
	}
	for n > 0 && !s.at(n-1).Before(end) { // guard rounding at the edge
		n--
	}
	for s.at(n).Before(end) {
		n++
	}
	return max(n-k, 0)
}
