package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// An h2Stream is one request on a native HTTP/2 connection: its state,
// windows and body buffer (all under the connection's mutex), and the
// handler's goroutine with its ResponseWriter. One allocation holds the
// stream with what its request needs that the handler may keep (the
// context, the URL, the body reader, the header values) and the
// response writer with its first bytes of body.
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
	// http.Handler request allocates the stream, whose size class, with
	// the 8-byte header of a large object with pointers, is 1,792 bytes
	// and no more.)
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
	isHead     bool  // a HEAD request: the response carries no body

	expect100   bool // Expect: 100-continue, not yet answered
	headSent    bool // the final HEADERS is queued
	counted     bool // streams.Done has been called
	handlerDone bool
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
	readStall, writeStall h2Stall        // ReadStallTimeout, WriteStallTimeout

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

func (sc *h2Conn) newStream(id uint32, state h2.StreamState) *h2Stream {
	st := &h2Stream{
		sc:       sc,
		id:       id,
		state:    state,
		out:      h2.StreamWindow(sc.peerWindow),
		declared: sc.val.ContentLength,
	}
	st.in.Init(sc.srv.cfg.h2StreamWindow, true)
	st.wake.L = &sc.mu
	st.ctx.Context = sc.base
	st.rw.st = st
	st.rw.buf = st.rw.small[:0]
	st.rw.head = st.rw.headArr[:0]
	if n := len(sc.headers); n > 0 {
		st.rw.header = sc.headers[n-1]
		sc.headers = sc.headers[:n-1]
	} else {
		st.rw.header = make(http.Header)
	}
	sc.table[id] = st
	return st
}

// stop cancels the request's context.
func (st *h2Stream) stop() { st.ctx.cancel(context.Canceled) }

// h2Stall is ReadStallTimeout or WriteStallTimeout on one stream: it
// fires when one wait (for body bytes, for flow-control window or room
// to write) lasts longer than the timeout, so a stream that keeps moving
// is never cut and a small exchange, which never waits, never starts a
// timer. Under the connection's mutex.
type h2Stall struct {
	t     *time.Timer
	until time.Time // when the wait in progress times out; zero: no wait
	off   bool      // replaced by the handler's own deadline
}

// begin notes that the stream waits; d <= 0 disables the stall.
func (s *h2Stall) begin(st *h2Stream, d time.Duration, write bool) {
	if d <= 0 || s.off || !s.until.IsZero() {
		return
	}
	s.until = time.Now().Add(d)
	if s.t == nil {
		s.t = time.AfterFunc(d, func() { st.stalled(write) })
	} else {
		s.t.Reset(d)
	}
}

// end notes that the wait is over (progress, or the operation ended).
func (s *h2Stall) end() {
	if !s.until.IsZero() {
		s.until = time.Time{}
		s.t.Stop()
	}
}

// stalled runs when a stall timer fires: a write that made no progress
// resets the stream (CANCEL), a body read fails with
// os.ErrDeadlineExceeded, as the HTTP/2 hand-off's guard does.
func (st *h2Stream) stalled(write bool) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	s := &st.readStall
	if write {
		s = &st.writeStall
	}
	if s.until.IsZero() {
		return
	}
	if left := time.Until(s.until); left > 0 {
		s.t.Reset(left) // a wait that began after a stale firing
		return
	}
	s.until = time.Time{}
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

// receiveData takes a DATA frame's payload into the body buffer.
func (st *h2Stream) receiveData(f *h2.Frame) *h2.Error {
	sc := st.sc
	if err := st.in.Receive(f.Length); err != nil {
		sc.releaseConnLocked(f.Length)
		return err.(*h2.Error)
	}
	data := f.Data()
	pad := f.Length - uint32(len(data))
	st.received += int64(len(data))
	ended := f.Flags.Has(h2.FlagEndStream)
	if err := h2.CheckContentLength(st.declared, st.received, ended); err != nil {
		sc.releaseConnLocked(f.Length)
		st.bodyErr = err
		return err.(*h2.Error)
	}
	if st.bodyClosed || st.bodyErr != nil {
		sc.releaseConnLocked(f.Length)
		pad = 0
	} else {
		if st.rpos > 0 && len(st.buf)+len(data) > cap(st.buf) {
			// Move what is unread to the front rather than grow.
			st.buf = st.buf[:copy(st.buf, st.buf[st.rpos:])]
			st.rpos = 0
		}
		st.buf = append(st.buf, data...)
		sc.releaseConnLocked(pad)
	}
	if pad > 0 {
		st.releaseStreamLocked(pad)
	}
	if ended {
		st.bodyEnd = true
	}
	st.wake.Broadcast()
	return nil
}

func (st *h2Stream) releaseStreamLocked(n uint32) {
	if st.state.Active() && !st.bodyEnd {
		if inc := st.in.Release(n); inc > 0 && !st.sc.closed {
			st.sc.wbuf = h2.AppendWindowUpdate(st.sc.wbuf, st.id, inc)
			st.sc.kickWriter()
		}
	}
}

// trailers records the request's trailers, for the handler's goroutine
// to put in Request.Trailer when its body read meets the end (as
// net/http does); the body ends with them.
func (st *h2Stream) trailers(hdr http.Header) {
	st.trailer = hdr
	st.endBody()
}

// handTrailers moves received trailers into Request.Trailer. On the
// handler's goroutine (a body Read), under the connection's mutex.
func (st *h2Stream) handTrailers() {
	if st.trailer == nil || st.req == nil {
		return
	}
	if st.req.Trailer == nil {
		st.req.Trailer = make(http.Header, len(st.trailer))
	}
	for k, vv := range st.trailer {
		st.req.Trailer[k] = vv
	}
	st.trailer = nil
}

// unread is how many body bytes wait for the handler.
func (st *h2Stream) unread() int { return len(st.buf) - st.rpos }

// endBody: the request's body is complete (trailers ended it).
func (st *h2Stream) endBody() {
	if err := h2.CheckContentLength(st.declared, st.received, true); err != nil {
		st.bodyErr = err
	}
	st.bodyEnd = true
	st.wake.Broadcast()
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

// dropBodyLocked gives back the connection credit of unread body bytes.
func (st *h2Stream) dropBodyLocked() {
	if n := st.unread(); n > 0 {
		st.buf, st.rpos = st.buf[:0], 0
		st.sc.releaseConnLocked(uint32(n))
	}
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
		http.Error(w, tooManyFieldsText(lim.MaxHeaders), http.StatusRequestHeaderFieldsTooLarge)
	case lim.MaxBodyBytes >= 0 && st.req.ContentLength > lim.MaxBodyBytes:
		http.Error(w, tooLargeText(lim.MaxBodyBytes), http.StatusRequestEntityTooLarge)
	case st.req.Method == http.MethodOptions && st.req.RequestURI == "*" && !sc.srv.DisableGeneralOptionsHandler:
		// net/http answers "OPTIONS *" itself, whatever the handler,
		// on HTTP/2 too.
		w.Header().Set("Content-Length", "0")
	default:
		sc.srv.cfg.handler.ServeHTTP(w, st.req)
		sc.mu.Lock()
		over := st.bodyOver
		sc.mu.Unlock()
		if over && !w.wroteHeader {
			http.Error(w, tooLargeText(lim.MaxBodyBytes), http.StatusRequestEntityTooLarge)
		}
	}
	returned = true
	w.finish()
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
	w.release()
	sc.mu.Lock()
	defer sc.mu.Unlock()
	st.handlerDone = true
	sc.running--
	st.bodyClosed = true
	st.dropBodyLocked()
	st.wake.Broadcast() // a body Read the handler left running returns
	st.readStall.end()
	st.writeStall.end()
	if h := w.header; h != nil && len(sc.headers) < h2MaxSpareHeaders {
		clear(h)
		sc.headers = append(sc.headers, h)
	}
	w.header = nil
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

// h2ReqBody is the request body: what DATA frames brought, read under the
// stream's receive window.
type h2ReqBody struct {
	st *h2Stream
}

func (b *h2ReqBody) Read(p []byte) (int, error) {
	st := b.st
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if st.expect100 {
		// The handler wants the body: tell a client that waits for it
		// (RFC 9110 §10.1.1), once, unless the response has begun.
		st.expect100 = false
		if st.unread() == 0 && !st.bodyEnd && st.bodyErr == nil && !st.headSent && !sc.closed {
			block := sc.enc.StartBlock(sc.block[:0])
			block = sc.enc.AppendField(block, ":status", "100")
			sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, false, block, sc.peerFrame)
			sc.block = block
			sc.kickWriter()
		}
	}
	for st.unread() == 0 && len(p) > 0 && st.bodyErr == nil && !st.bodyEnd && !st.bodyClosed {
		st.readStall.begin(st, sc.srv.cfg.readStall, false)
		st.wake.Wait()
	}
	st.readStall.end()
	switch {
	case st.bodyClosed:
		return 0, http.ErrBodyReadAfterClose
	case st.unread() == 0 && st.bodyErr != nil:
		return 0, st.bodyErr
	case st.unread() == 0 && st.bodyEnd:
		st.handTrailers()
		return 0, io.EOF
	}
	n := copy(p, st.buf[st.rpos:])
	st.rpos += n
	if st.rpos == len(st.buf) {
		st.buf, st.rpos = st.buf[:0], 0
	}
	sc.releaseConnLocked(uint32(n))
	st.releaseStreamLocked(uint32(n))
	if limit := sc.srv.cfg.limits.MaxBodyBytes; limit >= 0 {
		if st.bodyRead+int64(n) > limit {
			st.bodyOver = true
			n = int(limit - st.bodyRead)
			st.bodyRead = limit
			if st.nx != nil {
				return n, wire.ErrBodyTooLarge // as the native API's HTTP/1.1 body
			}
			return n, &http.MaxBytesError{Limit: limit}
		}
	}
	st.bodyRead += int64(n)
	return n, nil
}

func (b *h2ReqBody) Close() error {
	st := b.st
	st.sc.mu.Lock()
	st.bodyClosed = true
	st.dropBodyLocked()
	st.wake.Broadcast() // a Read waiting in another goroutine returns
	st.sc.mu.Unlock()
	return nil
}

// h2ResponseWriter is the http.ResponseWriter of a native HTTP/2 stream.
// Body bytes gather in buf until it fills, a Flush, or the handler's
// return, so a small response leaves as HEADERS and DATA with END_STREAM
// in one write. buf starts in the stream's own memory and moves to a
// pooled 16 KiB buffer when the body outgrows it.
type h2ResponseWriter struct {
	st          *h2Stream
	header      http.Header // reused from stream to stream on the connection
	status      int
	wroteHeader bool // WriteHeader (or the first Write) happened
	sentHeader  bool // the HEADERS frame is queued
	// The head as it was at WriteHeader (fields set later do not reach
	// it, as with net/http): name and value pairs, names canonical.
	head        []headField
	headArr     [12]headField
	length      int64 // Content-Length the server adds, or -1
	declared    int64 // Content-Length the handler set, or -1: a body may not pass it
	noDate      bool  // the handler set Date to nil: no Date field, as with net/http
	typeSet     bool  // Content-Type is in the header, even as nil: no sniffing
	noLength    bool  // the handler set Content-Length to nil: the server adds none, as with net/http
	buf         []byte
	small       [512]byte
	chunk       *[h2WriteChunk]byte // buf's pooled memory, once it grows
	written     int64
	trailerKeys []string // declared in the Trailer header before the HEADERS
	err         error
}

type headField struct{ name, value string }

const h2WriteChunk = 16 << 10

// h2Chunks are response buffers, shared by all native HTTP/2 streams.
var h2Chunks = sync.Pool{New: func() any { return new([h2WriteChunk]byte) }}

func (w *h2ResponseWriter) Header() http.Header { return w.header }

func (w *h2ResponseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		// An interim response: sent at once, the final one follows.
		w.writeInterim(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	w.length, w.declared = -1, -1
	for k, vv := range w.header {
		if k == "Content-Length" {
			// One that is not a length is left out, and the server
			// adds its own where it knows it, as net/http's HTTP/2
			// server does: sent, it made the client reset the stream.
			w.noLength = len(vv) == 0
			if len(vv) > 0 {
				if n, err := strconv.ParseUint(vv[0], 10, 63); err == nil {
					w.head = append(w.head, headField{k, vv[0]})
					w.declared = int64(n)
				}
			}
			continue
		}
		for _, v := range vv {
			w.head = append(w.head, headField{k, v})
		}
		switch k {
		case "Date":
			w.noDate = len(vv) == 0
		case "Content-Type":
			w.typeSet = true
		}
		if k == "Trailer" {
			for _, line := range vv {
				for k := range strings.SplitSeq(line, ",") {
					if k = strings.TrimSpace(k); k != "" {
						w.trailerKeys = append(w.trailerKeys, http.CanonicalHeaderKey(k))
					}
				}
			}
		}
	}
	// One order whatever the map's: the same head gives the same bytes.
	slices.SortStableFunc(w.head, func(a, b headField) int { return strings.Compare(a.name, b.name) })
}

// headHas reports whether the head has the field (canonical name).
// headValue returns the head's first value of the field (canonical
// name), "" when it has none.
func (w *h2ResponseWriter) headValue(name string) string {
	for _, f := range w.head {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

func (w *h2ResponseWriter) headHas(name string) bool {
	for _, f := range w.head {
		if f.name == name {
			return true
		}
	}
	return false
}

func (w *h2ResponseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowedStatus(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength // as net/http: nothing of it is sent
	}
	w.written += int64(len(p))
	if len(w.buf)+len(p) <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if len(w.buf)+len(p) <= h2WriteChunk {
		w.grow()
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if err := w.sendHeaderBefore(p, false); err != nil {
		return 0, err
	}
	if len(w.buf) > 0 {
		if err := w.st.sendData(w.buf, false); err != nil {
			w.err = err
			return 0, err
		}
		w.buf = w.buf[:0]
	}
	if err := w.st.sendData(p, false); err != nil {
		w.err = err
		return 0, err
	}
	return len(p), nil
}

// grow moves the body buffer to a pooled 16 KiB one.
func (w *h2ResponseWriter) grow() {
	if w.chunk != nil {
		return
	}
	w.chunk = h2Chunks.Get().(*[h2WriteChunk]byte)
	w.buf = append(w.chunk[:0], w.buf...)
}

// release gives the pooled buffer back once the response is over; a
// Write after that fails.
func (w *h2ResponseWriter) release() {
	if w.err == nil {
		w.err = errH2StreamClosed
	}
	w.buf = nil
	if w.chunk != nil {
		h2Chunks.Put(w.chunk)
		w.chunk = nil
	}
}

func (w *h2ResponseWriter) WriteString(s string) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err == nil && bodyAllowedStatus(w.status) && len(w.buf)+len(s) <= cap(w.buf) &&
		(w.declared < 0 || w.written+int64(len(s)) <= w.declared) {
		w.written += int64(len(s))
		w.buf = append(w.buf, s...)
		return len(s), nil
	}
	return w.Write([]byte(s))
}

func bodyAllowedStatus(code int) bool {
	return !(code >= 100 && code <= 199 || code == http.StatusNoContent || code == http.StatusNotModified)
}

// Flush sends the headers and what the body holds so far.
func (w *h2ResponseWriter) Flush() { w.FlushError() }

// FlushError is Flush, reporting a stream or connection that is gone.
func (w *h2ResponseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if err := w.sendHeader(false); err != nil {
		return err
	}
	if len(w.buf) > 0 {
		if err := w.st.sendData(w.buf, false); err != nil {
			w.err = err
			return err
		}
		w.buf = w.buf[:0]
	}
	return nil
}

// SetReadDeadline is for http.ResponseController: past the deadline,
// reads of the request body fail with os.ErrDeadlineExceeded, as
// net/http's HTTP/2 server does. The zero time clears it.
func (w *h2ResponseWriter) SetReadDeadline(t time.Time) error {
	st := w.st
	st.readDL.set(t, func() {
		st.sc.mu.Lock()
		if st.bodyErr == nil && !st.bodyEnd {
			st.bodyErr = os.ErrDeadlineExceeded
		}
		st.wake.Broadcast()
		st.sc.mu.Unlock()
	})
	return nil
}

// SetWriteDeadline is for http.ResponseController: past the deadline,
// the stream is reset (CANCEL) unless the response is complete, and
// writes fail. The zero time clears it.
func (w *h2ResponseWriter) SetWriteDeadline(t time.Time) error {
	st := w.st
	st.sc.mu.Lock()
	st.writeStall.off = true // the handler's deadline replaces WriteStallTimeout
	st.writeStall.end()
	st.sc.mu.Unlock()
	st.writeDL.set(t, func() {
		st.sc.mu.Lock()
		if st.state == h2.StateOpen || st.state == h2.StateHalfClosedRemote {
			st.writeExpired = true
			st.sc.resetLocked(st.id, h2.ErrCodeCancel)
		}
		st.sc.mu.Unlock()
	})
	return nil
}

// streamDeadline runs fire once its time has come.
type streamDeadline struct {
	mu sync.Mutex
	t  *time.Timer
}

func (d *streamDeadline) set(at time.Time, fire func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.t != nil {
		d.t.Stop()
		d.t = nil
	}
	if at.IsZero() {
		return
	}
	wait := time.Until(at)
	if wait <= 0 {
		fire()
		return
	}
	d.t = time.AfterFunc(wait, fire)
}

func (d *streamDeadline) stop() {
	d.mu.Lock()
	if d.t != nil {
		d.t.Stop()
		d.t = nil
	}
	d.mu.Unlock()
}

// EnableFullDuplex is for http.ResponseController: an HTTP/2 handler may
// always read its body while it writes.
func (w *h2ResponseWriter) EnableFullDuplex() error { return nil }

// CloseNotify is for the deprecated http.CloseNotifier: true once the
// request's context is done (the stream reset, the connection gone, or
// the handler returned).
func (w *h2ResponseWriter) CloseNotify() <-chan bool {
	ch := make(chan bool, 1)
	context.AfterFunc(&w.st.ctx, func() { ch <- true })
	return ch
}

// Hijack is not possible on HTTP/2 (RFC 9113 §8.6 has no upgrade).
func (w *h2ResponseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, http.ErrNotSupported
}

// finish completes the response after the handler returned: headers if
// none were sent, the rest of the body, END_STREAM or trailers, and
// RST_STREAM (NO_ERROR) if the client is still sending a body nobody
// will read (§8.1).
func (w *h2ResponseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return
	}
	trailers := w.trailers()
	head := w.st.isHead
	// A response the handler finished before anything was sent gets its
	// length, as net/http's (but a HEAD that wrote nothing).
	if !w.sentHeader && !w.noLength && !w.headHas("Content-Length") && bodyAllowedStatus(w.status) && (len(w.buf) > 0 || !head) {
		w.length = int64(len(w.buf))
	}
	if head {
		if !w.sentHeader {
			w.err = w.sendHeader(true)
		} else {
			w.st.sendData(nil, true)
		}
	} else if !w.sentHeader && len(w.buf) == 0 && len(trailers) == 0 {
		w.err = w.sendHeader(true)
	} else {
		if err := w.sendHeader(false); err != nil {
			return
		}
		if err := w.st.sendData(w.buf, len(trailers) == 0); err != nil {
			return
		}
		w.buf = w.buf[:0]
		if len(trailers) > 0 {
			w.st.sendTrailers(trailers)
		}
	}
	sc := w.st.sc
	sc.mu.Lock()
	st := w.st
	if st.state == h2.StateHalfClosedLocal {
		sc.queueNoErrLocked(st)
	}
	sc.mu.Unlock()
}

// trailers gathers the trailers the handler set: those declared in the
// Trailer header before the response began, and any under
// http.TrailerPrefix.
func (w *h2ResponseWriter) trailers() http.Header {
	var t http.Header
	for _, k := range w.trailerKeys {
		if vv := w.header[k]; len(vv) > 0 {
			if t == nil {
				t = make(http.Header)
			}
			t[k] = vv
		}
	}
	for k, vv := range w.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok && len(vv) > 0 {
			if t == nil {
				t = make(http.Header)
			}
			t[http.CanonicalHeaderKey(name)] = vv
		}
	}
	return t
}

// sendHeader queues the response's HEADERS frame, once.
func (w *h2ResponseWriter) sendHeader(end bool) error { return w.sendHeaderBefore(nil, end) }

// sendHeaderBefore is sendHeader where the body's first bytes are the
// buffered ones followed by next: a missing Content-Type is sniffed from
// the first 512 of them, as net/http does whatever the Writes' sizes.
func (w *h2ResponseWriter) sendHeaderBefore(next []byte, end bool) error {
	if w.sentHeader {
		return nil
	}
	w.sentHeader = true
	sniffed := ""
	if len(w.buf)+len(next) > 0 && bodyAllowedStatus(w.status) && !w.typeSet && w.headValue("Content-Encoding") == "" {
		var first [sniffLen]byte
		n := copy(first[:], w.buf)
		n += copy(first[n:], next)
		sniffed = http.DetectContentType(first[:n])
	}
	err := w.st.sendHead(w, sniffed, end)
	if err != nil {
		w.err = err
	}
	return err
}

func (w *h2ResponseWriter) writeInterim(code int) {
	if w.sentHeader {
		return
	}
	w.st.sendFields(code, w.header, false)
}

// h2Hop lists the fields HTTP/2 does not carry (§8.2.2).
func h2Hop(k string) bool {
	switch k {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade":
		return true
	}
	return strings.HasPrefix(k, http.TrailerPrefix)
}

// h2Sendable reports whether a response field can go out: its name a
// token, its value free of CR, LF, NUL and other controls (§8.2.1). Those
// that cannot are left out, as net/http's HTTP/2 server leaves them out,
// rather than sent for the client to reject the whole response.
func h2Sendable(name, value string) bool {
	return wire.ValidHeaderName(name) && wire.ValidHeaderValue(value)
}

// Field names HTTP/2 sends in lowercase (§8.2.1), for the names
// responses use most, so that encoding a head does not allocate.
var h2LowerNames = func() map[string]string {
	m := make(map[string]string)
	for _, k := range append(slices.Clone(commonHeaders),
		"Accept-Ranges", "Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
		"Access-Control-Allow-Methods", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
		"Access-Control-Max-Age", "Age", "Allow", "Content-Disposition", "Content-Language",
		"Content-Location", "Content-Range", "Content-Security-Policy", "Etag", "Expires",
		"Grpc-Encoding", "Grpc-Message", "Grpc-Status", "Last-Modified", "Link", "Location",
		"Referrer-Policy", "Retry-After", "Server", "Set-Cookie", "Strict-Transport-Security",
		"Vary", "Www-Authenticate", "X-Content-Type-Options", "X-Frame-Options", "X-Xss-Protection") {
		m[k] = strings.ToLower(k)
	}
	return m
}()

func lowerName(k string) string {
	if l, ok := h2LowerNames[k]; ok {
		return l
	}
	return strings.ToLower(k)
}

// statusStrings are the :status values, made once.
var statusStrings = func() (s [600]string) {
	for i := 100; i < len(s); i++ {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusString(code int) string {
	if code < len(statusStrings) {
		return statusStrings[code]
	}
	return strconv.Itoa(code)
}

var (
	contentLengthName = []byte("content-length")
	dateName          = []byte("date")
)

// queueBlock queues a HEADERS block on the stream, which encode builds
// under the connection's mutex, into its scratch: HPACK needs blocks
// encoded in the order they are queued. A final block (a response head,
// trailers) moves the stream's state; an interim 1xx head does not.
func (st *h2Stream) queueBlock(end, final bool, encode func(sc *h2Conn, block []byte) []byte) error {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return errH2ConnClosed
	}
	flags := h2.Flags(0)
	if end {
		flags = h2.FlagEndStream
	}
	next, ok := st.state.Send(h2.FrameHeaders, flags)
	if !ok {
		return st.closedErrLocked()
	}
	block := encode(sc, sc.enc.StartBlock(sc.block[:0]))
	sc.block = block
	sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, end, block, sc.peerFrame)
	if final {
		st.state = next
		if !next.Active() {
			sc.streamClosedLocked(st)
		}
	}
	sc.kickWriter()
	return nil
}

// sendHead queues the response's HEADERS frame from the head w took at
// WriteHeader, plus the Content-Type it sniffed, the Content-Length it
// knows and the Date.
func (st *h2Stream) sendHead(w *h2ResponseWriter, sniffed string, end bool) error {
	return st.queueBlock(end, true, func(sc *h2Conn, block []byte) []byte {
		enc := &sc.enc
		block = enc.AppendField(block, ":status", statusString(w.status))
		date := false
		for _, f := range w.head {
			if h2Hop(f.name) || !h2Sendable(f.name, f.value) {
				continue
			}
			if f.name == "Date" {
				if !date {
					block = enc.AppendField(block, "date", f.value)
				}
				date = true
				continue
			}
			block = enc.AppendField(block, lowerName(f.name), f.value)
		}
		if sniffed != "" {
			block = enc.AppendField(block, "content-type", sniffed)
		}
		if w.length >= 0 {
			sc.num = strconv.AppendInt(sc.num[:0], w.length, 10)
			block = enc.AppendFieldBytes(block, contentLengthName, sc.num)
		}
		if !date && !w.noDate {
			sc.num = appendDate(sc.num[:0], time.Now())
			block = enc.AppendFieldBytes(block, dateName, sc.num)
		}
		st.headSent = true
		return block
	})
}

// sendTrailers queues the trailers, ending the stream.
func (st *h2Stream) sendTrailers(h http.Header) error { return st.sendFields(0, h, true) }

// sendFields queues a HEADERS block from a header map: an interim
// response (status 1xx) or trailers (status 0).
func (st *h2Stream) sendFields(status int, h http.Header, end bool) error {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return st.queueBlock(end, status == 0, func(sc *h2Conn, block []byte) []byte {
		if status > 0 {
			block = sc.enc.AppendField(block, ":status", statusString(status))
		}
		for _, k := range keys {
			if status > 0 && (h2Hop(k) || k == "Date" || k == "Content-Length") {
				continue
			}
			if !wire.ValidHeaderName(k) {
				continue
			}
			name := lowerName(k)
			for _, v := range h[k] {
				if wire.ValidHeaderValue(v) {
					block = sc.enc.AppendField(block, name, v)
				}
			}
		}
		return block
	})
}

// sendData queues p as DATA frames within the send windows, waiting for
// WINDOW_UPDATEs and for room in the write buffer (under
// WriteStallTimeout); end sets END_STREAM on the last frame.
func (st *h2Stream) sendData(p []byte, end bool) error {
	sc := st.sc
	if st.isHead {
		p = nil // a HEAD response has no body (RFC 9110 §9.3.2)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	for {
		n, err := st.dataRoomLocked(len(p))
		if err != nil {
			return err
		}
		if n == 0 && !end {
			sc.kickWriter()
			return nil
		}
		last := end && n == len(p)
		flags := h2.Flags(0)
		if last {
			flags = h2.FlagEndStream
		}
		sc.wbuf = h2.AppendData(sc.wbuf, st.id, flags, p[:n], 0)
		st.sentDataLocked(last)
		if p = p[n:]; last {
			return nil
		}
	}
}

// sendDataRef is sendData without END_STREAM, where the frames' payloads
// are not copied into the write buffer but written from p itself (see
// h2Ref), from file, where end is the offset just past p. It returns the write batch
// that carries the last of them, even
// with an error (0 if none was queued): p must stay valid and unchanged
// until the writer is done with that batch (waitWritten).
func (st *h2Stream) sendDataRef(p []byte, file fileStat, end int64) (batch uint64, err error) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	for len(p) > 0 {
		n, err := st.dataRoomLocked(len(p))
		if err != nil {
			return batch, err
		}
		sc.wbuf = h2.AppendFrameHeader(sc.wbuf, h2.FrameHeader{Length: uint32(n), Type: h2.FrameData, StreamID: st.id})
		sc.wrefs = append(sc.wrefs, h2Ref{at: len(sc.wbuf), p: p[:n], stream: st.id, file: file, end: end - int64(len(p)-n)})
		p = p[n:]
		sc.refBytes += n
		st.sentDataLocked(false)
		// The batch the writer takes next carries it (0 means none
		// was queued: nothing to wait for).
		batch = sc.taken + 1
	}
	sc.kickWriter()
	return batch, nil
}

// dataRoomLocked waits until the stream may queue its next DATA frame of
// at most left bytes and takes that frame's share of the send windows:
// it returns the frame's size, 0 only when left is 0. It fails when the
// stream or the connection can no longer send.
func (st *h2Stream) dataRoomLocked(left int) (int, error) {
	n, err := st.waitRoomLocked(left)
	if n > 0 {
		st.sc.connOut.Consume(uint32(n))
		st.out.Consume(uint32(n))
	}
	return n, err
}

// waitSendWindow waits until the stream may send, and returns how many
// bytes the flow-control windows let it send now.
func (st *h2Stream) waitSendWindow() (int64, error) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	if _, err := st.waitRoomLocked(1); err != nil {
		return 0, err
	}
	return min(sc.connOut.Available(), st.out.Available()), nil
}

// closedErrLocked is what a write to a stream that can no longer send
// gets: os.ErrDeadlineExceeded when its write deadline ended it, as
// net/http's HTTP/2 server returns.
func (st *h2Stream) closedErrLocked() error {
	if st.writeExpired {
		return os.ErrDeadlineExceeded
	}
	return errH2StreamClosed
}

// waitRoomLocked is dataRoomLocked without taking the frame's share of
// the windows. Each wait sleeps on the stream's own cond until what it
// waits for may have changed: nothing wakes it, and it wakes nothing, in
// between.
func (st *h2Stream) waitRoomLocked(left int) (int, error) {
	sc := st.sc
	for {
		if sc.closed || sc.writerGone {
			return 0, errH2ConnClosed
		}
		if st.state != h2.StateOpen && st.state != h2.StateHalfClosedRemote {
			return 0, st.closedErrLocked()
		}
		if left == 0 {
			return 0, nil
		}
		full := len(sc.wbuf) >= h2MaxWriteBuffer || sc.refBytes >= h2MaxRefQueue
		n := 0
		if !full {
			n = h2.SendLimit(&sc.connOut, &st.out, min(sc.peerFrame, h2MaxDataFrame), left)
		}
		if n > 0 {
			st.writeStall.end() // progress
			return n, nil
		}
		if sc.queuedLocked() {
			sc.kickWriter() // what is queued goes out while we wait
		}
		if full {
			// Waiting for the writer, which the connection's own
			// stall deadline watches (a client that stops reading
			// loses the connection); a slow one is no stall. The
			// writer wakes us when it takes the buffer.
			st.writeStall.end()
			if !st.roomWaiting {
				st.roomWaiting = true
				sc.roomWaiters = append(sc.roomWaiters, st)
			}
			st.wake.Wait()
			continue
		}
		// Waiting for the client's WINDOW_UPDATE: on the stream's own
		// cond, woken by an update of its window, of the connection's
		// (connWaiters), or a change of its state. Nothing else runs
		// for it meanwhile.
		st.writeStall.begin(st, sc.srv.cfg.writeStall, true)
		if sc.connOut.Available() <= 0 && !st.connWaiting {
			st.connWaiting = true
			sc.connWaiters = append(sc.connWaiters, st)
		}
		st.wake.Wait()
	}
}

// sentDataLocked accounts for a queued DATA frame; end (END_STREAM)
// moves the stream's state and wakes the writer.
func (st *h2Stream) sentDataLocked(end bool) {
	sc := st.sc
	sc.dataSent++
	if end {
		st.state, _ = st.state.Send(h2.FrameData, h2.FlagEndStream)
		if !st.state.Active() {
			sc.streamClosedLocked(st)
		}
		sc.kickWriter()
	}
}

// mapFaulted reports whether the writer found the stream's mapped pages
// unreadable (writeRefs).
func (st *h2Stream) mapFaulted() bool {
	st.sc.mu.Lock()
	defer st.sc.mu.Unlock()
	return st.mapFault
}

// waitWritten waits until the writer is done with write batch b (it
// wrote it, failed to, or will never write again): then memory queued by
// reference in that batch or before may be reused.
func (sc *h2Conn) waitWritten(b uint64) {
	sc.mu.Lock()
	sc.refWaiters++
	for sc.written < b && !sc.writerGone {
		sc.kickWriter()
		sc.cond.Wait()
	}
	sc.refWaiters--
	sc.mu.Unlock()
}

// ReadFrom copies src into the body (io.Copy finds it): a big file by
// reference to its mapped pages where it can (readFromFile), otherwise
// through a pooled buffer.
func (w *h2ResponseWriter) ReadFrom(src io.Reader) (int64, error) {
	n, ok, err := w.readFromFile(src)
	if ok {
		return n, err
	}
	c, err := copyBody(writerOnly{w}, src) // the rest
	return n + c, err
}
