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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

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
			for name := range listItems(vv) {
				w.trailerKeys = append(w.trailerKeys, http.CanonicalHeaderKey(name))
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
	if !wire.BodyAllowed(w.status) {
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
	if w.err == nil && wire.BodyAllowed(w.status) && len(w.buf)+len(s) <= cap(w.buf) &&
		(w.declared < 0 || w.written+int64(len(s)) <= w.declared) {
		w.written += int64(len(s))
		w.buf = append(w.buf, s...)
		return len(s), nil
	}
	return w.Write([]byte(s))
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
	if !w.sentHeader && !w.noLength && !w.headHas("Content-Length") && wire.BodyAllowed(w.status) && (len(w.buf) > 0 || !head) {
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
	if len(w.buf)+len(next) > 0 && wire.BodyAllowed(w.status) && !w.typeSet && w.headValue("Content-Encoding") == "" {
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
