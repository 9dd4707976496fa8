package server

// HTTP/1.1 engine: a handler takes the connection over (Hijack), from
// either API: the http.Handler's ResponseWriter (h1_responsewriter.go) or
// the native Ctx (Ctx.Hijack, dispatch.go).

import (
	"bytes"
	"net/http"
	"time"
)

// takeOver ends the server's part in c for a handler that takes the
// socket: the response so far goes out first if the handler set its
// status (a 101 for a WebSocket upgrade: commit), with earlier pipelined
// responses; deadlines are cleared, the buffer set goes back to the pool
// and c leaves the server's connections. It returns the bytes already
// read past the request, which are the new owner's.
//
// The buffer set goes back now, not when the handler returns: a hijacked
// connection (a WebSocket's Read loop) may keep its handler running for
// hours, and the server reads and writes it no more. What the handler
// still holds of the request is copied (http.Request) or must not be
// kept past Hijack (the native Ctx's slices); the body must not be read
// after Hijack (net/http's rule).
func (c *conn) takeOver(commit bool) ([]byte, error) {
	c.dropMark() // the new owner's reads wake as on any socket
	if r := &c.ctx.resp; commit && !r.committed() {
		r.commit()
	}
	c.noMoreContinue()
	if err := c.flush(); err != nil {
		return nil, err
	}
	c.hijacked = true
	c.nc.SetDeadline(time.Time{})
	// A chunk's data the body decoded and did not hand out yet comes
	// first: those bytes are the client's, sent before the rest (a
	// handler that read part of a chunked body hands over the rest of
	// the chunk, as net/http's bufio.Reader holds it).
	pending := append(bytes.Clone(c.ctx.body.pending), c.rbuf[c.r:c.w]...)
	c.ctx.body.pending = nil
	c.r = c.w
	if c.hasPeeked {
		pending = append(pending, c.peeked)
		c.hasPeeked = false
	}
	c.release()
	// The request's fields are not read past Hijack either (the
	// http.Request has its own copy; the native Ctx's slices pointed
	// into the buffers just given back): their array, 768 bytes, goes
	// with them, not when the handler returns. A hijacked connection's
	// working state is not reused.
	c.ctx.req.Headers = nil
	c.setState(StateHijacked)
	c.srv.trackConn(c, false)
	c.untracked = true
	return pending, nil
}

// hijackNative is Ctx.Hijack on HTTP/1.1. After it, as on an
// http.Handler's ResponseWriter, the Ctx's writes answer
// http.ErrHijacked and its body's reads http.ErrBodyReadAfterClose: the
// socket and the bytes past the head are the new owner's.
func (c *conn) hijackNative(x *Ctx) ([]byte, error) {
	if c.hijacked {
		return nil, http.ErrHijacked
	}
	pending, err := c.takeOver(x.resp.status != 200 || x.resp.nhdrs > 0)
	if err == nil {
		x.resp.err = http.ErrHijacked
		x.body.err = http.ErrBodyReadAfterClose
	}
	return pending, err
}

// letGo is the http.Handler adapter's part of Hijack, once takeOver
// succeeded: the handler's goroutine runs on (a WebSocket's Read loop, for
// hours), and holds nothing of the server's but the conn. The working
// state (1 KB: the native Ctx, the timing of reads and writes) leaves the
// conn and the grace sweep's lists, so that nothing reaches it; the
// adapter forgets the request. The frames under the handler
// (serveRequest, callHandler, serveHTTP) keep only the conn and the
// request's context across the call, so once the handler lets go of w
// and r (a WebSocket upgrader does), all of it is garbage: about 2 KB of
// heap per hijacked connection. The working state is not reused: it is
// the collector's, so that a frame that still held it could not reach
// another connection's. From here on, on this conn, only its own fields
// may be used (loop, finish and the adapter check hijacked first).
func (a *adapter) letGo() {
	c := a.c
	cw := c.connWork
	cw.graceLeave()
	c.connWork = nil
	if ctx := a.ctx; ctx != nil {
		ctx.mu.Lock()
		ctx.watched = nil // the watcher cannot start on a hijacked conn (startWatchLocked)
		ctx.mu.Unlock()
	}
	a.req, a.body = nil, nil
	a.strs = requestStrings{}
}
