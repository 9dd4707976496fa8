package client

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http/httptrace"
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
	// full: the last read from the socket filled all the room it was
	// given, so more may be waiting there (see settled).
	full bool
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
	c.lim.MaxHeaderBytes = t.maxResponseHeaderBytes()
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
	c.full = c.w == len(c.rbuf)
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

// settled reports, once a response has ended with nothing left in rbuf,
// that no byte past it is waiting either, so that c may serve another
// request. A server may send more right behind a response (a second,
// unasked one: a desync), in the same segment, and the next request
// would read it as its answer. net/http's reader goroutine sees such
// bytes at once and drops the connection; here they are looked for now.
// Under TLS the TLS layer may hold them (the rest of a record, or the
// next record, read with this one): they are read without waiting. In
// the socket they are looked for with one non-blocking peek, when the
// last read filled all its room (a body's last bytes read straight into
// the caller's buffer, capped at the body's end); a last read with room
// to spare took all there was.
func (c *conn) settled() bool {
	if c.tlsState != nil {
		// A past deadline fails only a read from the socket.
		c.r, c.w = 0, 0
		c.nc.SetReadDeadline(aLongTimeAgo)
		n, _ := c.nc.Read(c.rbuf)
		c.w = n
		c.rdl = time.Time{}
		c.nc.SetReadDeadline(c.rdl) // and the peek would fail past one
		if n > 0 {
			return false
		}
	}
	return !c.full || c.alive()
}
