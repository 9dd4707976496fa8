package server

import (
	"io"
	"os"
	"strconv"

	"github.com/hotpathhq/hotpath/wire"
)

// Ctx is one request and its response, for the native handler API. The
// server reuses a Ctx for every request on a connection, and for another
// connection's requests once this one goes idle: it must not be kept or
// used after the handler returns, and every []byte it returns is valid
// only until then (see the package doc).
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
	resp response

	// fullDuplex: the handler reads the body while it writes the
	// response (http.ResponseController.EnableFullDuplex), so an unread
	// body at commit time does not end the connection.
	fullDuplex bool

	// h2 is the HTTP/2 stream the request came on (hotpath's HTTP/2
	// engine, h2_native.go); nil on HTTP/1.1, where c is the connection.
	h2 *h2Stream
}

// streamThreshold is the body size past which a native response stops
// being collected and starts streaming.
const streamThreshold = 32 << 10

// Method returns the request method, e.g. "GET".
func (x *Ctx) Method() []byte { return x.req.Method }

// Target returns the request target as sent ("/path?query").
func (x *Ctx) Target() []byte { return x.req.Target }

// Path returns the request target without its query.
func (x *Ctx) Path() []byte { return x.req.Path() }

// Query returns the raw query, after '?', or nil.
func (x *Ctx) Query() []byte { return x.req.Query() }

// Proto returns "HTTP/1.1", "HTTP/1.0" or "HTTP/2.0".
func (x *Ctx) Proto() []byte { return x.req.Proto }

// Host returns the Host header.
func (x *Ctx) Host() []byte { return x.req.Host }

// RequestHeader returns the first request header named name (any case),
// or nil. The response's are set with SetHeader, AddHeader, DelHeader.
func (x *Ctx) RequestHeader(name string) []byte { return x.req.Header(name) }

// Request returns the parsed request head: every header in order of
// arrival, and the framing the parser decided. Read it, don't modify it.
func (x *Ctx) Request() *wire.Request { return &x.req }

// RequestContentLength returns the request's declared body length: 0
// for no body, -1 for a chunked body. The response's is set with
// SetContentLength.
func (x *Ctx) RequestContentLength() int64 { return x.req.ContentLength }

// SetStatus sets the response status code; the default is 200.
func (x *Ctx) SetStatus(code int) {
	if code < 100 || code > 999 {
		panic("server: invalid status code " + strconv.Itoa(code))
	}
	x.resp.status = code
}

// SetContentType sets the Content-Type header.
func (x *Ctx) SetContentType(v string) {
	x.resp.contentType = appendSanitized(x.resp.contentType[:0], v)
}

// SetHeader sets a response header, replacing any value it had. Names
// are sent as given; Content-Type, Content-Length, Connection and Date
// are understood, Transfer-Encoding is decided by the server and ignored.
// Names that are not tokens are dropped; control bytes in values are
// replaced by spaces so a value cannot split the response.
func (x *Ctx) SetHeader(name, value string) { x.resp.setHeader(name, value, nil, true) }

// SetHeaderBytes is SetHeader with the value as bytes; it copies them.
func (x *Ctx) SetHeaderBytes(name string, value []byte) { x.resp.setHeader(name, "", value, true) }

// AddHeader adds a response header value, keeping earlier ones (for
// Set-Cookie, Vary, …).
func (x *Ctx) AddHeader(name, value string) { x.resp.setHeader(name, value, nil, false) }

// DelHeader removes a response header set earlier.
func (x *Ctx) DelHeader(name string) { x.resp.delHeader(name) }

// SetTrailer adds a trailer field, sent after the body (gRPC's
// Grpc-Status is one). Called before the head is sent, it makes the body
// chunked so the trailer can follow it; after a head with a
// Content-Length, or on an HTTP/1.0 request, trailers cannot be sent and
// are dropped.
func (x *Ctx) SetTrailer(name, value string) { x.resp.setTrailer(name, value) }

// SetContentLength declares the body length before it is written. A body
// larger than the collection limit is then streamed with this length
// instead of chunked. Writing more is an error; writing less closes the
// connection after the response, since the client cannot tell where it
// ends.
func (x *Ctx) SetContentLength(n int64) {
	if !x.resp.committed() && n >= 0 {
		x.resp.declaredLen = n
	}
}

// SetConnectionClose makes the server close the connection after this
// response, which then carries "Connection: close". (On HTTP/2, where a
// connection carries other requests, it does nothing.)
func (x *Ctx) SetConnectionClose() { x.resp.wantClose = true }

// Write appends p to the response body.
func (x *Ctx) Write(p []byte) (int, error) { return x.resp.write(p) }

// WriteString is Write for a string, without converting it.
func (x *Ctx) WriteString(s string) (int, error) { return x.resp.writeString(s) }

// SendFile sends the next n bytes of f as the body, declaring
// Content-Length n if no length was set. On a TCP connection the head is
// sent and the file goes to the client with sendfile, inside the kernel.
// (io.Copy(c, f) goes through os.File's WriteTo, which hides the file
// from ReadFrom; io.CopyN and io.LimitReader do not.)
func (x *Ctx) SendFile(f *os.File, n int64) error {
	if x.resp.declaredLen < 0 && !x.resp.committed() {
		x.resp.declaredLen = n
	}
	_, err := x.ReadFrom(&io.LimitedReader{R: f, N: n})
	return err
}

// Flush sends the head and the body written so far. After Flush the
// response streams: chunked on HTTP/1.1 unless SetContentLength was
// called, delimited by closing the connection on HTTP/1.0.
func (x *Ctx) Flush() error { return x.resp.flush() }

// Error replaces the response with status and a plain-text message, if
// the head was not sent yet.
func (x *Ctx) Error(status int, msg string) {
	if x.resp.committed() {
		return
	}
	x.resp.clearHeaders()
	x.SetStatus(status)
	x.SetContentType("text/plain; charset=utf-8")
	x.WriteString(msg)
}

// isHead reports a HEAD request, whose response carries no body.
func (x *Ctx) isHead() bool { return string(x.req.Method) == "HEAD" }

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
