package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// An h2Stream is one request on a native HTTP/2 connection: its state,
// windows and body buffer (all under the connection's mutex), and the
// handler's goroutine with its ResponseWriter.
type h2Stream struct {
	sc    *h2Conn
	id    uint32
	state h2.StreamState
	out   h2.Window // send window
	in    h2.Inflow // receive window
	req   *http.Request
	ctx   context.Context
	stop  context.CancelFunc

	// The request body, fed by the reader.
	buf        []byte // received, not yet read
	bodyEnd    bool   // END_STREAM seen
	bodyErr    error  // the stream was reset or the connection lost
	bodyClosed bool   // the handler closed the body or returned
	declared   int64  // content-length, or -1
	received   int64

	expect100   bool // Expect: 100-continue, not yet answered
	headSent    bool // the final HEADERS is queued
	counted     bool // streams.Done has been called
	handlerDone bool
	remembered  bool // kept in sc.recent
	rw          h2ResponseWriter

	readDL, writeDL streamDeadline // http.ResponseController's deadlines
}

func (sc *h2Conn) newStream(id uint32, state h2.StreamState, req *http.Request) *h2Stream {
	st := &h2Stream{
		sc:       sc,
		id:       id,
		state:    state,
		out:      h2.StreamWindow(sc.peerWindow),
		declared: sc.val.ContentLength,
	}
	st.in.Init(h2StreamWindow, true)
	st.ctx, st.stop = context.WithCancel(sc.base)
	if req.Body == nil {
		req.Body = &h2ReqBody{st: st}
		st.expect100 = strings.EqualFold(req.Header.Get("Expect"), "100-continue")
	} else {
		st.bodyEnd = true
	}
	st.req = req.WithContext(st.ctx)
	st.rw = h2ResponseWriter{st: st, header: make(http.Header)}
	sc.table[id] = st
	if !state.Active() {
		sc.streamClosedLocked(st)
	}
	return st
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
		st.buf = append(st.buf, data...)
		sc.releaseConnLocked(pad)
	}
	if pad > 0 {
		st.releaseStreamLocked(pad)
	}
	if ended {
		st.bodyEnd = true
	}
	sc.cond.Broadcast()
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

// trailers records the request's trailers; the body ends with them.
func (st *h2Stream) trailers(hdr http.Header) {
	if st.req.Trailer == nil {
		st.req.Trailer = make(http.Header)
	}
	for k, vv := range hdr {
		st.req.Trailer[k] = vv
	}
	if err := h2.CheckContentLength(st.declared, st.received, true); err != nil {
		st.bodyErr = err
	}
	st.bodyEnd = true
	st.sc.cond.Broadcast()
}

// peerReset: the client reset the stream.
func (st *h2Stream) peerReset() {
	if st.bodyErr == nil {
		st.bodyErr = errors.New("server: HTTP/2 stream reset by the client")
	}
	st.stop()
	st.sc.cond.Broadcast()
}

// localReset: the server reset the stream.
func (st *h2Stream) localReset() {
	if st.bodyErr == nil {
		st.bodyErr = errH2StreamClosed
	}
	st.dropBodyLocked()
	st.stop()
	st.sc.cond.Broadcast()
}

func (st *h2Stream) connGone() {
	if st.bodyErr == nil {
		st.bodyErr = errH2ConnClosed
	}
	st.stop()
}

// dropBodyLocked gives back the connection credit of unread body bytes.
func (st *h2Stream) dropBodyLocked() {
	if n := len(st.buf); n > 0 {
		st.buf = st.buf[:0]
		st.sc.releaseConnLocked(uint32(n))
	}
}

// run is the stream's goroutine: the handler, then the end of the
// response.
func (st *h2Stream) run() {
	w := &st.rw
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				buf := make([]byte, 16<<10)
				buf = buf[:runtime.Stack(buf, false)]
				st.sc.srv.logf("server: panic serving HTTP/2 stream %d from %s: %v\n%s", st.id, st.sc.remote, p, buf)
			}
			st.abort(h2.ErrCodeInternal)
		}
		st.stop()
		st.readDL.stop()
		st.writeDL.stop()
		sc := st.sc
		sc.mu.Lock()
		st.handlerDone = true
		sc.running--
		st.bodyClosed = true
		st.dropBodyLocked()
		sc.forgetLocked(st)
		sc.maybeDoneLocked()
		sc.mu.Unlock()
	}()
	// ReadTimeout and WriteTimeout bound each stream, as net/http's
	// HTTP/2 server does: the body's reads, and the response.
	if d := st.sc.srv.cfg.readTimeout; d > 0 {
		w.SetReadDeadline(time.Now().Add(d))
	}
	if d := st.sc.srv.cfg.writeTimeout; d > 0 {
		w.SetWriteDeadline(time.Now().Add(d))
	}
	st.sc.handler.ServeHTTP(w, st.req)
	w.finish()
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
		if len(st.buf) == 0 && !st.bodyEnd && st.bodyErr == nil && !st.headSent && !sc.closed {
			block := sc.enc.StartBlock(nil)
			block = sc.enc.AppendField(block, ":status", "100")
			sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, false, block, sc.peerFrame)
			sc.kickWriter()
		}
	}
	for len(st.buf) == 0 && len(p) > 0 && st.bodyErr == nil && !st.bodyEnd && !st.bodyClosed {
		sc.cond.Wait()
	}
	switch {
	case st.bodyClosed:
		return 0, http.ErrBodyReadAfterClose
	case len(st.buf) == 0 && st.bodyErr != nil:
		return 0, st.bodyErr
	case len(st.buf) == 0 && st.bodyEnd:
		return 0, io.EOF
	}
	n := copy(p, st.buf)
	st.buf = st.buf[:copy(st.buf, st.buf[n:])]
	sc.releaseConnLocked(uint32(n))
	st.releaseStreamLocked(uint32(n))
	return n, nil
}

func (b *h2ReqBody) Close() error {
	st := b.st
	st.sc.mu.Lock()
	st.bodyClosed = true
	st.dropBodyLocked()
	st.sc.mu.Unlock()
	return nil
}

// h2ResponseWriter is the http.ResponseWriter of a native HTTP/2 stream.
// Body bytes gather in buf until it fills, a Flush, or the handler's
// return, so a small response leaves as HEADERS and DATA with END_STREAM
// in one write.
type h2ResponseWriter struct {
	st          *h2Stream
	header      http.Header
	snap        http.Header // the header as it was at WriteHeader: what the head carries
	status      int
	wroteHeader bool // WriteHeader (or the first Write) happened
	sentHeader  bool // the HEADERS frame is queued
	buf         []byte
	written     int64
	trailerKeys []string // declared in the Trailer header before the HEADERS
	err         error
}

const h2WriteChunk = 16 << 10

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
	// Fields set after WriteHeader do not reach the head, and trailers
	// are those declared by then, as with net/http.
	w.snap = w.header.Clone()
	for _, line := range w.snap["Trailer"] {
		for k := range strings.SplitSeq(line, ",") {
			if k = strings.TrimSpace(k); k != "" {
				w.trailerKeys = append(w.trailerKeys, http.CanonicalHeaderKey(k))
			}
		}
	}
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
	w.written += int64(len(p))
	if len(w.buf)+len(p) <= h2WriteChunk {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if err := w.sendHeader(false); err != nil {
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

func (w *h2ResponseWriter) WriteString(s string) (int, error) {
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
		st.sc.cond.Broadcast()
		st.sc.mu.Unlock()
	})
	return nil
}

// SetWriteDeadline is for http.ResponseController: past the deadline,
// the stream is reset (CANCEL) unless the response is complete, and
// writes fail. The zero time clears it.
func (w *h2ResponseWriter) SetWriteDeadline(t time.Time) error {
	st := w.st
	st.writeDL.set(t, func() {
		st.sc.mu.Lock()
		if st.state == h2.StateOpen || st.state == h2.StateHalfClosedRemote {
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
	context.AfterFunc(w.st.ctx, func() { ch <- true })
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
	head := w.st.req.Method == http.MethodHead
	// A response the handler finished before anything was sent gets its
	// length, as net/http's (but a HEAD that wrote nothing).
	if !w.sentHeader && w.snap.Get("Content-Length") == "" && bodyAllowedStatus(w.status) && (len(w.buf) > 0 || !head) {
		w.snap.Set("Content-Length", strconv.Itoa(len(w.buf)))
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
			w.st.sendFields(0, trailers, true)
		}
	}
	sc := w.st.sc
	sc.mu.Lock()
	st := w.st
	if st.state == h2.StateHalfClosedLocal {
		sc.noErrQueued = append(sc.noErrQueued, st)
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
func (w *h2ResponseWriter) sendHeader(end bool) error {
	if w.sentHeader {
		return nil
	}
	w.sentHeader = true
	h := w.snap
	if _, set := h["Content-Type"]; !set && h.Get("Content-Encoding") == "" && len(w.buf) > 0 && bodyAllowedStatus(w.status) {
		h.Set("Content-Type", http.DetectContentType(w.buf))
	}
	err := w.st.sendFields(w.status, h, end)
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

// sendFields queues a HEADERS block: a response head (status > 0) or
// trailers (status 0).
func (st *h2Stream) sendFields(status int, h http.Header, end bool) error {
	sc := st.sc
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
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
		return errH2StreamClosed
	}
	block := sc.enc.StartBlock(nil)
	if status > 0 {
		block = sc.enc.AppendField(block, ":status", strconv.Itoa(status))
	}
	for _, k := range keys {
		if status > 0 && h2Hop(k) {
			continue
		}
		if status > 0 && k == "Date" {
			continue
		}
		name := strings.ToLower(k)
		for _, v := range h[k] {
			block = sc.enc.AppendField(block, name, v)
		}
	}
	if status >= 200 {
		if _, set := h["Date"]; !set {
			block = sc.enc.AppendFieldBytes(block, []byte("date"), appendDate(nil, time.Now()))
		} else if len(h["Date"]) > 0 {
			block = sc.enc.AppendField(block, "date", h["Date"][0])
		}
	}
	sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, end, block, sc.peerFrame)
	if status >= 200 {
		st.headSent = true
	}
	if status == 0 || status >= 200 {
		st.state = next
		if !next.Active() {
			sc.streamClosedLocked(st)
		}
	}
	sc.kickWriter()
	return nil
}

// sendData queues p as DATA frames within the send windows, waiting for
// WINDOW_UPDATEs and for room in the write buffer; end sets END_STREAM on
// the last frame.
func (st *h2Stream) sendData(p []byte, end bool) error {
	sc := st.sc
	if st.req.Method == http.MethodHead {
		p = nil // a HEAD response has no body (RFC 9110 §9.3.2)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for {
		if sc.closed {
			return errH2ConnClosed
		}
		if st.state != h2.StateOpen && st.state != h2.StateHalfClosedRemote {
			return errH2StreamClosed
		}
		if len(p) == 0 {
			if !end {
				sc.kickWriter()
				return nil
			}
			sc.wbuf = h2.AppendData(sc.wbuf, st.id, h2.FlagEndStream, nil, 0)
			st.state, _ = st.state.Send(h2.FrameData, h2.FlagEndStream)
			if !st.state.Active() {
				sc.streamClosedLocked(st)
			}
			sc.kickWriter()
			return nil
		}
		n := 0
		if len(sc.wbuf) < h2MaxWriteBuffer {
			n = h2.SendLimit(&sc.connOut, &st.out, min(sc.peerFrame, h2MaxDataFrame), len(p))
		}
		if n == 0 {
			sc.kickWriter()
			sc.cond.Wait()
			continue
		}
		sc.connOut.Consume(uint32(n))
		st.out.Consume(uint32(n))
		flags := h2.Flags(0)
		if end && n == len(p) {
			flags = h2.FlagEndStream
		}
		sc.wbuf = h2.AppendData(sc.wbuf, st.id, flags, p[:n], 0)
		p = p[n:]
		if flags != 0 {
			st.state, _ = st.state.Send(h2.FrameData, flags)
			if !st.state.Active() {
				sc.streamClosedLocked(st)
			}
			sc.kickWriter()
			return nil
		}
	}
}
