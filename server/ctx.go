package server

import (
	"errors"
	"io"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// Ctx is one request and its response, for the native handler API. The
// server reuses a Ctx for every request on a connection: it must not be
// kept or used after the handler returns, and every []byte it returns is
// valid only until then (see the package doc).
//
// The response is collected until the handler returns, so its
// Content-Length is known and it leaves in the same write as the responses
// to other pipelined requests. A body larger than 32 KiB, or a call to
// Flush, switches to streaming: the head is sent, with chunked encoding
// unless SetContentLength was called first.
type Ctx struct {
	c    *conn
	req  wire.Request
	body bodyReader

	status      int
	contentType []byte
	hdrs        []respHeader
	nhdrs       int
	bodyBuf     []byte
	declaredLen int64 // from SetContentLength, -1 if not set
	closeConn   bool
	hasDate     bool

	ownWriteDeadline bool // the handler set the write deadline itself
	aborted          bool // the handler panicked after the head went out

	// collectLimit is how much body is collected before the response
	// streams: streamThreshold for the native API, net/http's 2 KiB for
	// http.Handlers so both engines frame responses alike.
	collectLimit int
	// forceChunked streams even a small body (declared trailers need it).
	forceChunked bool
	// appendTrailer, when set, ends a chunked body instead of LastChunk.
	appendTrailer func([]byte) []byte

	committed  bool  // the head is in the write buffer
	chunkedOut bool  // streaming with chunked encoding
	closeOut   bool  // streaming delimited by closing the connection
	sent       int64 // body bytes sent after commit
	writeErr   error
}

// respHeader is a reusable response header slot; value keeps its capacity
// from request to request, so setting a header does not allocate.
type respHeader struct {
	name  string
	value []byte
}

// streamThreshold is the body size past which a response stops being
// collected and starts streaming.
const streamThreshold = 32 << 10

// ErrBodyTooLong is returned by Write when a body exceeds the length
// declared with SetContentLength.
var ErrBodyTooLong = errors.New("server: write exceeds the declared Content-Length")

// Method returns the request method, e.g. "GET".
func (x *Ctx) Method() []byte { return x.req.Method }

// Target returns the request target as sent ("/path?query").
func (x *Ctx) Target() []byte { return x.req.Target }

// Path returns the request target without its query.
func (x *Ctx) Path() []byte { return x.req.Path() }

// Query returns the raw query, after '?', or nil.
func (x *Ctx) Query() []byte { return x.req.Query() }

// Proto returns "HTTP/1.1" or "HTTP/1.0".
func (x *Ctx) Proto() []byte { return x.req.Proto }

// Host returns the Host header.
func (x *Ctx) Host() []byte { return x.req.Host }

// Header returns the first request header named name (any case), or nil.
func (x *Ctx) Header(name string) []byte { return x.req.Header(name) }

// Request returns the parsed request head: every header in order of
// arrival, and the framing the parser decided. Read it, don't modify it.
func (x *Ctx) Request() *wire.Request { return &x.req }

// ContentLength returns the declared body length: 0 for no body, -1 for
// a chunked body.
func (x *Ctx) ContentLength() int64 { return x.req.ContentLength }

// Body returns the request body as a stream. It reads the body from the
// connection as it is consumed and never buffers it whole. A body that
// breaks the framing or exceeds MaxRequestBodyBytes returns a *wire.Error;
// the server then answers with that error's status (413 or 400) unless the
// response was already sent. Unread body bytes are discarded after the
// handler returns.
func (x *Ctx) Body() io.Reader { return &x.body }

// ReadBody appends the whole body to dst and returns it.
func (x *Ctx) ReadBody(dst []byte) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := x.body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// RemoteAddr returns the client's address.
func (x *Ctx) RemoteAddr() net.Addr { return x.c.nc.RemoteAddr() }

// LocalAddr returns the address the request arrived on.
func (x *Ctx) LocalAddr() net.Addr { return x.c.nc.LocalAddr() }

// SetStatus sets the response status code; the default is 200.
func (x *Ctx) SetStatus(code int) {
	if code < 100 || code > 999 {
		panic("server: invalid status code " + strconv.Itoa(code))
	}
	x.status = code
}

// SetContentType sets the Content-Type header.
func (x *Ctx) SetContentType(v string) { x.contentType = appendSanitized(x.contentType[:0], v) }

// SetHeader sets a response header, replacing any value it had. Names
// are sent as given; Content-Type, Content-Length, Connection and Date
// are understood, Transfer-Encoding is decided by the server and ignored.
// Names that are not tokens are dropped; control bytes in values are
// replaced by spaces so a value cannot split the response.
func (x *Ctx) SetHeader(name, value string) { x.setHeader(name, value, nil, true) }

// SetHeaderBytes is SetHeader with the value as bytes; it copies them.
func (x *Ctx) SetHeaderBytes(name string, value []byte) { x.setHeader(name, "", value, true) }

// AddHeader adds a response header value, keeping earlier ones (for
// Set-Cookie, Vary, …).
func (x *Ctx) AddHeader(name, value string) { x.setHeader(name, value, nil, false) }

// DelHeader removes a response header set earlier.
func (x *Ctx) DelHeader(name string) {
	switch {
	case equalFoldString(name, "Content-Type"):
		x.contentType = x.contentType[:0]
		return
	case equalFoldString(name, "Content-Length"):
		x.declaredLen = -1
		return
	}
	j := 0
	for i := 0; i < x.nhdrs; i++ {
		if !equalFoldString(x.hdrs[i].name, name) {
			x.hdrs[i], x.hdrs[j] = x.hdrs[j], x.hdrs[i]
			j++
		}
	}
	x.nhdrs = j
}

func (x *Ctx) setHeader(name, s string, b []byte, replace bool) {
	if x.committed || !wire.ValidHeaderName(name) {
		return
	}
	switch len(name) {
	case 4:
		if equalFoldString(name, "Date") {
			x.hasDate = true
		}
	case 10:
		if equalFoldString(name, "Connection") {
			if b != nil {
				s = string(b)
			}
			if hasTokenString(s, "close") {
				x.closeConn = true // written by appendHead
				return
			}
			// Other tokens ("Upgrade" on a 101) are sent as given.
		}
	case 12:
		if equalFoldString(name, "Content-Type") {
			x.contentType = appendSanitized(x.contentType[:0], s)
			x.contentType = appendSanitized(x.contentType, b)
			return
		}
	case 14:
		if equalFoldString(name, "Content-Length") {
			var n int64
			var err error
			if b != nil {
				n, err = parseLength(b)
			} else {
				n, err = parseLength(s)
			}
			if err == nil {
				x.declaredLen = n
			}
			return
		}
	case 17:
		if equalFoldString(name, "Transfer-Encoding") {
			return
		}
	}
	if replace {
		for i := 0; i < x.nhdrs; i++ {
			if equalFoldString(x.hdrs[i].name, name) {
				h := &x.hdrs[i]
				h.value = appendSanitized(appendSanitized(h.value[:0], s), b)
				return
			}
		}
	}
	if x.nhdrs == len(x.hdrs) {
		x.hdrs = append(x.hdrs, respHeader{})
	}
	h := &x.hdrs[x.nhdrs]
	x.nhdrs++
	h.name = name
	h.value = appendSanitized(appendSanitized(h.value[:0], s), b)
}

// SetContentLength declares the body length before it is written. A body
// larger than the collection limit is then streamed with this length
// instead of chunked. Writing more is an error; writing less closes the
// connection after the response, since the client cannot tell where it
// ends.
func (x *Ctx) SetContentLength(n int64) {
	if !x.committed && n >= 0 {
		x.declaredLen = n
	}
}

// SetConnectionClose makes the server close the connection after this
// response, which then carries "Connection: close".
func (x *Ctx) SetConnectionClose() { x.closeConn = true }

// Write appends p to the response body.
func (x *Ctx) Write(p []byte) (int, error) {
	if x.writeErr != nil {
		return 0, x.writeErr
	}
	if !x.committed {
		if len(x.bodyBuf)+len(p) <= x.collectLimit &&
			(x.declaredLen < 0 || int64(len(x.bodyBuf)+len(p)) <= x.declaredLen) {
			x.bodyBuf = append(x.bodyBuf, p...)
			return len(p), nil
		}
		if err := x.commitStreaming(); err != nil {
			return 0, err
		}
	}
	return x.writeStreaming(p)
}

// WriteString is Write for a string, without converting it.
func (x *Ctx) WriteString(s string) (int, error) {
	if !x.committed && len(x.bodyBuf)+len(s) <= x.collectLimit &&
		(x.declaredLen < 0 || int64(len(x.bodyBuf)+len(s)) <= x.declaredLen) && x.writeErr == nil {
		x.bodyBuf = append(x.bodyBuf, s...)
		return len(s), nil
	}
	return x.Write([]byte(s))
}

// Flush sends the head and the body written so far. After Flush the
// response streams: chunked on HTTP/1.1 unless SetContentLength was
// called, delimited by closing the connection on HTTP/1.0.
func (x *Ctx) Flush() error {
	if x.writeErr != nil {
		return x.writeErr
	}
	if !x.committed {
		if err := x.commitStreaming(); err != nil {
			return err
		}
	}
	if err := x.c.flush(); err != nil {
		x.writeErr = err
	}
	return x.writeErr
}

// SetWriteDeadline replaces Server.WriteTimeout for the rest of this
// response: a long stream (server-sent events, a large download) extends
// it as it goes; the zero time means no deadline. The next request on the
// connection is back under WriteTimeout.
func (x *Ctx) SetWriteDeadline(t time.Time) error {
	x.ownWriteDeadline = true
	x.c.writeDL = t
	return x.c.nc.SetWriteDeadline(t)
}

// Error replaces the response with status and a plain-text message, if
// the head was not sent yet.
func (x *Ctx) Error(status int, msg string) {
	if x.committed {
		return
	}
	x.resetResponse()
	x.SetStatus(status)
	x.SetContentType("text/plain; charset=utf-8")
	x.WriteString(msg)
}

// resetResponse clears the response state for the next request.
func (x *Ctx) resetResponse() {
	x.status = 200
	x.contentType = x.contentType[:0]
	x.nhdrs = 0
	x.bodyBuf = x.bodyBuf[:0]
	x.declaredLen = -1
	x.closeConn = false
	x.hasDate = false
	x.committed, x.chunkedOut, x.closeOut = false, false, false
	x.sent = 0
	x.writeErr = nil
	x.forceChunked = false
	x.appendTrailer = nil
	x.aborted = false
	if x.ownWriteDeadline {
		x.ownWriteDeadline = false
		x.c.writeDL = time.Time{} // makes the next flush re-arm WriteTimeout
	}
}

// isHead reports a HEAD request, whose response carries no body.
func (x *Ctx) isHead() bool { return string(x.req.Method) == "HEAD" }

// appendHead appends the status line and headers. bodyLen is the
// Content-Length to send, or -1 when the body streams.
func (x *Ctx) appendHead(b []byte, bodyLen int64) []byte {
	c := x.c
	b = wire.AppendStatusLine(b, x.status)
	if !x.hasDate {
		b = append(b, "Date: "...)
		b = appendDate(b, c.now)
		b = append(b, '\r', '\n')
	}
	if len(x.contentType) > 0 {
		b = append(b, "Content-Type: "...)
		b = append(b, x.contentType...)
		b = append(b, '\r', '\n')
	}
	for i := 0; i < x.nhdrs; i++ {
		b = wire.AppendHeader(b, x.hdrs[i].name, x.hdrs[i].value)
	}
	switch {
	case x.status < 200 || x.status == 204:
		// No body and no Content-Length (RFC 9110 §8.6).
	case x.status == 304 && x.declaredLen < 0:
	case bodyLen < 0 && x.isHead():
		// A HEAD response whose length is unknown says nothing about
		// framing; there is no body to frame (net/http does the same).
	case bodyLen >= 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, bodyLen, 10)
		b = append(b, '\r', '\n')
	case x.req.ProtoMinor == 1:
		x.chunkedOut = true
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	default:
		x.closeOut = true
		c.closing = true
	}
	if c.closing {
		b = append(b, "Connection: close\r\n"...)
	} else if x.req.ProtoMinor == 0 {
		b = append(b, "Connection: keep-alive\r\n"...)
	}
	return append(b, '\r', '\n')
}

// decideClose folds everything that ends the connection after this
// response into c.closing, before the head is written.
func (x *Ctx) decideClose() {
	c := x.c
	if x.closeConn || x.req.Close || c.srv.shutting.Load() ||
		(c.cfg.maxRequests > 0 && c.requests >= c.cfg.maxRequests) ||
		(x.req.Expect100 && !x.body.continueSent && !x.body.done) {
		c.closing = true
	}
}

// commitStreaming writes the head for a streamed body and moves the body
// collected so far behind it.
func (x *Ctx) commitStreaming() error {
	x.decideClose()
	bodyLen := x.declaredLen
	if x.isHead() || !wire.BodyAllowed(x.status) {
		bodyLen = max(bodyLen, -1)
	}
	x.c.wbuf = x.appendHead(x.c.wbuf, bodyLen)
	x.committed = true
	pending := x.bodyBuf
	x.bodyBuf = x.bodyBuf[:0]
	if len(pending) > 0 {
		_, err := x.writeStreaming(pending)
		return err
	}
	return nil
}

// writeStreaming sends p as body after the head was committed.
func (x *Ctx) writeStreaming(p []byte) (int, error) {
	c := x.c
	if x.isHead() || !wire.BodyAllowed(x.status) {
		return len(p), nil
	}
	if x.declaredLen >= 0 && x.sent+int64(len(p)) > x.declaredLen {
		return 0, ErrBodyTooLong
	}
	if len(p) == 0 {
		return 0, nil
	}
	if x.chunkedOut {
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
	}
	// Copy through the write buffer, flushing as it fills, rather than
	// handing p to the socket: p then never escapes, so handlers can write
	// from stack buffers without allocating.
	n := len(p)
	for len(p) > 0 {
		room := flushThreshold - len(c.wbuf)
		if room <= 0 {
			if err := c.flush(); err != nil {
				x.writeErr = err
				return 0, err
			}
			continue
		}
		k := min(room, len(p))
		c.wbuf = append(c.wbuf, p[:k]...)
		p = p[k:]
	}
	if x.chunkedOut {
		c.wbuf = wire.AppendChunkEnd(c.wbuf)
	}
	x.sent += int64(n)
	return n, nil
}

// finishResponse completes the response after the handler returned.
func (x *Ctx) finishResponse() {
	c := x.c
	if x.aborted {
		return
	}
	if x.body.err != nil && !x.committed {
		var we *wire.Error
		if errors.As(x.body.err, &we) {
			x.resetResponse()
			c.writeError(we.Status, we.Reason)
			return
		}
	}
	if x.forceChunked && !x.committed {
		x.commitStreaming()
	}
	if !x.committed {
		x.decideClose()
		n := int64(len(x.bodyBuf))
		if n == 0 && x.declaredLen < 0 && x.isHead() && x.c.handler != nil {
			n = -1 // net/http sends no length for a HEAD answered with no body
		}
		if x.declaredLen >= 0 {
			if n < x.declaredLen && !x.isHead() && wire.BodyAllowed(x.status) {
				// A short body keeps its declared length and ends with the
				// connection, as in net/http: the client must see the
				// truncation, not a smaller "complete" response.
				c.closing = true
			}
			n = x.declaredLen
		}
		c.wbuf = x.appendHead(c.wbuf, n)
		if !x.isHead() && wire.BodyAllowed(x.status) {
			c.wbuf = append(c.wbuf, x.bodyBuf...)
		}
		x.committed = true
		return
	}
	switch {
	case x.chunkedOut && x.appendTrailer != nil:
		c.wbuf = x.appendTrailer(c.wbuf)
	case x.chunkedOut:
		c.wbuf = append(c.wbuf, wire.LastChunk...)
	case x.declaredLen >= 0 && x.sent < x.declaredLen && !x.isHead() && wire.BodyAllowed(x.status):
		c.closing = true
	}
}

// serveRequest runs the handler for the parsed request and queues its
// response.
func (c *conn) serveRequest() {
	x := &c.ctx
	c.requests++
	x.resetResponse()
	x.body.reset(&x.req)
	x.callHandler()
	if c.hijacked {
		return
	}
	x.finishResponse()
	if !x.body.finish() {
		c.closing = true
	}
}

// callHandler runs the native handler, turning a panic into a logged 500
// and a closed connection, as net/http does.
func (x *Ctx) callHandler() {
	defer func() {
		if err := recover(); err != nil {
			x.c.closing = true
			if x.c.hijacked {
				return
			}
			if err != http.ErrAbortHandler {
				x.c.srv.logf("server: panic serving %v: %v\n%s", x.c.nc.RemoteAddr(), err, debug.Stack())
			}
			if !x.committed {
				x.resetResponse()
				x.c.writeError(500, "handler panicked")
				x.committed = true
			} else {
				// The head and part of the body are out: end the response
				// by closing, never with a last chunk that would make the
				// truncated body read as complete (net/http aborts too).
				x.aborted = true
			}
		}
	}()
	if h := x.c.handler; h != nil {
		h.serveHTTP()
		return
	}
	x.c.srv.Native(x)
}

// appendSanitized appends v, replacing bytes that may not appear in a
// header value (CR, LF, other controls) with spaces.
func appendSanitized[T string | []byte](dst []byte, v T) []byte {
	if wire.ValidHeaderValue(v) {
		return append(dst, v...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 0x20 && c != '\t') || c == 0x7f {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

func equalFoldString(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func hasTokenString(v, token string) bool {
	for len(v) > 0 {
		var part string
		if i := indexByteString(v, ','); i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			part, v = v, ""
		}
		for len(part) > 0 && (part[0] == ' ' || part[0] == '\t') {
			part = part[1:]
		}
		for len(part) > 0 && (part[len(part)-1] == ' ' || part[len(part)-1] == '\t') {
			part = part[:len(part)-1]
		}
		if equalFoldString(part, token) {
			return true
		}
	}
	return false
}

func indexByteString(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func parseLength[T string | []byte](v T) (int64, error) {
	if len(v) == 0 || len(v) > 18 {
		return 0, errBadLength
	}
	var n int64
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errBadLength
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n, nil
}

var errBadLength = errors.New("server: invalid Content-Length")
