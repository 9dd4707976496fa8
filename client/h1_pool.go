package client

// The Transport's HTTP/1.1 connections in their pools: idle ones per
// host, last in first out, each closed once idle for IdleConnTimeout
// (putIdle, idleExpired).
//
// Waiting for an HTTP/1.1 connection: the per-host queue that
// MaxConnsPerHost and late binding share. A request that finds no idle
// connection dials; while its dial runs it waits in its host's queue
// too, and a connection another request gives back first is handed to it
// (late binding, as net/http's transport does), the dialed one then going
// to the pool. Past MaxConnsPerHost a request only waits: for a
// connection given back, or for a place freed by a close.

import (
	"context"
	"time"
)

// h1Pools are the Transport's HTTP/1.1 pools, under its mu.
type h1Pools struct {
	idle map[connKey][]*conn // the top of each stack is the newest
	// conns counts the connections per host under MaxConnsPerHost
	// (dialing included); waiting holds the requests waiting for one,
	// oldest first.
	conns   map[connKey]int
	waiting map[connKey][]*connWaiter
}

// putIdle returns c to the pool, or closes it when the pool is full
// (errIdlePoolFull) or keep-alives are off (errKeepAlivesOff).
func (t *Transport) putIdle(c *conn) error {
	max := t.MaxIdleConnsPerHost
	if max == 0 {
		max = DefaultMaxIdleConnsPerHost
	}
	t.mu.Lock()
	if !t.DisableKeepAlives && len(t.waiting) > 0 && t.handOffLocked(c) {
		t.mu.Unlock()
		return nil
	}
	if t.DisableKeepAlives || len(t.idle[c.key]) >= max {
		t.mu.Unlock()
		c.close()
		if t.DisableKeepAlives {
			return errKeepAlivesOff
		}
		return errIdlePoolFull
	}
	if t.idle == nil {
		t.idle = make(map[connKey][]*conn)
	}
	c.reused, c.wrote, c.gotBytes, c.trace = false, false, false, nil
	c.idleSince = time.Now()
	t.idle[c.key] = append(t.idle[c.key], c)
	// One timer per connection, armed at most once per IdleConnTimeout:
	// a connection back in the pool before its timer fires keeps it, and
	// idleExpired re-arms it for what remains of the new idle spell.
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(t.idleTimeout(), c.idleExpired)
	} else if !c.idleArmed {
		c.idleTimer.Reset(t.idleTimeout())
	}
	c.idleArmed = true
	t.mu.Unlock()
	return nil
}

// Why putIdle did not pool a connection (httptrace's PutIdleConn).
var (
	errIdlePoolFull  = errorString("client: idle pool full (MaxIdleConnsPerHost)")
	errKeepAlivesOff = errorString("client: keep-alives disabled")
)

// idleExpired runs when c's idle timer fires: c closes if it is still in
// the pool and has been idle for IdleConnTimeout; a connection that was
// used since waits for the rest of its current idle spell.
func (c *conn) idleExpired() {
	t := c.t
	t.mu.Lock()
	c.idleArmed = false
	if !t.inPoolLocked(c) {
		t.mu.Unlock() // in use, or closed: putIdle arms the timer again
		return
	}
	if rest := t.idleTimeout() - time.Since(c.idleSince); rest > 0 {
		c.idleArmed = true
		c.idleTimer.Reset(rest)
		t.mu.Unlock()
		return
	}
	t.removeIdleLocked(c)
	t.mu.Unlock()
	c.close()
}

// inPoolLocked reports whether c is in the pool; t.mu is held.
func (t *Transport) inPoolLocked(c *conn) bool {
	for _, x := range t.idle[c.key] {
		if x == c {
			return true
		}
	}
	return false
}

// removeIdleLocked takes c out of the pool, t.mu held; it reports false
// when c was not in it (a request has taken it).
func (t *Transport) removeIdleLocked(c *conn) bool {
	stack := t.idle[c.key]
	for i, x := range stack {
		if x == c {
			copy(stack[i:], stack[i+1:])
			stack[len(stack)-1] = nil
			t.idle[c.key] = stack[:len(stack)-1]
			return true
		}
	}
	return false
}

// connWaiter is a request in its host's queue. ch (buffered) receives a
// connection handed over, or nil: a place under MaxConnsPerHost, already
// counted for it.
type connWaiter struct{ ch chan *conn }

// enqueueLocked puts a new waiter at the end of key's queue; t.mu is held.
func (t *Transport) enqueueLocked(key connKey) *connWaiter {
	w := &connWaiter{ch: make(chan *conn, 1)}
	if t.waiting == nil {
		t.waiting = make(map[connKey][]*connWaiter)
	}
	t.waiting[key] = append(t.waiting[key], w)
	return w
}

// dequeueLocked takes w out of key's queue and reports whether it was
// there (false: something was, or is about to be, sent to it).
func (t *Transport) dequeueLocked(key connKey, w *connWaiter) bool {
	q := t.waiting[key]
	for i, x := range q {
		if x == w {
			copy(q[i:], q[i+1:])
			q[len(q)-1] = nil
			if len(q) == 1 {
				delete(t.waiting, key)
			} else {
				t.waiting[key] = q[:len(q)-1]
			}
			return true
		}
	}
	return false
}

// popWaiterLocked takes the oldest waiter of key's queue, or nil.
func (t *Transport) popWaiterLocked(key connKey) *connWaiter {
	q := t.waiting[key]
	if len(q) == 0 {
		return nil
	}
	w := q[0]
	if len(q) == 1 {
		delete(t.waiting, key)
	} else {
		copy(q, q[1:])
		q[len(q)-1] = nil
		t.waiting[key] = q[:len(q)-1]
	}
	return w
}

// handOffLocked gives c to the oldest request waiting for a connection
// to its host, and reports whether there was one; t.mu is held.
func (t *Transport) handOffLocked(c *conn) bool {
	w := t.popWaiterLocked(c.key)
	if w == nil {
		return false
	}
	c.reused, c.wrote, c.gotBytes, c.trace = false, false, false, nil
	w.ch <- c
	return true
}

// releasePlace frees a place under MaxConnsPerHost: the oldest waiter
// gets it, or the count drops.
func (t *Transport) releasePlace(key connKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.popWaiterLocked(key); w != nil {
		w.ch <- nil // the place passes to w: the count stays
		return
	}
	if t.conns[key]--; t.conns[key] <= 0 {
		delete(t.conns, key)
	}
}

// passOn gives what a waiter received and no longer needs to the next
// one: a connection back to the pool, a place to whoever waits.
func (t *Transport) passOn(key connKey, c *conn) {
	if c == nil {
		t.releasePlace(key)
		return
	}
	_ = t.putIdle(c) // pooled, handed on, or closed (its place then goes on)
}

// await waits, past MaxConnsPerHost, for a connection handed over (it
// returns it) or a place to dial (it returns nil), until ctx or deadline
// ends.
func (t *Transport) await(ctx context.Context, key connKey, w *connWaiter, deadline time.Time) (*conn, error) {
	timeout, stop := deadlineTimer(deadline)
	defer stop()
	select {
	case c := <-w.ch:
		if c != nil {
			c.reused = true
		}
		return c, nil
	case <-ctx.Done():
		t.leaveQueue(key, w, true)
		return nil, ctx.Err()
	case <-timeout:
		t.leaveQueue(key, w, true)
		return nil, errRequestTimeout
	}
}

// leaveQueue takes w out of key's queue (if queued); what was sent to
// it meanwhile is passed on.
func (t *Transport) leaveQueue(key connKey, w *connWaiter, queued bool) {
	if !queued {
		return
	}
	t.mu.Lock()
	gone := t.dequeueLocked(key, w)
	t.mu.Unlock()
	if !gone {
		t.passOn(key, <-w.ch)
	}
}
