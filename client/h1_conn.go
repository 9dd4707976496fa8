package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// conn is one pooled HTTP/1.1 connection with its buffers. It is used by
// one request at a time, on that request's goroutine.
type conn struct {
	t   *Transport
	key connKey // the pool it belongs to
	nc  net.Conn
	// tlsState is the handshake's outcome on a TLS connection, shared by
	// its responses (Response.TLS), as net/http's transport does.
	tlsState *tls.ConnectionState

	rbuf []byte // read buffer; rbuf[r:w] is unread
	r, w int
	wbuf []byte

	resp wire.Response
	body wire.BodyDecoder // the response body in progress
	lim  wire.Limits

	idleSince time.Time
	idleTimer *time.Timer
	idleArmed bool // idleTimer is set to fire; guarded by t.mu

	counted bool        // holds one of its host's MaxConnsPerHost places (h1_pool.go)
	closed  atomic.Bool // close ran

	// For the liveness peek (h1_alive_unix.go), made on first use.
	raw    syscall.RawConn
	peekFn func(fd uintptr) bool
	peekOK bool

	reused   bool // taken from the pool for this request
	wrote    bool // a byte of the request was written
	gotBytes bool // a byte of the response arrived
	// trace is the request's httptrace hooks, if its context has them
	// (trace.go); nil otherwise, and between requests.
	trace *httptrace.ClientTrace
	// upload is the request body still being written on its own
	// goroutine when the response head came (h1_upload.go); the response's
	// end settles it.
	upload *upload

	// deadline ends the request in progress, body included
	// (Transport.Timeout, or an earlier deadline of its context); zero
	// for none. Every deadline set on the socket is clamped to it.
	deadline time.Time
	// rdl and wdl are the read and write deadlines this connection last
	// set on its socket (zero: none). A request that wants one at t
	// keeps one already in [t, t+slack] (see lazyDeadline): on a busy
	// connection deadlines move once per slack, not once per request.
	rdl, wdl time.Time
}

// deadlineSlack is how far past its Transport.Timeout (or its
// ResponseHeaderTimeout) a request's socket deadline may lie, as a
// fraction of that timeout.
const deadlineSlack = 64

// within reports whether have lies in [want, want+slack].
func within(have, want time.Time, slack time.Duration) bool {
	return !have.Before(want) && have.Sub(want) <= slack
}

const connBufSize = 4 << 10

func newConn(t *Transport, key connKey, nc net.Conn) *conn {
	c := &conn{t: t, key: key, nc: nc, rbuf: make([]byte, connBufSize), wbuf: make([]byte, 0, connBufSize)}
	if tc, ok := nc.(tlsConn); ok {
		st := tc.ConnectionState()
		c.tlsState = &st
	}
	c.lim = wire.DefaultLimits()
	if t.MaxResponseHeaderBytes > 0 {
		c.lim.MaxHeaderBytes = t.MaxResponseHeaderBytes
	} else {
		c.lim.MaxHeaderBytes = defaultMaxResponseHeaderBytes
	}
	c.lim.MaxRequestLineBytes = c.lim.MaxHeaderBytes
	c.lim.MaxHeaders = c.lim.MaxHeaderBytes / 4
	return c
}

// close closes c's socket, once, and gives its place under
// MaxConnsPerHost to the next request waiting for one.
func (c *conn) close() {
	if c.closed.Swap(true) {
		return
	}
	c.nc.Close()
	if c.counted {
		c.t.releasePlace(c.key)
	}
}

// interrupt wakes any I/O blocked on c; the request's context was canceled.
func (c *conn) interrupt() { c.nc.SetDeadline(aLongTimeAgo) }

// setReadDeadline sets the read deadline without losing a cancel: the
// context's AfterFunc may have set a past deadline just before, which this
// call would overwrite, so the context is checked after the change (the
// AfterFunc runs only once the context is done).
func (c *conn) setReadDeadline(ctx context.Context, t time.Time) error {
	if !c.deadline.IsZero() && (t.IsZero() || t.After(c.deadline)) {
		t = c.deadline
	}
	return c.putReadDeadline(ctx, t)
}

// putReadDeadline sets the socket's read deadline to t and then checks
// ctx (see setReadDeadline).
func (c *conn) putReadDeadline(ctx context.Context, t time.Time) error {
	c.nc.SetReadDeadline(t)
	c.rdl = t
	if err := ctx.Err(); err != nil {
		c.interrupt()
		return err
	}
	return nil
}

// lazyReadDeadline makes the socket's read deadline lie in [t, t+slack]
// (none for a zero t), moving it only when it lies outside, as
// setReadDeadline does.
func (c *conn) lazyReadDeadline(ctx context.Context, t time.Time, slack time.Duration) error {
	if t.IsZero() && c.rdl.IsZero() || !t.IsZero() && within(c.rdl, t, slack) {
		return nil
	}
	if !t.IsZero() {
		t = t.Add(slack)
	}
	return c.putReadDeadline(ctx, t)
}

// headerDeadline sets the read deadline for the response head:
// ResponseHeaderTimeout from now, or the request's deadline if that comes
// first. It reports whether the deadline differs from the body's, which
// the head's arrival must then restore.
func (c *conn) headerDeadline(ctx context.Context) (restore bool, err error) {
	rht := c.t.ResponseHeaderTimeout
	if t := time.Now().Add(rht); c.deadline.IsZero() || t.Before(c.deadline) {
		return true, c.lazyReadDeadline(ctx, t, rht/deadlineSlack)
	}
	return false, c.lazyReadDeadline(ctx, c.deadline, c.t.Timeout/deadlineSlack)
}

// clearDeadline takes a past request's deadline off the socket (a raw
// read, as alive's peek, fails at once past a deadline) and returns c.
func (c *conn) clearDeadline() *conn {
	if !c.rdl.IsZero() || !c.wdl.IsZero() {
		c.rdl, c.wdl = time.Time{}, time.Time{}
		c.nc.SetDeadline(time.Time{})
	}
	return c
}

// roundTrip writes req on c and reads the response head. On success the
// response body owns c until it is read to its end or closed.
func (c *conn) roundTrip(req *http.Request, ctx context.Context, deadline time.Time) (*http.Response, error) {
	// Deadlines first, then the cancel's watch: a cancel's past deadline
	// must not be overwritten.
	c.deadline = deadline
	if !deadline.IsZero() {
		// The whole exchange, body included, ends by then: writes and
		// reads carry it on the socket, and no timer runs per request.
		slack := c.t.Timeout / deadlineSlack
		wr := !within(c.wdl, deadline, slack)
		rd := c.t.ResponseHeaderTimeout <= 0 && !within(c.rdl, deadline, slack) // else headerDeadline sets it
		switch {
		case wr && rd:
			c.wdl, c.rdl = deadline.Add(slack), deadline.Add(slack)
			c.nc.SetDeadline(c.wdl)
		case wr:
			c.wdl = deadline.Add(slack)
			c.nc.SetWriteDeadline(c.wdl)
		case rd:
			c.rdl = deadline.Add(slack)
			c.nc.SetReadDeadline(c.rdl)
		}
	} else {
		if !c.wdl.IsZero() {
			c.wdl = time.Time{}
			c.nc.SetWriteDeadline(c.wdl)
		}
		if c.t.ResponseHeaderTimeout <= 0 && !c.rdl.IsZero() { // else headerDeadline sets it
			c.rdl = time.Time{}
			c.nc.SetReadDeadline(c.rdl)
		}
	}
	var stop func() bool
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		stop = context.AfterFunc(ctx, c.interrupt)
	}
	resp, err := c.exchange(req, ctx, stop)
	if err != nil {
		if stop != nil {
			stop()
		}
		return nil, c.mapError(ctx, err)
	}
	return resp, nil
}

// mapError turns the socket errors of an interrupted exchange into what
// net/http reports: the context's error, or a header timeout.
func (c *conn) mapError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if c.pastDeadline() {
			return errRequestTimeout
		}
		if c.t.ResponseHeaderTimeout > 0 {
			return errHeaderTimeout
		}
	}
	return err
}

// pastDeadline reports whether the request's overall deadline has come.
func (c *conn) pastDeadline() bool {
	return !c.deadline.IsZero() && !time.Now().Before(c.deadline)
}

// exchange writes the request and reads the response head.
func (c *conn) exchange(req *http.Request, ctx context.Context, stop func() bool) (*http.Response, error) {
	hasBody := req.Body != nil && req.Body != http.NoBody
	chunked := hasBody && req.ContentLength <= 0
	if len(req.TransferEncoding) > 0 {
		if len(req.TransferEncoding) != 1 || req.TransferEncoding[0] != "chunked" {
			return nil, fmt.Errorf("client: unsupported Transfer-Encoding %q", req.TransferEncoding)
		}
		chunked = hasBody
	}
	gzip := !c.t.DisableCompression && req.Method != http.MethodHead &&
		req.Header["Accept-Encoding"] == nil && req.Header["Range"] == nil
	c.wbuf = appendRequestHead(c.wbuf[:0], req, hasBody, chunked, gzip, c.t.DisableKeepAlives)
	trace := c.trace
	if trace != nil {
		traceHead(trace, c.wbuf)
	}

	expect := hasBody && headerHasToken(req.Header["Expect"], "100-continue")
	bodySent := !hasBody
	var up *upload // a streamed body, written while the response is read
	switch {
	case !hasBody || expect:
		_, err := c.write(c.wbuf)
		if trace != nil && (!hasBody || err != nil) {
			traceWroteRequest(trace, err)
		}
		if err != nil {
			return nil, err
		}
		if expect && trace != nil && trace.Wait100Continue != nil {
			trace.Wait100Continue()
		}
	case !inMemoryBody(req):
		if _, err := c.write(c.wbuf); err != nil {
			traceWroteRequest(trace, err)
			return nil, err
		}
		c.wbuf = c.wbuf[:0]
		up = c.startUpload(ctx, req, chunked)
		bodySent = true
	default:
		err := c.writeBody(req, chunked, false)
		traceWroteRequest(trace, err)
		if err != nil {
			if resp := c.earlyResponse(req, ctx, gzip, stop, err); resp != nil {
				return resp, nil
			}
			return nil, err
		}
		bodySent = true
	}

	timed := false // the read deadline is the head's, to restore once it is in
	if expect {
		wait := c.t.ExpectContinueTimeout
		if wait == 0 {
			wait = defaultExpectContinueTimeout
		}
		if wait > 0 {
			if err := c.setReadDeadline(ctx, time.Now().Add(wait)); err != nil {
				return nil, err
			}
			timed = true
		} else {
			c.wbuf = c.wbuf[:0] // the head is out
			err := c.writeBody(req, chunked, false)
			traceWroteRequest(trace, err)
			if err != nil {
				return nil, err
			}
			bodySent = true
		}
	}
	if (!expect || bodySent) && up == nil && c.t.ResponseHeaderTimeout > 0 {
		restore, err := c.headerDeadline(ctx)
		if err != nil {
			return nil, err
		}
		timed = timed || restore
	}

	// Read heads until a final one; a 100 releases a waiting body.
	var n int
	firstByte := trace != nil && trace.GotFirstResponseByte != nil
	for informational := 0; ; {
		if firstByte && c.w > c.r {
			firstByte = false
			trace.GotFirstResponseByte()
		}
		var err error
		n, err = c.resp.Parse(c.rbuf[c.r:c.w], &c.lim)
		if err == wire.ErrNeedMore {
			ferr := c.fill()
			if ferr == nil {
				continue
			}
			if up != nil {
				if err := up.failed(c); err != nil {
					return nil, err
				}
				return nil, ferr
			}
			if !bodySent && errors.Is(ferr, os.ErrDeadlineExceeded) && ctx.Err() == nil && !c.pastDeadline() {
				// No 100 Continue in time: send the body anyway.
				err := c.sendHeldBody(ctx, req, chunked)
				traceWroteRequest(trace, err)
				if err != nil {
					return nil, err
				}
				bodySent = true
				continue
			}
			return nil, ferr
		}
		if err != nil {
			if up != nil {
				up.failed(c)
			}
			return nil, c.malformed(err)
		}
		if c.resp.StatusCode >= 200 || c.resp.StatusCode == 101 {
			break
		}
		delivered := trace != nil && trace.Got1xxResponse != nil
		if trace != nil {
			if err := trace1xx(trace, c.resp.StatusCode, c.resp.Headers, !bodySent); err != nil {
				if up != nil {
					up.failed(c)
				}
				return nil, err
			}
		}
		c.r += n
		// 1xx heads handed to Got1xxResponse are the caller's to limit,
		// as in net/http; the others are capped.
		if informational++; !delivered && informational > maxInformational {
			if up != nil {
				up.failed(c)
			}
			return nil, errTooMany1xx
		}
		if c.resp.StatusCode == 100 && !bodySent {
			err := c.sendHeldBody(ctx, req, chunked)
			traceWroteRequest(trace, err)
			if err != nil {
				return nil, err
			}
			bodySent = true
		}
	}
	switched := c.resp.StatusCode == 101
	if switched && up != nil {
		up.failed(c)
		return nil, errors.New("client: 101 Switching Protocols while the request body was being sent")
	}
	streamFailed := false
	if up != nil {
		// The final head, maybe before the body ended: returned at once;
		// the response's end settles the upload (body.finish).
		done, err := up.headArrived()
		switch {
		case !done:
			c.upload = up
		case errors.Is(err, errRequestBody):
			// The caller's body broke: the request was never whole,
			// whatever the server made of its part.
			up.failed(c)
			return nil, err
		case err != nil:
			streamFailed = true // an early answer: the body was cut
		}
		if c.t.ResponseHeaderTimeout > 0 {
			c.rdl = aLongTimeAgo // the writer may have set the head's deadline
			timed = true
		}
	}
	if timed && !c.bodyBuffered(n, req.Method == http.MethodHead) {
		// The body's reads get the request's deadline back (a body read
		// whole from the buffer needs none: the next request sets its own).
		if err := c.lazyReadDeadline(ctx, c.deadline, c.t.Timeout/deadlineSlack); err != nil {
			return nil, err
		}
	}
	closing := streamFailed || switched || req.Close || c.t.DisableKeepAlives || c.resp.Close ||
		headerHasToken(req.Header["Connection"], "close")
	if !bodySent {
		// A final answer before 100 Continue. On a connection that goes
		// on, the server reads the body next: it is sent, as net/http
		// does. On one that closes it stays unsent.
		if closing {
			closeRequestBody(req)
			traceWroteRequest(trace, nil)
		} else {
			err := c.sendHeldBody(ctx, req, chunked)
			traceWroteRequest(trace, err)
			if err != nil {
				return nil, err
			}
			bodySent = true
		}
	}
	closeAfter := !bodySent || closing
	return c.newResponse(req, n, gzip, closeAfter, stop)
}

// malformed describes a response head the parser refused (err, a
// *wire.Error), in net/http's words where callers match them.
func (c *conn) malformed(err error) error {
	switch {
	case errors.Is(err, wire.ErrHeaderTooLarge):
		return fmt.Errorf("client: server response headers exceeded %d bytes; aborted (MaxResponseHeaderBytes): %w", c.lim.MaxHeaderBytes, err)
	case errors.Is(err, wire.ErrBadContentLength):
		if v, ok := headValue(c.rbuf[c.r:c.w], "content-length"); ok {
			return fmt.Errorf("client: malformed response from %s: bad Content-Length %q: %w", c.key.host, v, err)
		}
	}
	return fmt.Errorf("client: malformed response from %s: %w", c.key.host, err)
}

// headValue finds the first field name in a raw head, for an error
// message: its value, trimmed.
func headValue(head []byte, name string) (string, bool) {
	for _, line := range bytes.Split(head, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			return string(bytes.TrimSpace(v)), true
		}
		if len(bytes.TrimSpace(line)) == 0 {
			break
		}
	}
	return "", false
}

// bodyBuffered reports whether the body of the response whose head is
// the n bytes at rbuf[r:] is all in the buffer already.
func (c *conn) bodyBuffered(n int, head bool) bool {
	switch c.resp.Framing(head) {
	case wire.NoBody:
		return true
	case wire.LengthBody:
		return int64(c.w-c.r-n) >= c.resp.ContentLength
	}
	return false
}

// earlyResponse looks, after writing the body failed with werr, for a
// final response the server sent before it stopped reading (a 413 to an
// upload, say). net/http reads while it writes and returns that response;
// this Transport writes first, so it looks once the write has failed. The
// connection is not reused. It returns nil when there is none.
func (c *conn) earlyResponse(req *http.Request, ctx context.Context, gzip bool, stop func() bool, werr error) *http.Response {
	if errors.Is(werr, errRequestBody) || ctx.Err() != nil || c.setReadDeadline(ctx, time.Now().Add(time.Second)) != nil {
		return nil
	}
	for informational := 0; informational <= maxInformational; {
		n, err := c.resp.Parse(c.rbuf[c.r:c.w], &c.lim)
		switch {
		case err == wire.ErrNeedMore:
			if c.fill() != nil {
				return nil
			}
			continue
		case err != nil || c.resp.StatusCode == 101:
			return nil
		case c.resp.StatusCode < 200:
			c.r += n
			informational++
			continue
		}
		if c.setReadDeadline(ctx, time.Time{}) != nil {
			return nil
		}
		resp, err := c.newResponse(req, n, gzip, true, stop)
		if err != nil {
			return nil
		}
		return resp
	}
	return nil
}

// sendHeldBody writes a body held back for "Expect: 100-continue" and
// restores the header deadline.
func (c *conn) sendHeldBody(ctx context.Context, req *http.Request, chunked bool) error {
	c.wbuf = c.wbuf[:0]
	if err := c.setReadDeadline(ctx, time.Time{}); err != nil {
		return err
	}
	if err := c.writeBody(req, chunked, false); err != nil {
		return err
	}
	if c.t.ResponseHeaderTimeout > 0 {
		_, err := c.headerDeadline(ctx)
		return err
	}
	return nil
}

// writeBody appends the request body to what wbuf holds and writes it all,
// flushing whenever the buffer fills, or (stream) after each piece the
// body yields, so that a body fed by the far end never waits in the
// buffer. It closes req.Body. A big body takes the direct path
// (writeBodyDirect), a chunked one that writes itself (io.WriterTo) is
// framed as it writes (writeChunkedFrom), and any other chunked one that
// outgrows wbuf is framed in a pooled 32 KiB buffer.
func (c *conn) writeBody(req *http.Request, chunked, stream bool) error {
	defer req.Body.Close()
	if _, isFile := unwrapBody(req.Body).(*os.File); !chunked && (req.ContentLength >= bigBodyMin || isFile && req.ContentLength > 0) {
		// A file of any size goes by sendfile, as net/http's does.
		return c.writeBodyDirect(req, stream)
	}
	if wt, ok := req.Body.(io.WriterTo); ok && chunked {
		return c.writeChunkedFrom(wt, req.Trailer)
	}
	buf := c.wbuf
	var big *[chunkBufSize]byte
	defer func() {
		if big != nil {
			chunkBufs.Put(big)
		}
	}()
	var written int64
	for {
		if cap(buf)-len(buf) < 512 {
			if _, err := c.write(buf); err != nil {
				return err
			}
			if chunked && big == nil {
				big = chunkBufs.Get().(*[chunkBufSize]byte)
			}
			buf = buf[:0]
			if big != nil {
				buf = big[:0]
			}
		}
		room := buf[len(buf):cap(buf)]
		if chunked {
			room = room[10 : len(room)-2] // space for the size line and CRLF
		} else if left := req.ContentLength - written; int64(len(room)) > left {
			room = room[:left]
		}
		var n int
		var err error
		if len(room) > 0 {
			n, err = req.Body.Read(room)
		} else {
			// Content-Length reached: the body must end here.
			var one [1]byte
			n, err = req.Body.Read(one[:])
			if n > 0 {
				return bodyLonger(req.ContentLength)
			}
		}
		if n > 0 {
			if chunked {
				buf = wire.AppendChunk(buf, room[:n])
			} else {
				buf = buf[:len(buf)+n]
			}
			written += int64(n)
			// A streamed piece leaves now, but for the one that completes
			// a declared length: it waits for the body's end to be
			// confirmed, so that a body failing there fails the request
			// before the server has all of it (and can answer).
			if stream && err == nil && (chunked || written < req.ContentLength) {
				if _, err := c.write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return bodyError(err)
		}
	}
	if !chunked && written != req.ContentLength {
		return bodyShorter(req.ContentLength, written)
	}
	if chunked {
		buf = append(buf, "0\r\n"...)
		for k, vv := range req.Trailer {
			for _, v := range vv {
				buf = wire.AppendHeader(buf, k, []byte(v))
			}
		}
		buf = append(buf, "\r\n"...)
	}
	_, err := c.write(buf)
	if big == nil {
		c.wbuf = buf[:0] // kept if it grew
	}
	return err
}

// write writes b, noting that the request has begun to leave.
func (c *conn) write(b []byte) (int, error) {
	n, err := c.nc.Write(b)
	if n > 0 && !c.wrote { // read-only once set: a streamed body's writer calls this too
		c.wrote = true
	}
	return n, err
}

// fill reads more bytes into rbuf, compacting or growing it as needed.
func (c *conn) fill() error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	} else if c.w == len(c.rbuf) && c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.rbuf) {
		// A head longer than the buffer: grow toward the head limit
		// (Parse reports the limit once it is passed).
		bigger := make([]byte, 2*len(c.rbuf))
		copy(bigger, c.rbuf[:c.w])
		c.rbuf = bigger
	}
	n, err := c.nc.Read(c.rbuf[c.w:])
	c.w += n
	if n > 0 {
		c.gotBytes = true
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// appendRequestHead renders the request line and header fields as
// net/http's Transport does: Host, User-Agent (Go-http-client/1.1 unless
// set; omitted when set empty), the framing fields, Accept-Encoding when
// gzip is transparent, then req.Header.
func appendRequestHead(b []byte, req *http.Request, hasBody, chunked, gzip, closeConn bool) []byte {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	b = append(b, method...)
	b = append(b, ' ')
	b = appendRequestURI(b, req.URL)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	if req.Host != "" {
		b = append(b, req.Host...)
	} else {
		b = append(b, req.URL.Host...)
	}
	b = append(b, '\r', '\n')
	if ua, ok := req.Header["User-Agent"]; !ok {
		b = append(b, "User-Agent: Go-http-client/1.1\r\n"...)
	} else if len(ua) > 0 && ua[0] != "" {
		b = appendField(b, "User-Agent", ua[0])
	}
	switch {
	case chunked:
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
		if len(req.Trailer) > 0 {
			b = append(b, "Trailer: "...)
			first := true
			for k := range req.Trailer {
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, k...)
			}
			b = append(b, '\r', '\n')
		}
	case hasBody:
		b = wire.AppendContentLength(b, req.ContentLength)
	case req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch:
		b = append(b, "Content-Length: 0\r\n"...)
	}
	if closeConn || req.Close {
		if !headerHasToken(req.Header["Connection"], "close") {
			b = append(b, "Connection: close\r\n"...)
		}
	}
	if gzip {
		b = append(b, "Accept-Encoding: gzip\r\n"...)
	}
	for k, vv := range req.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		for _, v := range vv {
			b = appendField(b, k, v)
		}
	}
	return append(b, '\r', '\n')
}

func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ':', ' ')
	b = append(b, trimOWS(v)...)
	return append(b, '\r', '\n')
}

// canonicalKey returns the canonical form of a header name taken from the
// head string, without allocating when it already is canonical.
func canonicalKey(s string) string { return textproto.CanonicalMIMEHeaderKey(s) }
