package server

// HTTP/2 engine: the stream (h2Stream): its state, its handler run, its
// timeouts and its end.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// An h2Stream is one request on a connection of the HTTP/2 engine: its state,
// windows and body buffer (all under the connection's mutex), and the
// handler's goroutine with its ResponseWriter. One allocation holds the
// stream with what its request needs that the handler may keep (the
// context, the URL, the body reader, the header values) and the
// response writer, whose response record is pooled (h2Responses).
type h2Stream struct {
	sc    *h2Conn
	id    uint32
	state h2.StreamState
	out   h2.Window // send window
	in    h2.Inflow // receive window
	req   *http.Request
	ctx   requestContext
	url   url.URL
	body  h2ReqBody
	vals  [8]string // backing for one-value header fields

	// The request body, fed by the reader.
	// (Its flags are kept together, as the stream's below: an
	// http.Handler request allocates the stream, 736 bytes, in the
	// 768-byte size class.)
	buf        []byte // received; buf[rpos:] not yet read
	rpos       int
	trailer    http.Header // the request's trailers, until the body's EOF hands them over
	bodyErr    error       // the stream was reset or the connection lost
	declared   int64       // content-length, or -1
	received   int64
	bodyRead   int64 // bytes the handler has read
	fieldCount int   // header fields as HTTP/1.1 counts them
	bodyEnd    bool  // END_STREAM seen
	bodyClosed bool  // the handler closed the body or returned
	bodyOver   bool  // the handler read past MaxRequestBodyBytes
	tunnel     bool  // RFC 8441's extended CONNECT: the body is a tunnel's bytes, not bounded by MaxRequestBodyBytes
	isHead     bool  // a HEAD request: the response carries no body

	expect100   bool // Expect: 100-continue, not yet answered
	headSent    bool // the final HEADERS is queued
	counted     bool // streams.Done has been called
	returned    bool // the handler returned (or none ran): no user code runs for the stream
	handlerDone bool // done ran: the stream's goroutine has ended
	remembered  bool // kept in sc.recent
	// connWaiting and roomWaiting: the stream is listed in
	// sc.connWaiters, waiting for the connection's send window, or in
	// sc.roomWaiters, waiting for room in the write buffer.
	connWaiting, roomWaiting bool
	// mapFault: a mapped file's pages could not be written (the file
	// was truncated while sent), and the writer reset the stream.
	mapFault bool
	// writeExpired: the write deadline (WriteTimeout, or the handler's
	// own) reset the stream; writes fail with os.ErrDeadlineExceeded.
	writeExpired bool
	rw           h2ResponseWriter

	readDL, writeDL       streamDeadline // http.ResponseController's deadlines
	readStall, writeStall stallWatch     // ReadStallTimeout, WriteStallTimeout, under sc.mu

	// wake is where the stream's own goroutines (its handler's body
	// reads and writes) sleep, on the connection's mutex, until
	// something they wait for changes on this stream: body bytes, send
	// window, its state. Each event wakes only the stream it concerns;
	// the connection's cond is for waits on the writer (room in the
	// write buffer, a batch written).
	wake sync.Cond

	// The native API (Server.Native): the handler's Ctx, and the bytes
	// its request's fields point into. Native streams are recycled, so
	// these are made once per stream the connection ever had at once.
	nx   *Ctx
	hbuf []byte
}

// stop cancels the request's context.
func (st *h2Stream) stop() { st.ctx.cancel(context.Canceled) }

// stalled runs when a stall timer fires: a write that made no progress
// resets the stream (CANCEL), a body read fails with
// os.ErrDeadlineExceeded, as the HTTP/2 hand-off's guard does.
func (st *h2Stream) stalled(s *stallWatch) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if !s.expired() {
		return
	}
	write := s == &st.writeStall
	if write {
		if st.state == h2.StateOpen || st.state == h2.StateHalfClosedRemote {
			sc.resetLocked(st.id, h2.ErrCodeCancel)
		}
		return
	}
	if st.bodyErr == nil && !st.bodyEnd {
		st.bodyErr = os.ErrDeadlineExceeded
	}
	st.wake.Broadcast()
}

func (st *h2Stream) releaseStreamLocked(n uint32) {
	if st.state.Active() && !st.bodyEnd {
		if inc := st.in.Release(n); inc > 0 && !st.sc.closed {
			st.sc.wbuf = h2.AppendWindowUpdate(st.sc.wbuf, st.id, inc)
			st.sc.kickWriter()
		}
	}
}

// peerReset: the client reset the stream.
func (st *h2Stream) peerReset() {
	if st.bodyErr == nil {
		st.bodyErr = errors.New("server: HTTP/2 stream reset by the client")
	}
	st.stop()
	st.wake.Broadcast()
}

// localReset: the server reset the stream.
func (st *h2Stream) localReset() {
	if st.bodyErr == nil {
		st.bodyErr = errH2StreamClosed
	}
	st.dropBodyLocked()
	st.stop()
	st.wake.Broadcast()
}

func (st *h2Stream) connGone() {
	if st.bodyErr == nil {
		st.bodyErr = errH2ConnClosed
	}
	st.stop()
	st.wake.Broadcast()
}

// run is the stream's goroutine: the handler, then the end of the
// response. The limits HTTP/1.1 applies before and around the handler
// apply here too: the header count (431), the body limit (413 for a
// declared length up front, else once the body passes it and nothing
// was written yet).
func (st *h2Stream) run() {
	if st.nx != nil {
		st.runNative()
		return
	}
	w := &st.rw
	sc := st.sc
	returned := false
	defer func() {
		if !returned { // a panic, panic(nil) under GODEBUG=panicnil=1 included
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				st.logPanic(p)
			}
			st.abort(h2.ErrCodeInternal)
		}
		if f := st.req.MultipartForm; f != nil {
			f.RemoveAll() // its temporary files, as net/http
		}
		st.done()
	}()
	// ReadTimeout and WriteTimeout bound each stream, as net/http's
	// HTTP/2 server does: the body's reads, and the response.
	st.armTimeouts()
	lim := &sc.srv.cfg.limits
	switch {
	case st.fieldCount > lim.MaxHeaders:
		st.handlerReturned()
		http.Error(w, tooManyFieldsText(lim.MaxHeaders), http.StatusRequestHeaderFieldsTooLarge)
	case lim.MaxBodyBytes >= 0 && st.req.ContentLength > lim.MaxBodyBytes:
		st.handlerReturned()
		http.Error(w, tooLargeText(lim.MaxBodyBytes), http.StatusRequestEntityTooLarge)
	case st.req.Method == http.MethodOptions && st.req.RequestURI == "*" && !sc.srv.DisableGeneralOptionsHandler:
		// net/http answers "OPTIONS *" itself, whatever the handler,
		// on HTTP/2 too.
		st.handlerReturned()
		w.Header().Set("Content-Length", "0")
	default:
		sc.srv.cfg.handler.ServeHTTP(w, st.req)
		if over := st.handlerReturned(); over && !w.wroteHeader {
			http.Error(w, tooLargeText(lim.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		}
	}
	returned = true
	w.finish()
}

// handlerReturned records that no user code runs for the stream any more
// (its handler returned, or the server answers without one), so the
// stream's place under MAX_CONCURRENT_STREAMS goes as soon as the stream
// closes, before this goroutine's cleanup: a client that opens its next
// stream on the last one's END_STREAM finds the place free. It reports
// whether the handler read past MaxRequestBodyBytes.
func (st *h2Stream) handlerReturned() (bodyOver bool) {
	sc := st.sc
	sc.mu.Lock()
	st.returned = true
	bodyOver = st.bodyOver
	sc.mu.Unlock()
	return bodyOver
}

// armTimeouts sets ReadTimeout and WriteTimeout on the stream.
func (st *h2Stream) armTimeouts() {
	if d := st.sc.srv.cfg.readTimeout; d > 0 {
		st.rw.SetReadDeadline(time.Now().Add(d))
	}
	if d := st.sc.srv.cfg.writeTimeout; d > 0 {
		st.rw.SetWriteDeadline(time.Now().Add(d))
	}
}

func (st *h2Stream) logPanic(p any) {
	buf := make([]byte, 16<<10)
	buf = buf[:runtime.Stack(buf, false)]
	st.sc.srv.logf("server: panic serving HTTP/2 stream %d from %s: %v\n%s", st.id, st.sc.remote, p, buf)
}

func tooManyFieldsText(n int) string {
	return "Request Header Fields Too Large: more than Server.MaxHeaderCount (" + strconv.Itoa(n) + ") header fields"
}

// done ends the stream's handler: its context, timers and buffers, and
// the stream itself once it is closed.
func (st *h2Stream) done() {
	w := &st.rw
	sc := st.sc
	st.stop()
	st.readDL.stop()
	st.writeDL.stop()
	hdr := w.release()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	st.handlerDone = true
	sc.running--
	if sc.orphans > 0 { // its connection is gone: one orphan fewer
		sc.orphans--
		sc.srv.orphans.done(sc.client)
	}
	st.bodyClosed = true
	st.dropBodyLocked()
	st.wake.Broadcast() // a body Read the handler left running returns
	st.readStall.end()
	st.writeStall.end()
	if hdr != nil && len(sc.headers) < h2MaxSpareHeaders {
		clear(hdr)
		sc.headers = append(sc.headers, hdr)
	}
	sc.releaseSlotLocked(st) // a stream reset while its handler ran frees its place now
	sc.forgetLocked(st)      // may recycle st: the last use of it
	if sc.running == 0 && sc.streams.Active() == 0 {
		sc.becameIdleLocked()
	}
	sc.maybeDoneLocked()
}

// h2MaxSpareHeaders bounds the response header maps a connection keeps
// for its next streams.
const h2MaxSpareHeaders = 16

func tooLargeText(limit int64) string {
	return "Request Entity Too Large: request body exceeds Server.MaxRequestBodyBytes (" +
		strconv.FormatInt(limit, 10) + ")"
}

// abort resets the stream after a handler panic.
func (st *h2Stream) abort(code h2.ErrCode) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if st.state != h2.StateClosed {
		sc.resetLocked(st.id, code)
	}
}
