package server

import (
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// HTTP/1.1 engine: the native API (Ctx) on an HTTP/1.1 connection: a
// request served (the handler called, its panic answered, its response
// finished), and the Ctx methods' HTTP/1.1 sides (dispatch.go picks them).
// It mirrors h2_native.go.

// finishResponse completes the response after the handler returned. A
// body that broke its framing or a limit, with nothing sent yet, is
// answered with that error's status instead; but an http.Handler's own
// answer to the body limit (a 413 of its own for *http.MaxBytesError,
// say) stands, as on HTTP/2 and net/http. A broken framing (a bad chunk)
// is always answered 400: what follows it cannot be told from a request.
func (x *Ctx) finishResponse() {
	if x.body.err != nil && !x.resp.committed() {
		var we *wire.Error
		if errors.As(x.body.err, &we) && !x.answeredLimit(we) {
			x.resp.replaceWithError(we.Status, x.c.reasonFor(we))
			return
		}
	}
	x.resp.h1Finish() // this engine's side directly: the branch in finish costs a call per request
}

// answeredLimit reports whether an http.Handler answered the body limit
// itself: we is the body's 413 and the handler wrote its header.
func (x *Ctx) answeredLimit(we *wire.Error) bool {
	a := x.c.handler
	return we.Status == http.StatusRequestEntityTooLarge && a != nil && a.rw.wroteHeader
}

// serveRequest runs the handler for the parsed request and queues its
// response.
func (c *conn) serveRequest() {
	x := &c.ctx
	if c.requests != math.MaxUint32 {
		c.requests++
	}
	x.resp.reset()
	x.fullDuplex = false
	x.body.reset(&x.req)
	if c.srv.orphans.total.Load() == 0 || c.srv.orphans.admit(c.clientKey()) {
		x.callHandler()
	} else {
		x.refuseOrphaned()
	}
	if c.hijacked {
		return // takeOver dropped the mark; the working state may be gone (letGo)
	}
	c.dropMark() // the body's reads by the handler are over
	x = &c.ctx   // not kept across the handler: see letGo
	x.finishResponse()
	if !x.body.finish() {
		c.closing = true
	}
	if c.ownReadDeadline { // a handler's read deadline ends with its request
		c.ownReadDeadline = false
		c.setReadDeadline(time.Time{})
	}
}

// refuseOrphaned answers a request from a client over its bound of
// handlers running past their connections (orphans.go) without running
// a handler: 503 with Retry-After, and the connection closed.
func (x *Ctx) refuseOrphaned() {
	r := &x.resp
	r.clearHeaders()
	r.setHeader("Retry-After", orphanRetryAfter, nil, true)
	r.errorBody(http.StatusServiceUnavailable, "this client has more handlers still running after its connections closed than Server.MaxOrphanedHandlersPerClient allows; retry later")
}

// callHandler runs the handler. A native handler's panic is logged and
// answered with a 500 when nothing was sent yet. An http.Handler's panic
// aborts the response, as net/http does: the connection closes with no
// response, or mid-body when the head already went out, and
// http.ErrAbortHandler is not logged. Either way a truncated body never
// reads as complete. A handler that does not return (panic(nil) under
// GODEBUG=panicnil=1, where recover sees nil; runtime.Goexit) is
// aborted the same way, unlogged, as net/http does.
func (x *Ctx) callHandler() {
	// The deferred call keeps c, not x: x is in the working state, which
	// an http.Handler that hijacks lets go of (letGo).
	c := x.c
	returned := false
	defer func() {
		if !returned {
			err := recover()
			if err != nil && err != http.ErrAbortHandler {
				// Logged after a Hijack too, as net/http does: a
				// WebSocket handler's panic must not vanish.
				c.srv.logf("server: panic serving %v: %v\n%s", c.nc.RemoteAddr(), err, debug.Stack())
			}
			if c.hijacked {
				return
			}
			c.closing = true
			if c.handler == nil && c.ctx.resp.replaceWithError(500, "handler panicked") {
				return
			}
			c.ctx.resp.abort()
		}
	}()
	if h := c.handler; h != nil {
		h.serveHTTP()
	} else if string(x.req.Target) == "*" && string(x.req.Method) == "OPTIONS" && !c.srv.DisableGeneralOptionsHandler {
		x.SetContentLength(0) // the server's own answer, as on the handler API
	} else {
		c.srv.Native(x)
	}
	returned = true
}

// h1Body is Ctx.Body on HTTP/1.1: the connection's body reader.
func (x *Ctx) h1Body() io.Reader { return &x.body }

// h1RemoteAddr is Ctx.RemoteAddr on HTTP/1.1.
func (x *Ctx) h1RemoteAddr() net.Addr { return x.c.nc.RemoteAddr() }

// h1LocalAddr is Ctx.LocalAddr on HTTP/1.1.
func (x *Ctx) h1LocalAddr() net.Addr { return x.c.nc.LocalAddr() }

// h1ReadFrom is Ctx.ReadFrom on HTTP/1.1: a file or socket goes to the
// client with sendfile or splice when it can (h1_bigbody.go), else
// through a pooled buffer.
func (x *Ctx) h1ReadFrom(src io.Reader) (int64, error) {
	if n, ok, err := x.resp.readFromDirect(src); ok {
		return n, err
	}
	return x.readFromCopy(src)
}

// h1SetWriteDeadline is Ctx.SetWriteDeadline on HTTP/1.1: the deadline
// replaces the server's write timeouts until the response ends
// (response.reset drops it).
func (x *Ctx) h1SetReadDeadline(t time.Time) error {
	c := x.c
	// The body may be read on another goroutine, arming its own
	// deadlines (armBodyRead): dlMu orders the two.
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.ownReadDeadline = true
	// A receive mark would keep bytes below it from waking a read that
	// has this deadline: none from here on (setMark checks under dlMu).
	c.dropMark()
	c.readDL, c.readRenewFor = t, 0
	return c.nc.SetReadDeadline(t)
}

func (x *Ctx) h1SetWriteDeadline(t time.Time) error {
	c := x.c
	if c.canContinue.Load() {
		// A body read on another goroutine may be writing 100
		// Continue, arming the write deadline as it does (sendContinue).
		c.contMu.Lock()
		defer c.contMu.Unlock()
	}
	x.resp.ownWriteDeadline = true
	c.writeDL, c.writeRenewFor = t, 0
	return c.nc.SetWriteDeadline(t)
}
