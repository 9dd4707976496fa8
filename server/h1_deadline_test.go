package server

import (
	"context"
	"testing"
	"time"
)

// deadlineConn is a fakeConn that records the deadlines set on it.
type deadlineConn struct {
	fakeConn
	reads, writes []time.Time
}

func (d *deadlineConn) SetReadDeadline(t time.Time) error {
	d.reads = append(d.reads, t)
	return nil
}

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.writes = append(d.writes, t)
	return nil
}

// TestLazyDeadlineRenewal checks the shortcuts of the lazy renewals
// (renewReadDeadline, armWrite) against the rule they stand for: a
// renewal for period d moves the deadline only once now+d is more than
// d/8 past it, or when the deadline in force is not one a renewal for d
// set (an exact one, a handler's own, another period's,
// a working state that was parked). Unit test of the two methods on one
// connection; no server runs (the socket tests: TestIdleTimeout*).
func TestLazyDeadlineRenewal(t *testing.T) {
	s := &Server{Native: helloNative}
	s.resolve()
	nc := &deadlineConn{}
	c := newConn(s, nc, context.Background())
	const d = 80 * time.Second
	t0 := time.Now()

	// expect runs renewal, which records what it sets in *set: none
	// when want is zero, else one deadline, want.
	expect := func(set *[]time.Time, renewal func(), want time.Time, why string) {
		t.Helper()
		before := len(*set)
		renewal()
		got := (*set)[before:]
		switch {
		case want.IsZero() && len(got) != 0:
			t.Fatalf("%s: deadline moved to %v, want it kept", why, got[0].Sub(t0))
		case !want.IsZero() && (len(got) != 1 || !got[0].Equal(want)):
			t.Fatalf("%s: deadlines set %v, want one at %v", why, got, want.Sub(t0))
		}
	}
	renew := func(now time.Time, want time.Time, why string) {
		t.Helper()
		expect(&nc.reads, func() { c.renewReadDeadline(now, d) }, want, why)
	}
	renew(t0, t0.Add(d), "first renewal")
	renew(t0.Add(d/16), time.Time{}, "within d/8")
	renew(t0.Add(d/8), time.Time{}, "at exactly d/8")
	t1 := t0.Add(d/8 + time.Millisecond)
	renew(t1, t1.Add(d), "past d/8")
	renew(t1.Add(time.Second), time.Time{}, "within d/8 of the new one")

	// An exact deadline (ReadHeaderTimeout's, a body's) replaces the
	// renewal's: the next renewal looks at it, later or not.
	c.setReadDeadline(t1.Add(10 * d))
	renew(t1.Add(2*time.Second), t1.Add(2*time.Second+d), "after a later exact deadline")
	c.setReadDeadline(time.Time{})
	renew(t1.Add(3*time.Second), t1.Add(3*time.Second+d), "after no deadline")
	// Another period: the whole test, not the shortcut.
	before := len(nc.reads)
	c.renewReadDeadline(t1.Add(4*time.Second), d/100)
	if len(nc.reads) != before+1 {
		t.Fatalf("a renewal for a shorter period kept the longer deadline")
	}
	renew(t1.Add(5*time.Second), t1.Add(5*time.Second+d), "back to the first period")
	// A handler's own deadline, through the native Ctx.
	c.ctx.SetReadDeadline(t1.Add(20 * d))
	c.ownReadDeadline = false // the request ended (serveRequest)
	renew(t1.Add(6*time.Second), t1.Add(6*time.Second+d), "after a handler's own read deadline")
	// A working state that parked and came back knows nothing of the
	// deadline in force on the socket, which another may have set.
	cw := c.connWork
	c.readDL = t1.Add(30 * d) // as set while cw was elsewhere
	c.attach(cw)
	renew(t1.Add(7*time.Second), t1.Add(7*time.Second+d), "after a working state was attached")

	// Writes: the same rule for armWrite's period.
	const p = 40 * time.Second
	arm := func(now time.Time, want time.Time, why string) {
		t.Helper()
		expect(&nc.writes, func() { c.armWrite(now, p) }, want, why)
	}
	arm(t0, t0.Add(p), "first write")
	arm(t0.Add(p/16), time.Time{}, "within p/8")
	w1 := t0.Add(p/8 + time.Millisecond)
	arm(w1, w1.Add(p), "past p/8")
	// A handler's own write deadline ends with its response, and a
	// response's writes then arm the server's again.
	c.ctx.SetWriteDeadline(w1.Add(50 * p))
	c.ctx.resp.dropOwnWriteDeadline()
	arm(w1.Add(time.Second), w1.Add(time.Second+p), "after a handler's own write deadline")
}
