package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// responseWriter is the http.ResponseWriter handed to handlers: a face on
// the connection's response (response.go) that adds net/http's semantics
// (the header map taken at WriteHeader, implicit 200, Content-Type
// sniffing, trailers from the map). It is also an http.Flusher, an
// http.Hijacker, an io.ReaderFrom and an http.CloseNotifier, and answers
// http.ResponseController (FlushError, SetReadDeadline, SetWriteDeadline,
// EnableFullDuplex).
type responseWriter struct {
	a           *adapter
	hdr         http.Header
	wroteHeader bool
	// sniffType: at WriteHeader the header had no Content-Type (nor an
	// encoding): the body decides it, whatever the handler sets later,
	// as net/http's snapshot of the header at WriteHeader does.
	sniffType bool
	status    int
	trailers  []string // declared with the Trailer header
	closeCh   chan bool
	info      []respHeader // fields of a 1xx response, reused
}

func (w *responseWriter) reset() {
	clear(w.hdr)
	w.wroteHeader = false
	w.sniffType = false
	w.status = 0
	w.trailers = w.trailers[:0]
	w.closeCh = nil
}

// resp is the response this writer is a face on.
func (w *responseWriter) resp() *response { return &w.a.c.ctx.resp }

// Header returns the response header map.
func (w *responseWriter) Header() http.Header { return w.hdr }

// WriteHeader sends the status; the header map is taken as it is now.
func (w *responseWriter) WriteHeader(code int) {
	if w.a.c.hijacked {
		w.a.c.srv.logf("server: response.WriteHeader on hijacked connection")
		return
	}
	if w.wroteHeader {
		// Before the code's check, as net/http: a bad code after the
		// head went out is only superfluous, not a panic that cuts the
		// response.
		w.a.c.srv.logf("server: superfluous response.WriteHeader call (status %d after %d)", code, w.status)
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.writeInformational(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	w.resp().status = code
	w.sniffType = w.needsSniff()
	w.copyHeader()
}

// writeInformational sends a 1xx response (103 Early Hints) at once,
// with the header map's fields as they are now.
func (w *responseWriter) writeInformational(code int) {
	c := w.a.c
	n := 0
	for _, k := range w.sortedKeys() {
		if !wire.ValidHeaderName(k) { // net/http drops invalid names too
			continue
		}
		if k == "Content-Length" || k == "Transfer-Encoding" {
			continue // a 1xx has no body: net/http leaves these out too
		}
		for _, v := range w.hdr[k] {
			setSlot(&w.info, &n, k, v, nil, false)
		}
	}
	if c.canContinue.Load() {
		// A 100 Continue may still come after this 1xx: not at once.
		c.contMu.Lock()
		defer c.contMu.Unlock()
	}
	c.wbuf = w.resp().appendInformational(c.wbuf, code, w.info[:n])
	c.flush()
}

// sortedKeys returns the header keys in order, as net/http writes them.
func (w *responseWriter) sortedKeys() []string {
	keys := w.a.keys[:0]
	for k := range w.hdr {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.a.keys = keys
	return keys
}

// copyHeader moves the header map into the response's slots: net/http
// takes the map as it is at WriteHeader. Trailers (declared, or set under
// http.TrailerPrefix) make the body chunked so they can follow it.
func (w *responseWriter) copyHeader() {
	r := w.resp()
	for _, k := range w.sortedKeys() {
		vv := w.hdr[k]
		if strings.HasPrefix(k, http.TrailerPrefix) {
			r.forceChunked = true
			continue
		}
		switch k {
		case "Trailer":
			for name := range listItems(vv) {
				w.trailers = append(w.trailers, http.CanonicalHeaderKey(name))
			}
			r.forceChunked = r.forceChunked || len(w.trailers) > 0 // chunked, or close-delimited on HTTP/1.0
		case "Transfer-Encoding":
			// The handler chose the framing, as net/http lets it: the
			// body goes chunked (close-delimited on HTTP/1.0) with no
			// Content-Length, and codings other than chunked ("gzip")
			// are sent as given, before the server's own "chunked".
			// "identity" (no coding) leaves the framing to the server,
			// and the connection closes after the response; an empty
			// value is no Transfer-Encoding: both as on net/http.
			var codings []string
			for c := range listItems(vv) {
				codings = append(codings, c)
			}
			switch {
			case len(codings) == 0:
			case len(codings) == 1 && strings.EqualFold(codings[0], "identity"):
				r.wantClose = true
			default:
				r.forceChunked = true
				r.declaredLen = -1
				for _, coding := range codings {
					if !strings.EqualFold(coding, "chunked") && wire.ValidHeaderValue(coding) {
						setSlot(&r.hdrs, &r.nhdrs, k, coding, nil, false)
					}
				}
			}
			continue
		case "Date":
			// Set to nil, it suppresses the automatic Date (net/http's
			// documented way).
			r.hasDate = r.hasDate || len(vv) == 0
		case "Content-Length":
			// Set to nil, it suppresses the automatic length: the body
			// is framed otherwise, as net/http does.
			r.forceChunked = r.forceChunked || len(vv) == 0
		}
		for i, v := range vv {
			r.setHeader(k, v, nil, i == 0)
		}
	}
}

// setTrailers hands the trailers to the response when the handler
// returns, from the map as it is then (net/http's finalTrailers): the
// fields declared in Trailer and any set under http.TrailerPrefix, in
// sorted order. A response that did not stream chunked sends none.
func (w *responseWriter) setTrailers() {
	r := w.resp()
	if r.state != respChunked && !(r.state == respCollecting && r.forceChunked) {
		return
	}
	for _, k := range w.sortedKeys() {
		name, isPrefixed := strings.CutPrefix(k, http.TrailerPrefix)
		if !isPrefixed {
			if !slices.Contains(w.trailers, k) {
				continue
			}
			name = k
		}
		for _, v := range w.hdr[k] {
			r.setTrailer(name, v)
		}
	}
}

// Write writes body bytes, sending an implicit 200 first.
func (w *responseWriter) Write(p []byte) (int, error) {
	if err := w.beforeWrite(len(p)); err != nil {
		return 0, err
	}
	r := w.resp()
	if !r.committed() && len(r.buf)+len(p) > r.collectLimit {
		w.sniff(p)
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
		w.sniff([]byte(s))
	}
	return r.writeString(s)
}

func (w *responseWriter) beforeWrite(n int) error {
	if w.a.c.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if n > 0 && !wire.BodyAllowed(w.status) {
		return http.ErrBodyNotAllowed
	}
	return nil
}

// ReadFrom copies src into the body (io.Copy finds it), through one
// pooled buffer.
func (w *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	if err := w.beforeWrite(0); err != nil {
		return 0, err
	}
	var total int64
	r := w.resp()
	if r.declaredLen >= 0 && wire.BodyAllowed(w.status) && w.a.c.retryWrites {
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
				err = ErrBodyTooLong
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

// needsSniff reports whether the Content-Type is to be sniffed from the
// body (net/http's rule): none set, no Content-Encoding, no
// Transfer-Encoding.
func (w *responseWriter) needsSniff() bool {
	if _, ok := w.hdr["Content-Type"]; ok {
		return false
	}
	return w.hdr.Get("Content-Encoding") == "" && w.hdr.Get("Transfer-Encoding") == ""
}

// sniff sets Content-Type from the body when the handler set none and
// the head is about to be sent (net/http's rule).
func (w *responseWriter) sniff(p []byte) {
	r := w.resp()
	if r.committed() || !wire.BodyAllowed(w.status) || !w.sniffType {
		return
	}
	data := r.buf
	if len(data) == 0 {
		data = p
	}
	if len(data) > 0 {
		r.contentType = append(r.contentType[:0], http.DetectContentType(data)...)
	}
}

// finish completes the response after the handler returned.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sniff(nil)
	w.setTrailers()
}

// Flush sends what was written so far.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush with the error, for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if w.a.c.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sniff(nil)
	return w.resp().flush()
}

// SetWriteDeadline is for http.ResponseController: it replaces the
// server's write timeouts for the rest of this response.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	return w.a.c.ctx.SetWriteDeadline(t)
}

// SetReadDeadline is for http.ResponseController: it replaces the
// server's read timeouts for the rest of this request's body.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	c := w.a.c
	// The body may be read on another goroutine, arming its own
	// deadlines (armBodyRead): dlMu orders the two.
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	c.ownReadDeadline = true
	// A receive mark would keep bytes below it from waking a read that
	// has this deadline: none from here on (setMark checks under dlMu).
	c.dropMark()
	c.readDL = t
	return c.nc.SetReadDeadline(t)
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
	c := w.a.c
	if c.hijacked {
		return nil, nil, http.ErrHijacked
	}
	w.a.stopWatch()
	c.dropMark() // the new owner's reads wake as on any socket
	r := w.resp()
	if w.wroteHeader && !r.committed() {
		// As net/http: a status written before Hijack (a 101 for a
		// WebSocket upgrade) goes out first.
		r.commit()
	}
	c.noMoreContinue()
	if err := c.flush(); err != nil { // with earlier pipelined responses
		return nil, nil, err
	}
	c.hijacked = true
	c.nc.SetDeadline(time.Time{})
	pending := bytes.Clone(c.rbuf[c.r:c.w])
	c.r = c.w
	if c.hasPeeked {
		pending = append(pending, c.peeked)
		c.hasPeeked = false
	}
	br := bufio.NewReader(io.MultiReader(bytes.NewReader(pending), c.nc))
	bw := bufio.NewWriter(c.nc)
	c.setState(StateHijacked)
	c.srv.trackConn(c, false)
	c.untracked = true
	return c.nc, bufio.NewReadWriter(br, bw), nil
}
