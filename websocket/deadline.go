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

// aLongTimeAgo is a deadline in the past: I/O fails at once.
var aLongTimeAgo = time.Unix(1, 0)

type deadlineArm struct {
	c *Conn // whose socket's read (c.rdl) or write (c.wdl) deadline this sets

	mu    sync.Mutex
	gen   uint64
	fired error       // the ctx's error, once it ended while armed
	stop  func() bool // the AfterFunc's stop, while armed
}

// set sets the socket's deadline of d's direction (no field says which:
// a method value per direction was two allocations per connection).
func (d *deadlineArm) set(t time.Time) {
	if d == &d.c.wdl {
		d.c.nc.SetWriteDeadline(t)
	} else {
		d.c.nc.SetReadDeadline(t)
	}
}

// idle is the deadline set before each I/O when positive: the idle
// timeout, for reads.
func (d *deadlineArm) idle() time.Duration {
	if d == &d.c.rdl {
		return d.c.opts.IdleTimeout
	}
	return 0
}

// arm starts covering I/O with ctx. It returns false if ctx has ended.
func (d *deadlineArm) arm(ctx context.Context) bool {
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
			d.fired = ctx.Err()
			d.set(aLongTimeAgo)
		}
		d.mu.Unlock()
	})
	return true
}

// disarm stops covering I/O with the ctx of the last arm. It returns the
// ctx's error if the ctx ended meanwhile (the I/O it interrupted, if
// any, failed), and clears the past deadline.
func (d *deadlineArm) disarm() error {
	if d.stop == nil {
		return nil
	}
	d.stop()
	d.stop = nil
	d.mu.Lock()
	d.gen++
	err := d.fired
	if err != nil {
		d.fired = nil
		d.set(time.Time{})
	}
	d.mu.Unlock()
	return err
}

// before is called before each socket read or write: it fails if the ctx
// has ended, and sets the idle deadline.
func (d *deadlineArm) before() error {
	idle := d.idle()
	if d.stop == nil && idle <= 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fired != nil {
		return d.fired
	}
	if idle > 0 {
		d.set(time.Now().Add(idle))
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
	return d.fired
}
