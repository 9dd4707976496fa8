package server

// The http.Handler adapter's disconnect watcher on HTTP/1.1: once a
// handler waits on its request's context and has read its body, a
// watcher notices the client leaving and cancels the context, as
// net/http's background read does.

import (
	"context"
	"time"
)

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

// stopWatch ends the disconnect watcher, if one runs, and restores the
// read deadline it lifted (unless the connection was hijacked, which
// clears every deadline).
func (a *adapter) stopWatch() {
	a.watchMu.Lock()
	a.watchOff = true
	done := a.watchDone
	a.watchDone = nil
	a.watchMu.Unlock()
	if done != nil {
		a.c.nc.SetReadDeadline(aLongTimeAgo)
		<-done
		if !a.c.hijacked {
			a.c.nc.SetReadDeadline(a.c.readDL)
		}
	}
}
