package server

// HTTP/1.1 engine: reading: filling the read buffer, request heads
// (and HTTP/2's preface for an http.Handler), read deadlines.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// fill reads more input into rbuf[w:], which must have room. A read
// interrupted by Shutdown is retried if a request is in progress, and
// reported as errInterrupted if the connection was idle.
func (c *conn) fill() error {
	// Responses to earlier pipelined requests must not wait behind a read
	// that may block: the client may be waiting for them before it sends
	// the rest.
	if len(c.wbuf) > 0 {
		if err := c.flush(); err != nil {
			return err
		}
	}
	return c.readMore()
}

// readMore is fill without the flush, for request bodies: a body may be
// read by a goroutine other than the one writing the response (a
// ReverseProxy's transport), so it must not touch the write buffer; like
// net/http, output written but not flushed waits for the handler's Flush.
func (c *conn) readMore() error {
	for {
		err := c.fillOnce()
		if err == nil {
			return nil
		}
		if c.interrupted.Load() && isTimeout(err) {
			c.interrupted.Store(false)
			if st := ConnState(c.state.Load()); st == StateIdle || st == StateNew {
				return errInterrupted // waiting between requests: nothing in hand
			}
			c.dlMu.Lock() // the body may be read on another goroutine than the handler's
			c.nc.SetReadDeadline(c.readDL)
			c.dlMu.Unlock()
			continue
		}
		return err
	}
}

func (c *conn) fillOnce() error {
	if c.hasPeeked {
		c.acquire()
		c.rbuf[c.w] = c.peeked
		c.w++
		c.hasPeeked = false
		return nil
	}
	if c.set == nil && c.raw == nil {
		// An idle TLS connection waits for one byte with no buffer of
		// ours (the raw socket under TLS cannot be waited on: the TLS
		// layer may hold decrypted bytes), then takes its buffers.
		n, err := c.nc.Read(c.peekBuf[:])
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return err
		}
		c.acquire()
		c.rbuf[c.w] = c.peekBuf[0]
		c.w++
		return nil
	}
	if c.raw != nil {
		if err := c.raw.Read(c.rawFn); err != nil {
			return err
		}
		err := c.rawErr
		c.rawErr = nil
		return err
	}
	for {
		n, err := c.nc.Read(c.rbuf[c.w:])
		c.w += n
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// renewReadDeadline sets the read deadline to now+d unless the one in
// force is already within d/8 of it. Skipping small renewals keeps
// runtime timer updates off the per-request path.
func (c *conn) renewReadDeadline(now time.Time, d time.Duration) {
	if c.readRenewFor == d && now.Before(c.readRenewAt) {
		return // the test below, worked out when the deadline was set
	}
	want := now.Add(d)
	if c.readDL.IsZero() || want.Sub(c.readDL) > d/8 || c.readDL.After(want) || c.bodyDL {
		c.bodyDL = false
		c.readDL = want
		c.nc.SetReadDeadline(want)
		c.readRenewFor, c.readRenewAt = d, now.Add(d/8)
	}
}

// setReadDeadline sets an exact read deadline.
func (c *conn) setReadDeadline(t time.Time) {
	c.bodyDL = false
	c.readDL, c.readRenewFor = t, 0
	c.nc.SetReadDeadline(t)
}

// armBodyRead sets the read deadline before reading more of a request
// body: ReadStallTimeout from now (time without progress, as nginx's
// client_body_timeout), never past the absolute ReadTimeout counted from
// the start of the head, unless the handler set its own deadline.
func (c *conn) armBodyRead(now time.Time) {
	c.dlMu.Lock() // the handler may set its own read deadline meanwhile
	defer c.dlMu.Unlock()
	if c.ownReadDeadline {
		return
	}
	cfg := c.cfg
	var want time.Time
	var slack time.Duration
	if d := cfg.readStall; d > 0 {
		want, slack = now.Add(d), d/8
	}
	if d := cfg.readTimeout; d > 0 {
		if abs := c.headStart.Add(d); want.IsZero() || abs.Before(want) {
			want, slack = abs, 0
		}
	}
	if want.IsZero() {
		if !c.readDL.IsZero() {
			c.setReadDeadline(time.Time{})
		}
		return
	}
	// A body deadline already in force is kept while it is within slack
	// of want, or later than want under a stall timeout alone: it was
	// armed from a later clock reading and is still within one stall
	// period of now. Any other deadline (idle, head) is replaced.
	if c.bodyDL && (want.Sub(c.readDL) <= slack && (cfg.readTimeout <= 0 || !c.readDL.After(want))) {
		return
	}
	c.setReadDeadline(want)
	c.bodyDL = true
}

// priPreface is the start of HTTP/2's connection preface: as a request
// line, "PRI * HTTP/2.0" with no fields.
const priPreface = "PRI * HTTP/2.0\r\n\r\n"

// priHandOver passes HTTP/2's preface to an http.Handler as a "PRI *"
// request, as net/http does when it does not serve cleartext HTTP/2
// itself: a handler such as x/net/http2/h2c's hijacks the connection and
// reads the rest of the preface ("SM\r\n\r\n") from the hijacked reader.
// Anything else in HTTP/2.0 stays a 505.
func (c *conn) priHandOver() bool {
	if c.handler == nil || c.requests != 0 || !bytes.HasPrefix(c.rbuf[c.r:c.w], []byte(priPreface)) {
		return false
	}
	req := &c.ctx.req
	req.Reset()
	pri := c.rbuf[c.r : c.r+len(priPreface)]
	req.Method, req.Target, req.Proto = pri[:3], pri[4:5], pri[6:14]
	req.Close = true
	c.r += len(priPreface)
	c.bodyBase = c.r
	c.startResponse(time.Now())
	return true
}

// priPartial reports whether an http.Handler connection has so far
// received a strict prefix of priPreface: the parser can tell the version
// before the head ends, and the hand-over must not depend on how the
// preface was split across reads.
func (c *conn) priPartial() bool {
	b := c.rbuf[c.r:c.w]
	return c.handler != nil && c.requests == 0 && len(b) < len(priPreface) && bytes.HasPrefix([]byte(priPreface), b)
}

// readHead parses the next request head out of rbuf, reading more as
// needed. A head that arrives in pieces is only re-parsed once its end
// has arrived (or it is past a limit), so a trickled head costs O(n).
func (c *conn) readHead() error {
	lim := &c.cfg.limits
	scanned := c.r
	headerDeadline, sawLF := false, false
	if c.cfg.readTimeout > 0 {
		c.headStart = time.Now()
	}
	for {
		n, err := c.ctx.req.Parse(c.rbuf[c.r:c.w], lim)
		if err == nil {
			c.r += n
			c.bodyBase = c.r
			c.startResponse(time.Now())
			return nil
		}
		if err == wire.ErrVersionUnsupported {
			if c.priHandOver() {
				return nil
			}
			if c.priPartial() {
				err = wire.ErrNeedMore // the preface's last bytes are still on their way
			}
		}
		if err != wire.ErrNeedMore {
			return err
		}
		if !headerDeadline && (c.cfg.readHeaderTimeout > 0 || c.cfg.readTimeout > 0) {
			headerDeadline = true
			d := c.cfg.readHeaderTimeout
			if rt := c.cfg.readTimeout; rt > 0 && (d <= 0 || rt < d) {
				d = rt
			}
			// A connection's first head counts from the accept, as on
			// net/http: a client that waits before its first byte gets
			// no more time for the rest. Later heads count from their
			// first byte (the wait before it is IdleTimeout's); over TLS,
			// from the end of the handshake.
			start := time.Now()
			if c.requests == 0 && !c.isTLS {
				start = c.accepted()
			}
			c.setReadDeadline(start.Add(d))
		}
		for {
			if c.w == len(c.rbuf) {
				scanned -= c.r
				c.makeHeadRoom(lim)
			}
			if err := c.fill(); err != nil {
				return err
			}
			from := max(c.r, scanned-2)
			scanned = c.w
			if !sawLF && bytes.IndexByte(c.rbuf[from:c.w], '\n') >= 0 {
				sawLF = true
			}
			if headEnded(c.rbuf[from:c.w]) || c.w-c.r > lim.MaxHeaderBytes ||
				!sawLF && c.w-c.r > lim.MaxRequestLineBytes+2 {
				break
			}
		}
	}
}

// headEnded reports whether b contains the empty line that ends a head.
func headEnded(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 || i+1 >= len(b) {
			return false
		}
		b = b[i+1:]
		if b[0] == '\n' || (b[0] == '\r' && len(b) > 1 && b[1] == '\n') {
			return true
		}
	}
}

// makeHeadRoom makes room at the end of rbuf for more of a request head:
// it moves the unread bytes to the front, or grows the buffer up to what
// the limits allow (past that, Parse reports the limit).
func (c *conn) makeHeadRoom(lim *wire.Limits) {
	if c.r > 0 {
		c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
		c.r = 0
		return
	}
	limit := lim.MaxHeaderBytes + 64
	if len(c.rbuf) >= limit {
		// Full and still no complete head: Parse will report the limit.
		// Keep a byte of room so fill never reads into an empty slice.
		nb := make([]byte, len(c.rbuf)+1)
		copy(nb, c.rbuf[:c.w])
		c.rbuf = nb
		return
	}
	nb := make([]byte, min(2*len(c.rbuf), limit))
	copy(nb, c.rbuf[:c.w])
	c.rbuf = nb
}

// fillBody reads more body input without disturbing the request head at
// rbuf[:bodyBase], which the handler's slices point into.
func (c *conn) fillBody() error {
	c.dropMark() // only readDirect's large reads wait for a mark
	if c.r == c.w {
		c.r, c.w = c.bodyBase, c.bodyBase
	}
	if c.w == len(c.rbuf) {
		if c.r > c.bodyBase {
			n := copy(c.rbuf[c.bodyBase:], c.rbuf[c.r:c.w])
			c.r, c.w = c.bodyBase, c.bodyBase+n
		}
		if c.w == len(c.rbuf) {
			// The head fills the buffer: continue in a private one. The
			// old buffer stays untouched under the head until idle.
			nb := make([]byte, max(2*(c.w-c.r), blockSize))
			n := copy(nb, c.rbuf[c.r:c.w])
			c.rbuf, c.r, c.w, c.bodyBase = nb, 0, n, 0
		}
	}
	c.armBodyRead(time.Now())
	err := c.readMore()
	if err == io.EOF {
		return wire.ErrUnexpectedEOF
	}
	return err
}

// reasonFor is the text of an error response: what was wrong and, for a
// limit, the setting that decides it.
func (c *conn) reasonFor(we *wire.Error) string {
	lim := &c.cfg.limits
	switch we {
	case wire.ErrRequestLineTooLong:
		return "request line exceeds Server.MaxRequestLineBytes (" + strconv.Itoa(lim.MaxRequestLineBytes) + ")"
	case wire.ErrHeaderTooLarge:
		return "request head exceeds Server.MaxHeaderBytes (" + strconv.Itoa(lim.MaxHeaderBytes) + ")"
	case wire.ErrTooManyHeaders:
		return "more than Server.MaxHeaderCount (" + strconv.Itoa(lim.MaxHeaders) + ") header fields"
	case wire.ErrTooManyTrailers:
		return "more than Server.MaxHeaderCount (" + strconv.Itoa(lim.MaxHeaders) + ") request trailer fields"
	case wire.ErrTrailerTooLarge:
		return trailersTooLargeText(c.cfg.trailerBytes())
	case wire.ErrBodyTooLarge:
		return "request body exceeds Server.MaxRequestBodyBytes (" + strconv.FormatInt(lim.MaxBodyBytes, 10) + ")"
	}
	return we.Reason
}
