package server

import (
	"context"
	"sync"
)

// The request's context, canceled when the handler returns or the client
// leaves (HTTP/1.1's disconnect watcher: h1_watch.go; HTTP/2's stream
// ending: h2_stream.go).

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
