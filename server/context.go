package server

import (
	"context"
	"sync"
	"time"
)

// The request's context, and the disconnect watcher that cancels it when
// the client leaves while a handler runs.

// requestContext is the Request's context: canceled when the handler
// returns. Its Done channel is made only if someone asks for it, and it
// offers AfterFunc, so contexts derived from it (WithCancel, WithTimeout in
// middleware) hook into it without a goroutine each.
type requestContext struct {
	context.Context
	mu     sync.Mutex
	done   chan struct{}
	err    error
	afters map[*afterFunc]struct{}
	// watched is called once, when someone first waits for cancellation:
	// only then does the adapter watch the socket for the client leaving.
	watched func()
}

type afterFunc struct{ f func() }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *requestContext) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done == nil {
		if c.err != nil {
			c.mu.Unlock()
			return closedChan
		}
		c.done = make(chan struct{})
		if f := c.watched; f != nil {
			c.watched = nil
			c.mu.Unlock()
			f()
			return c.done
		}
	}
	c.mu.Unlock()
	return c.done
}

func (c *requestContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *requestContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	for af := range c.afters {
		go af.f()
	}
	c.afters = nil
}

// AfterFunc arranges for f to run in its own goroutine once c is canceled
// (at once if it already is), like context.AfterFunc.
func (c *requestContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	af := &afterFunc{f: f}
	if c.afters == nil {
		c.afters = make(map[*afterFunc]struct{})
	}
	c.afters[af] = struct{}{}
	watched := c.watched // a derived context waits on us: watch the client too
	c.watched = nil
	c.mu.Unlock()
	if watched != nil {
		watched()
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.afters[af]
		delete(c.afters, af)
		return pending
	}
}

// watchRequested runs when the handler first waits on its context (Done,
// or a derived context): the client leaving must now cancel it, as in
// net/http. The socket can be watched only once the body is consumed,
// or the watch would race the handler for body bytes.
func (a *adapter) watchRequested() {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	a.wantWatch = true
	a.startWatchLocked()
}

// bodyConsumed is called on the connection's goroutine when the handler
// has read the whole body.
func (a *adapter) bodyConsumed() {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	a.bodyDone = true
	a.startWatchLocked()
}

// startWatchLocked starts the disconnect watcher when it is wanted and
// allowed. Hold watchMu.
func (a *adapter) startWatchLocked() {
	if !a.wantWatch || !a.bodyDone || a.watchOff || a.watchDone != nil || a.c.hijacked {
		return
	}
	// The watch waits with no deadline: the one in force (idle, body)
	// would end it early. stopWatch restores it. Set here, under watchMu,
	// so it cannot land after stopWatch's own deadline.
	a.c.nc.SetReadDeadline(time.Time{})
	a.watchDone = make(chan struct{})
	if a.c.raw != nil {
		go a.c.watchDisconnect(a.ctx, a.watchDone)
	} else {
		go a.c.watchByReading(a.ctx, a.watchDone)
	}
}

// watchByReading is the disconnect watcher for connections without a raw
// socket to peek at (TLS): it reads one byte, as net/http's background
// read does. EOF or an error means the client left; a byte is the start
// of the next request and is kept for the connection (c.peeked). It
// returns, closing done, when the read deadline is moved to the past.
func (c *conn) watchByReading(ctx *requestContext, done chan struct{}) {
	defer close(done)
	var b [1]byte
	n, err := c.nc.Read(b[:])
	if n == 1 {
		c.peeked, c.hasPeeked = b[0], true
		return
	}
	if err != nil && !isTimeout(err) {
		ctx.cancel(context.Canceled)
	}
}
