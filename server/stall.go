package server

// The stall timeouts of HTTP/2 (ReadStallTimeout, WriteStallTimeout), on
// hotpath's engine's streams and on the hand-off's. HTTP/1.1 keeps them
// in the connection's socket deadlines instead (h1_read.go, h1_write.go).

import "time"

// stallWatch times one wait at a time: it fires when a wait (for body
// bytes, for flow-control window, for room to write, for one I/O
// operation) lasts longer than the timeout, so an operation that keeps
// moving is never cut, and one that never waits never starts a timer.
// Its owner guards it with a lock of its own (a connection's mutex, say)
// held in begin, end, and its stalled method, which the timer runs and
// which asks expired first.
type stallWatch struct {
	t     *time.Timer
	until time.Time // when the wait in progress times out; zero: no wait
	off   bool      // never again: replaced by the handler's own deadline, or ended
}

// stallOwner is what holds a stallWatch: its stalled method runs, on the
// timer's goroutine, when a wait of w may have lasted its timeout.
type stallOwner interface{ stalled(w *stallWatch) }

// begin notes that a wait begins, timed for d (d <= 0 disables the
// timeout), unless one is timed already. The timer is made on the first
// begin (an interface holding a pointer costs nothing to pass; a method
// value would be allocated at every call).
func (s *stallWatch) begin(d time.Duration, owner stallOwner) {
	if d <= 0 || s.off || !s.until.IsZero() {
		return
	}
	s.until = time.Now().Add(d)
	if s.t == nil {
		s.t = time.AfterFunc(d, func() { owner.stalled(s) })
	} else {
		s.t.Reset(d)
	}
}

// end notes that the wait is over (progress, or the operation ended).
func (s *stallWatch) end() {
	if !s.until.IsZero() {
		s.until = time.Time{}
		s.t.Stop()
	}
}

// expired reports, for the function the timer runs, whether the wait in
// progress has lasted its whole timeout, and ends it if so. A firing meant
// for an earlier wait re-arms the timer for the current one.
func (s *stallWatch) expired() bool {
	if s.until.IsZero() {
		return false
	}
	if left := time.Until(s.until); left > 0 {
		s.t.Reset(left)
		return false
	}
	s.until = time.Time{}
	return true
}
