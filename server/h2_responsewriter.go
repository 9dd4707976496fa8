package server

// HTTP/2 engine: the http.ResponseWriter of http.Handler code on
// HTTP/2 (h2ResponseWriter).

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2ResponseWriter is the http.ResponseWriter of an HTTP/2 stream: a face
// on a response record (response.go), as the HTTP/1.1 writer is, with the
// same header-map semantics (handlerHeader). Body bytes gather in the
// record until 16 KiB, a Flush, or the handler's return, so a small
// response leaves as HEADERS and DATA with END_STREAM in one write.
//
// The record (with the memory its slots and body grew) is taken from a
// pool for the handler's run and given back when it returns: streams of
// http.Handlers are not recycled, since a handler may keep its request.
type h2ResponseWriter struct {
	st *h2Stream
	*h2Response
}

// h2Response is what an h2ResponseWriter writes through while its
// handler runs.
type h2Response struct {
	handlerHeader
	r response
}

const h2WriteChunk = 16 << 10

// h2Responses are the response records of http.Handler streams.
var h2Responses = sync.Pool{New: func() any {
	rec := &h2Response{handlerHeader: handlerHeader{http2: true}}
	rec.r.collectLimit = h2WriteChunk
	return rec
}}

// take gives the writer a response record, and its header map.
func (w *h2ResponseWriter) take(st *h2Stream, hdr http.Header) {
	rec := h2Responses.Get().(*h2Response)
	rec.handlerHeader.reset()
	rec.hdr = hdr
	rec.r.st = st
	rec.r.reset()
	w.st, w.h2Response = st, rec
}

// release gives the record back once the handler returned, and returns
// its header map for the connection's next stream. A Write after that
// fails.
func (w *h2ResponseWriter) release() http.Header {
	rec := w.h2Response
	if rec == nil {
		return nil
	}
	w.h2Response = nil
	hdr := rec.hdr
	rec.hdr = nil
	rec.r.st = nil
	if cap(rec.r.buf) > 4*h2WriteChunk {
		rec.r.buf = nil
	}
	h2Responses.Put(rec)
	return hdr
}

func (w *h2ResponseWriter) Header() http.Header {
	if w.h2Response == nil {
		return http.Header{} // the handler returned: nothing it sets goes out
	}
	return w.hdr
}

// WriteHeader sends the status; the header map is taken as it is now.
func (w *h2ResponseWriter) WriteHeader(code int) {
	if w.h2Response == nil {
		return
	}
	if !w.writeHeader(&w.r, w.st.sc.srv, code) && !w.r.committed() {
		w.r.h2Informational(code, w.infoFields())
	}
}

// Write writes body bytes, sending an implicit 200 first.
func (w *h2ResponseWriter) Write(p []byte) (int, error) {
	if err := w.beforeWrite(len(p)); err != nil {
		return 0, err
	}
	r := &w.r
	if !r.committed() && len(r.buf)+len(p) > r.collectLimit {
		w.sniff(r, p)
	}
	return r.write(p)
}

// WriteString is Write without a conversion.
func (w *h2ResponseWriter) WriteString(s string) (int, error) {
	if err := w.beforeWrite(len(s)); err != nil {
		return 0, err
	}
	r := &w.r
	if !r.committed() && len(r.buf)+len(s) > r.collectLimit {
		w.sniff(r, []byte(s))
	}
	return r.writeString(s)
}

func (w *h2ResponseWriter) beforeWrite(n int) error {
	if w.h2Response == nil {
		return errH2StreamClosed
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.bodyRefused(n)
}

// Flush sends the headers and what the body holds so far.
func (w *h2ResponseWriter) Flush() { w.FlushError() }

// FlushError is Flush, reporting a stream or connection that is gone.
func (w *h2ResponseWriter) FlushError() error {
	if err := w.beforeWrite(0); err != nil {
		return err
	}
	r := &w.r
	w.sniff(r, nil)
	return r.flush()
}

// SetReadDeadline is for http.ResponseController: past the deadline,
// reads of the request body fail with os.ErrDeadlineExceeded, as
// net/http's HTTP/2 server does. The zero time clears it. The handler's
// deadline replaces ReadStallTimeout, as on HTTP/1.1.
func (w *h2ResponseWriter) SetReadDeadline(t time.Time) error {
	return w.st.setReadDeadline(t)
}

// setReadDeadline is SetReadDeadline for both APIs.
func (st *h2Stream) setReadDeadline(t time.Time) error {
	st.sc.mu.Lock()
	st.readStall.off = true
	st.readStall.end()
	st.sc.mu.Unlock()
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

// finish completes the response after the handler returned.
func (w *h2ResponseWriter) finish() {
	if w.h2Response == nil {
		return
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	r := &w.r
	w.sniff(r, nil)
	w.setTrailers(r)
	r.h2Finish()
}

// ReadFrom copies src into the body (io.Copy finds it): a big file by
// reference to its mapped pages where it can (readFromFile), otherwise
// through a pooled buffer.
func (w *h2ResponseWriter) ReadFrom(src io.Reader) (int64, error) {
	if err := w.beforeWrite(0); err != nil {
		return 0, err
	}
	n, ok, err := w.readFromFile(src)
	if ok {
		return n, err
	}
	c, err := copyBody(writerOnly{w}, src) // the rest
	return n + c, err
}
