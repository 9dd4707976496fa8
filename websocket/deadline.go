package websocket

import (
	"context"
	"sync"
	"time"
)

// A ctx that ends unblocks a socket read or write by moving the socket's
// deadline into the past, from context.AfterFunc: nothing waits on the
// ctx between calls, and a ctx that cannot end (context.Background)
// costs nothing. Each direction has a deadlineArm; arm and disarm bracket
// the I/O a ctx covers. A generation number keeps a late AfterFunc (one
// that started before disarm but had not taken the lock) from touching a
// later call's deadline.
//
// The deadline moves only while a socket read or write is in progress
// (before to after): over HTTP/2 a deadline that passes breaks the
// stream for good (its body ends, or it is reset), so a ctx that ends
// with no I/O to cut (a Reader's message left unread, a Write whose
// frame went out as its ctx ended) must leave the stream alone, as it
// leaves a TCP socket working. One that cuts a stream's I/O fails it,
// even one that got through: the stream cannot be used again.

// aLongTimeAgo is a deadline in the past: I/O fails at once.
var aLongTimeAgo = time.Unix(1, 0)

type deadlineArm struct {
	mu    sync.Mutex
	gen   uint32
	fired ctxEnd      // how the ctx ended, once it ended while armed
	busy  bool        // a socket read or write is in progress (before to after)
	cut   bool        // the ctx's end moved the deadline into the past, cutting that I/O
	stop  func() bool // the AfterFunc's stop, while armed
}

// ctxEnd is a ctx's error as a byte (a Conn keeps two arms: every byte
// of an idle connection counts): ctx.Err() is one of two errors.
type ctxEnd uint8

const (
	notEnded ctxEnd = iota
	ctxCanceled
	ctxDeadline
)

func endOf(err error) ctxEnd {
	if err == context.DeadlineExceeded {
		return ctxDeadline
	}
	return ctxCanceled
}

func (e ctxEnd) err() error {
	switch e {
	case ctxDeadline:
		return context.DeadlineExceeded
	case ctxCanceled:
		return context.Canceled
	}
	return nil
}

// set sets the socket's deadline of d's direction (no field says which:
// d is c.rdl or c.wdl).
func (d *deadlineArm) set(c *Conn, t time.Time) {
	if d == &c.wdl {
		c.nc.SetWriteDeadline(t)
	} else {
		c.nc.SetReadDeadline(t)
	}
}

// idle is the deadline set before each I/O when positive: the idle
// timeout, for reads.
func (d *deadlineArm) idle(c *Conn) time.Duration {
	if d == &c.rdl {
		return c.opts.IdleTimeout
	}
	return 0
}

// arm starts covering c's I/O with ctx. It returns false if ctx has ended.
func (d *deadlineArm) arm(c *Conn, ctx context.Context) bool {
	if ctx.Done() == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	d.mu.Lock()
	d.gen++
	g := d.gen
	d.mu.Unlock()
	d.stop = context.AfterFunc(ctx, func() {
		d.mu.Lock()
		if d.gen == g {
			d.fired = endOf(ctx.Err())
			if d.busy {
				d.cut = true
				d.set(c, aLongTimeAgo)
			}
		}
		d.mu.Unlock()
	})
	return true
}

// disarm stops covering I/O with the ctx of the last arm. It returns the
// ctx's error if the ctx ended meanwhile (the I/O it interrupted, if
// any, failed), and clears the past deadline.
func (d *deadlineArm) disarm(c *Conn) error {
	if d.stop == nil {
		return nil
	}
	d.stop()
	d.stop = nil
	d.mu.Lock()
	d.gen++
	d.busy = false
	err := d.fired.err()
	if err != nil {
		d.fired = notEnded
		if d.cut {
			d.cut = false
			d.set(c, time.Time{})
		}
	}
	d.mu.Unlock()
	return err
}

// before is called before each socket read or write: it fails if the ctx
// has ended, and sets the idle deadline. Once it let the I/O through,
// after must follow the I/O.
func (d *deadlineArm) before(c *Conn) error {
	idle := d.idle(c)
	if d.stop == nil && idle <= 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.fired.err(); err != nil {
		return err
	}
	if idle > 0 {
		d.set(c, time.Now().Add(idle))
	}
	d.busy = true
	return nil
}

// after is called after each socket read or write that before let
// through: the ctx no longer cuts it. Over HTTP/2 it returns the ctx's
// error if the ctx's end cut the I/O, even one that got through (the
// ctx ended as it returned): the stream is broken, and the I/O must
// count as failed. And over HTTP/2 a deadline that passes breaks the
// stream's body for good, even with no read waiting (hotpath's engine
// and net/http's alike), so the idle deadline before set is cleared once
// the read returns: it covers a read's wait, as on TCP, where it passing
// between reads does nothing.
func (d *deadlineArm) after(c *Conn) error {
	_, stream := c.nc.(*streamConn)
	idle := stream && d.idle(c) > 0 // the idle deadline to clear
	if d.stop == nil && !idle {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.busy = false
	switch {
	case d.cut && stream:
		return d.fired.err()
	case idle:
		d.set(c, time.Time{})
	}
	return nil
}

// ended returns the ctx's error if it ended while armed.
func (d *deadlineArm) ended() error {
	if d.stop == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired.err()
}
