package client

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

// lateBinding reports whether a dial to key runs beside the queue: for
// hosts spoken to in HTTP/1.1 (a dial that may end in HTTP/2 is waited
// for, so that concurrent first requests share it).
func (t *Transport) lateBinding(key connKey) bool {
	if !t.mayUseH2(key) {
		return true
	}
	if !key.tls {
		return false
	}
	t.mu.Lock()
	h2, known := t.h2hosts[key]
	t.mu.Unlock()
	return known && !h2
}

type dialResult struct {
	c   *conn
	cc  *h2Conn
	err error
}

// dialOrTake dials key on a goroutine of its own, so that the request
// can give up (its context, its deadline) while a dialer that ignores
// its context still runs; with queue, it waits in key's queue meanwhile:
// the first of the dial's connection and one handed over is the
// request's. A connection the request did not take goes to the pool.
// counted says the dial holds a place under MaxConnsPerHost.
func (t *Transport) dialOrTake(ctx context.Context, key connKey, deadline time.Time, counted, queue bool) (*conn, *h2Conn, error) {
	w := &connWaiter{} // nil channel: nothing is handed over
	if queue {
		t.mu.Lock()
		w = t.enqueueLocked(key)
		t.mu.Unlock()
	}
	done := make(chan dialResult, 1)
	go func() {
		c, cc, err := t.dial(ctx, key, deadline)
		if c != nil {
			c.counted = counted
		} else if counted {
			t.releasePlace(key)
		}
		done <- dialResult{c, cc, err}
	}()
	// The dial's result, once the request has taken another connection.
	orphan := func() {
		r := <-done
		if r.c != nil {
			t.passOn(key, r.c)
		}
		if r.cc != nil {
			r.cc.mu.Lock()
			r.cc.releaseLocked() // the stream reserved for this request
			r.cc.mu.Unlock()
		}
	}
	timeout, stop := deadlineTimer(deadline)
	defer stop()
	for {
		select {
		case r := <-done:
			t.leaveQueue(key, w, queue)
			return r.c, r.cc, r.err
		case <-ctx.Done():
			// The request gives up; its dial, canceled too, may still
			// bring a connection (a dialer that ignores its context):
			// the pool's.
			t.leaveQueue(key, w, queue)
			go orphan()
			return nil, nil, ctx.Err()
		case <-timeout:
			t.leaveQueue(key, w, queue)
			go orphan()
			return nil, nil, errRequestTimeout
		case c := <-w.ch:
			if c == nil {
				// A place freed while this request already holds one.
				t.releasePlace(key)
				t.mu.Lock()
				w = t.enqueueLocked(key)
				t.mu.Unlock()
				continue
			}
			c.reused = true
			go orphan()
			return c, nil, nil
		}
	}
}

// deadlineTimer is a channel that fires at deadline (nil, never, for a
// zero deadline) and the function that stops its timer.
func deadlineTimer(deadline time.Time) (<-chan time.Time, func()) {
	if deadline.IsZero() {
		return nil, func() {}
	}
	timer := time.NewTimer(time.Until(deadline))
	return timer.C, func() { timer.Stop() }
}
