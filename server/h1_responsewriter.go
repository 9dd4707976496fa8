package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/internal/rawhijack"
	"github.com/hotpathhq/hotpath/wire"
)

// responseWriter is the adapter's http.ResponseWriter: a face on the
// connection's response (response.go) that adds net/http's semantics
// (the header map taken at WriteHeader, implicit 200, Content-Type
// sniffing, trailers from the map). It is also an http.Flusher, an
// http.Hijacker, an io.ReaderFrom and an http.CloseNotifier, and answers
// http.ResponseController (FlushError, SetReadDeadline, SetWriteDeadline,
// EnableFullDuplex). It serves every request of its adapter: handlers
// are handed their request's requestWriter, which reaches it only while
// the handler runs and has not hijacked.
type responseWriter struct {
	handlerHeader
	a       *adapter
	closeCh chan bool
}

func (w *responseWriter) reset() {
	w.handlerHeader.reset()
	w.closeCh = nil
}

// requestWriter is the http.ResponseWriter a handler is handed: the face,
// for its request alone, of the adapter's responseWriter, which serves
// the connection's next request too (and, once the connection parks,
// another connection's: h1_park.go). It lives in the request's
// requestAlloc, so it costs no allocation, and each request has its own.
// Once the handler returned, a goroutine of the handler's that kept it
// (which net/http forbids, and which happens: a late log line, Flush,
// Hijack) reaches nothing of what the connection serves next: as on
// net/http, where each request has its own response, its writes fail
// (errHandlerDone) and the rest does nothing. After Hijack it reaches
// only the conn (the working state is let go: letGo), and answers as
// net/http's ResponseWriter does after Hijack. 16 bytes: requestAlloc
// stays in its size class (TestRequestAllocSize).
type requestWriter struct {
	// c is the connection while the handler runs, nil once it returned:
	// stored on the connection's goroutine before it goes on, loaded
	// first by every method.
	c atomic.Pointer[conn]
	// hdr is the header map after Hijack, which net/http's keeps too (a
	// WebSocket upgrader reads it for its 101): kept only if the handler
	// put fields in it, since the adapter that held it is let go.
	hdr http.Header
}

// errHandlerDone is what a ResponseWriter's writes answer once its
// handler returned: a goroutine of the handler's that kept it (which
// net/http forbids) must not write into whatever the connection, or
// another one, serves next.
var errHandlerDone = errors.New("server: ResponseWriter used after its handler returned")

// live returns the responseWriter while the handler runs and has not
// hijacked; otherwise the error a write gets, with the conn once
// hijacked.
func (h *requestWriter) live() (*responseWriter, *conn, error) {
	c := h.c.Load()
	if c == nil {
		return nil, nil, errHandlerDone
	}
	if c.hijacked {
		return nil, c, http.ErrHijacked
	}
	return &c.handler.rw, c, nil
}

// Header returns the response header map; once the handler returned, a
// map of its own, since nothing set then goes out.
func (h *requestWriter) Header() http.Header {
	w, _, err := h.live()
	switch err {
	case nil:
		return w.Header()
	case http.ErrHijacked:
		if h.hdr == nil {
			h.hdr = http.Header{}
		}
		return h.hdr
	}
	return http.Header{}
}

func (h *requestWriter) WriteHeader(code int) {
	w, c, err := h.live()
	switch err {
	case nil:
		w.WriteHeader(code)
	case http.ErrHijacked:
		c.srv.logf("server: response.WriteHeader on hijacked connection")
	}
}

func (h *requestWriter) Write(p []byte) (int, error) {
	w, _, err := h.live()
	if err != nil {
		return 0, err
	}
	return w.Write(p)
}

func (h *requestWriter) WriteString(s string) (int, error) {
	w, _, err := h.live()
	if err != nil {
		return 0, err
	}
	return w.WriteString(s)
}

func (h *requestWriter) ReadFrom(src io.Reader) (int64, error) {
	w, _, err := h.live()
	if err != nil {
		return 0, err
	}
	return w.ReadFrom(src)
}

func (h *requestWriter) Flush() { h.FlushError() }

func (h *requestWriter) FlushError() error {
	w, _, err := h.live()
	if err != nil {
		return err
	}
	return w.FlushError()
}

// CloseNotify: once the handler returned, a channel that holds true
// (net/http panics); after Hijack, one that never fires (the server
// watches the connection no more, as net/http's after Hijack).
func (h *requestWriter) CloseNotify() <-chan bool {
	w, _, err := h.live()
	if err == nil {
		return w.CloseNotify()
	}
	ch := make(chan bool, 1)
	if err == errHandlerDone {
		ch <- true
	}
	return ch
}

func (h *requestWriter) SetWriteDeadline(t time.Time) error {
	w, c, err := h.live()
	switch err {
	case nil:
		return w.SetWriteDeadline(t)
	case http.ErrHijacked:
		return c.nc.SetWriteDeadline(t) // the socket's, as on net/http
	}
	return err
}

func (h *requestWriter) SetReadDeadline(t time.Time) error {
	w, c, err := h.live()
	switch err {
	case nil:
		return w.SetReadDeadline(t)
	case http.ErrHijacked:
		return c.nc.SetReadDeadline(t) // the socket's, as on net/http
	}
	return err
}

func (h *requestWriter) EnableFullDuplex() error {
	w, _, err := h.live()
	switch err {
	case nil:
		return w.EnableFullDuplex()
	case http.ErrHijacked:
		return nil // as on net/http, where it only sets a flag
	}
	return err
}

// Hijack: once the handler returned, errHandlerDone (net/http panics,
// which would end the program from the goroutine that kept w).
func (h *requestWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w, _, err := h.live()
	if err != nil {
		return nil, nil, err
	}
	nc, brw, err := w.Hijack()
	if err == nil {
		h.keepHeader(w)
	}
	return nc, brw, err
}

// keepHeader keeps w's header map, once hijacked, if it holds fields.
func (h *requestWriter) keepHeader(w *responseWriter) {
	if len(w.hdr) > 0 {
		h.hdr = w.hdr
	}
}

// resp is the response this writer is a face on.
func (w *responseWriter) resp() *response { return &w.a.c.ctx.resp }

// Header returns the response header map.
func (w *responseWriter) Header() http.Header { return w.hdr }

// WriteHeader sends the status; the header map is taken as it is now.
func (w *responseWriter) WriteHeader(code int) {
	if !w.writeHeader(w.resp(), w.a.c.srv, code) {
		w.writeInformational(code)
	}
}

// writeInformational sends a 1xx response (103 Early Hints) at once,
// with the header map's fields as they are now.
func (w *responseWriter) writeInformational(code int) {
	c := w.a.c
	fields := w.infoFields()
	if c.canContinue.Load() {
		// A 100 Continue may still come after this 1xx: not at once.
		c.contMu.Lock()
		defer c.contMu.Unlock()
	}
	c.wbuf = w.resp().appendInformational(c.wbuf, code, fields)
	c.flush()
}

// Write writes body bytes, sending an implicit 200 first.
func (w *responseWriter) Write(p []byte) (int, error) {
	if err := w.beforeWrite(len(p)); err != nil {
		return 0, err
	}
	r := w.resp()
	if !r.committed() && len(r.buf)+len(p) > r.collectLimit {
		w.sniff(r, p)
	}
	if len(p) >= directWriteMin && r.err == nil && !r.fits(len(p)) {
		// A big write skips the write buffer (h1_bigbody.go).
		if err := r.commit(); err != nil {
			return 0, err
		}
		return r.writeDirect(p)
	}
	return r.write(p)
}

// WriteString is Write without a conversion.
func (w *responseWriter) WriteString(s string) (int, error) {
	if err := w.beforeWrite(len(s)); err != nil {
		return 0, err
	}
	r := w.resp()
	if !r.committed() && len(r.buf)+len(s) > r.collectLimit {
		w.sniff(r, []byte(s))
	}
	return r.writeString(s)
}

func (w *responseWriter) beforeWrite(n int) error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.bodyRefused(n)
}

// ReadFrom copies src into the body (io.Copy finds it), through one
// pooled buffer.
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if err := w.beforeWrite(0); err != nil {
		return 0, err
	}
	var total int64
	r := w.resp()
	if r.declaredLen >= 0 && wire.BodyAllowed(w.status) && w.a.c.retryWrites() {
		if !r.committed() && w.sniffType {
			// The first bytes decide the Content-Type: through Write.
			n, err := io.CopyN(writerOnly{w}, src, sniffLen)
			total += n
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				return total, err
			}
		}
		n, ok, err := r.readFromDirect(src)
		if ok {
			return total + n, err
		}
	}
	if r.declaredLen >= 0 && wire.BodyAllowed(w.status) && !w.a.c.ctx.isHead() {
		// A declared length is written in full, then a source with more
		// is an error, as net/http's ReadFrom does (from Go 1.27): not a
		// last write refused whole for crossing the length.
		left := r.declaredLen - r.sent - int64(len(r.buf))
		n, err := copyBody(writerOnly{w}, io.LimitReader(src, left))
		total += n
		if err == nil && n == left {
			var one [1]byte
			if k, _ := src.Read(one[:]); k > 0 {
				err = ErrContentLength
			}
		}
		return total, err
	}
	n, err := copyBody(writerOnly{w}, src)
	return total + n, err
}

// CloseNotify is for the deprecated http.CloseNotifier, which gin and
// others still use: the channel receives true when the client leaves
// (or, harmlessly, once the handler has returned).
func (w *responseWriter) CloseNotify() <-chan bool {
	if w.closeCh == nil {
		ch := make(chan bool, 1)
		w.closeCh = ch
		w.a.ctx.AfterFunc(func() { ch <- true })
	}
	return w.closeCh
}

// finish completes the response after the handler returned.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		var we *wire.Error
		if err := w.a.c.ctx.body.err; err != nil && errors.As(err, &we) {
			return // the handler said nothing: the server answers the body's error (finishResponse)
		}
		w.WriteHeader(http.StatusOK)
	}
	r := w.resp()
	w.sniff(r, nil)
	w.setTrailers(r)
}

// Flush sends what was written so far.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush with the error, for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	r := w.resp()
	w.sniff(r, nil)
	return r.flush()
}

// SetWriteDeadline is for http.ResponseController: it replaces the
// server's write timeouts for the rest of this response.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	return w.a.c.ctx.SetWriteDeadline(t)
}

// SetReadDeadline is for http.ResponseController: it replaces the
// server's read timeouts for the rest of this request's body.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	return w.a.c.ctx.SetReadDeadline(t)
}

// EnableFullDuplex is for http.ResponseController. The engine always
// lets a handler read the body after it started the response; this also
// keeps an unread body from ending the connection when the head goes out.
func (w *responseWriter) EnableFullDuplex() error {
	w.a.c.ctx.fullDuplex = true
	return nil
}

// Hijack hands the connection to the handler, with a reader holding any
// bytes already received after the request head. The disconnect watcher
// is stopped first, and every deadline cleared.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, pending, err := w.hijack()
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(pending), nc), max(4096, len(pending)))
	if len(pending) > 0 {
		// Into the buffer now, so that Buffered reports them as on
		// net/http (a WebSocket upgrader reads them first, then the
		// socket). One Read of the MultiReader returns them all: this
		// does not block.
		br.Peek(len(pending))
	}
	bw := bufio.NewWriter(nc)
	return nc, bufio.NewReadWriter(br, bw), nil
}

// hijack is Hijack without the bufio.ReadWriter: the connection and the
// bytes already read past the request head. Package websocket takes it
// through internal/rawhijack.
func (w *responseWriter) hijack() (net.Conn, []byte, error) {
	c := w.a.c
	w.a.stopWatch()
	// The body is not read past Hijack (net/http's rule): a Read now
	// gets http.ErrBodyReadAfterClose, not bytes of the new owner's.
	w.a.takeBody()
	pending, err := c.takeOver(w.wroteHeader)
	if err != nil {
		return nil, nil, err
	}
	w.a.letGo()
	return c.nc, pending, nil
}

func init() {
	rawhijack.Take = func(w http.ResponseWriter) (net.Conn, []byte, bool, error) {
		h, ok := w.(*requestWriter)
		if !ok {
			return nil, nil, false, nil
		}
		rw, _, err := h.live()
		if err != nil {
			return nil, nil, true, err
		}
		nc, pending, err := rw.hijack()
		if err == nil {
			h.keepHeader(rw)
		}
		return nc, pending, true, err
	}
}
