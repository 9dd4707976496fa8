package server

// HTTP/1.1 engine: the connection (conn): its buffers, its serve loop
// (wait, read a head, serve, finish), and how it ends (lingering close).
// Reading is in h1_read.go, writing and its stall timeout in h1_write.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// bufs is the working memory of a connection with a request in hand: the
// read buffer the request head is parsed in place from, the write buffer
// responses are batched in, and the buffer a response body is collected in
// until its length is known. Sets come from a pool and go back to it when
// the connection goes idle.
type bufs struct {
	r, w, b block
}

var bufPool = newBufPool()

// conn is one client connection. Only its own goroutine touches it, except
// for state and interrupted, which Shutdown reads and sets.
//
// The read buffer holds unread input in rbuf[r:w]. While a handler runs,
// rbuf[:bodyBase] holds the request head that the Ctx's slices point into;
// nothing may move those bytes until the handler returns.
type conn struct {
	srv     *Server
	cfg     *config
	nc      net.Conn
	tcp     *net.TCPConn    // nc, when it is one: writes through it keep their buffer off the heap
	raw     syscall.RawConn // non-nil when idle waits can run without a buffer
	rawFn   func(fd uintptr) bool
	created time.Time
	// flushes counts the writes of wbuf to the socket: what a response
	// appended to wbuf is still there while it has not moved.
	flushes uint32

	state       atomic.Int32 // a ConnState
	interrupted atomic.Bool  // Shutdown moved the read deadline to wake us
	quiet       atomic.Bool  // in Shutdown's quiet period (lastChance): not to be interrupted
	lingering   atomic.Int32 // lingerNo, lingerOn (in lingerClose) or lingerCut (by Shutdown)
	// The request's "Expect: 100-continue" may still be answered: the
	// body's first read sends 100 Continue, maybe on a goroutine of the
	// handler's own, so the 100 and the response's head go to the
	// write buffer under contMu while it is set (see sendContinue).
	canContinue atomic.Bool
	contMu      sync.Mutex

	set      *bufs       // nil while idle on the raw path
	setHeld  atomic.Bool // mirrors set != nil for observers (tests, Shutdown)
	rbuf     []byte
	r, w     int
	bodyBase int
	wbuf     []byte

	// retryWrites: a write that timed out may be retried (not TLS,
	// whose state a write timeout corrupts).
	retryWrites bool
	isTLS       bool
	peekBuf     [1]byte // the first byte of a request on an idle TLS connection

	rawErr error // error seen by the last raw read

	readDL, writeDL time.Time  // deadlines currently set, for lazy renewal
	now             time.Time  // taken once per request, when its head is parsed
	headStart       time.Time  // when the head began arriving (only with an absolute ReadTimeout)
	ownReadDeadline bool       // the handler set a read deadline itself (ResponseController)
	dlMu            sync.Mutex // orders a body read on another goroutine with the handler's SetReadDeadline
	bodyDL          bool       // readDL was armed by armBodyRead
	mark            rcvMark    // a big upload's receive low-water mark (rcvmark.go)

	// A response's write progress, for WriteStallTimeout (stallRetry):
	// movedAt is a clock reading no earlier than the last time bytes were
	// known to go to the socket (or a write began); moved says bytes moved
	// after it, at a time no clock was read; watchWrites (set once a
	// deadline expired during the response) has each write read the clock
	// as it begins (startWrite), so that movedAt stays exact while the
	// client is slow.
	movedAt     time.Time
	moved       bool
	watchWrites bool

	// A byte the TLS disconnect watcher read: the start of the next
	// request, which fill hands out first.
	peeked    byte
	hasPeeked bool

	requests  int
	closing   bool // close once the current response is written
	hijacked  bool // the handler took the connection over
	untracked bool // no longer in srv.conns (hijacked)
	ctx       Ctx
	handler   *adapter // the http.Handler adapter's per-connection state; nil for Native
}

// newConn makes the state of a connection accepted on s; ctx is the base
// of its http.Handler requests' contexts (BaseContext, ConnContext).
func newConn(s *Server, nc net.Conn, ctx context.Context) *conn {
	c := &conn{srv: s, cfg: &s.cfg, nc: nc, created: time.Now(), moved: true}
	c.state.Store(-1) // so that serve's first setState(StateNew) is reported
	c.ctx.c = c
	c.ctx.body.c = c
	c.ctx.req.Headers = make([]wire.Header, 0, 16)
	c.ctx.resp.x = &c.ctx
	_, c.isTLS = nc.(*tls.Conn)
	c.tcp, _ = nc.(*net.TCPConn)
	c.retryWrites = !c.isTLS
	c.ctx.resp.collectLimit = streamThreshold
	if s.Native == nil {
		c.handler = newAdapter(c, s.cfg.handler, ctx)
		c.ctx.resp.collectLimit = netHTTPBufferSize
	}
	c.initRaw()
	return c
}

func (c *conn) setState(st ConnState) {
	if ConnState(c.state.Swap(int32(st))) != st && c.srv.ConnState != nil {
		c.srv.ConnState(c.nc, st)
	}
}

// acquire makes sure the connection holds a buffer set.
func (c *conn) acquire() {
	if c.set == nil {
		c.set = bufPool.get()
		c.setHeld.Store(true)
		c.rbuf = c.set.r[:]
		c.wbuf = c.set.w[:0]
		c.ctx.resp.buf = c.set.b[:0]
	}
}

// release gives the buffer set back to the pool. Only called with no
// unread input, no unwritten output and no request in hand.
func (c *conn) release() {
	if c.set != nil {
		bufPool.put(c.set)
		c.set = nil
		c.setHeld.Store(false)
		c.rbuf, c.wbuf, c.ctx.resp.buf = nil, nil, nil
		c.r, c.w = 0, 0
	}
}

// serve is the connection's goroutine: read a request, run the handler,
// write the response, until the connection closes.
func (c *conn) serve() {
	defer c.finish()
	if c.handler != nil {
		c.handler.addrs()
	}
	if tc, ok := c.nc.(*tls.Conn); ok {
		if !c.handshake(tc) {
			return
		}
	} else if sc, ok := c.nc.(interface{ ConnectionState() tls.ConnectionState }); ok {
		// A wrapper of an established TLS connection (a terminator's,
		// kTLS): served by its negotiated protocol, HTTP/2 included.
		if !c.afterTLS(c.nc, nil, sc.ConnectionState()) {
			return
		}
	}
	if c.raw == nil && !c.isTLS {
		c.acquire()
	}
	for {
		if c.r == c.w {
			if err := c.waitRequest(); err != nil {
				return
			}
		}
		c.setState(StateActive)
		if c.requests == 0 && c.cfg.h2c && (c.handler != nil || c.srv.nativeH2()) && c.maybeH2C() {
			return
		}
		if !c.cfg.http1 {
			return // Protocols without HTTP1: h2c or nothing
		}
		if err := c.readHead(); err != nil {
			c.fail(err)
			return
		}
		c.serveRequest()
		if c.hijacked {
			return
		}
		if c.closing {
			c.flush()
			if c.ctx.body.unfinished() {
				c.lingerClose()
			}
			return
		}
		if len(c.wbuf) >= flushThreshold {
			if c.flush() != nil {
				return
			}
		}
	}
}

// flushThreshold is how much pipelined output may wait in the write
// buffer before it is written even though more requests are queued.
const flushThreshold = 16 << 10

// waitRequest flushes pending output and waits for the next request's
// first bytes. On the raw path the buffers go back to the pool first.
func (c *conn) waitRequest() error {
	if err := c.flush(); err != nil {
		return err
	}
	c.r, c.w = 0, 0
	if c.raw != nil {
		c.release()
	} else if c.isTLS {
		c.release() // fillOnce waits for the first byte without them
	} else {
		c.shrink()
	}
	if c.requests == 0 {
		// A new connection gets ReadHeaderTimeout for its first byte, as
		// on net/http: a client that connects and sends nothing is not
		// worth an idle keep-alive's IdleTimeout.
		if d := c.cfg.readHeaderTimeout; d > 0 {
			c.setReadDeadline(time.Now().Add(d))
		} else if d := c.cfg.idleTimeout; d > 0 {
			c.setReadDeadline(time.Now().Add(d))
		}
	} else if d := c.cfg.idleTimeout; d > 0 {
		// c.now was taken when the last head was parsed: close enough
		// for a lazy renewal.
		c.renewReadDeadline(c.now, d)
	}
	if c.requests > 0 {
		c.setState(StateIdle) // a new connection stays StateNew until its first request
	}
	if c.cfg.yieldBeforeRead {
		// Let the other connections run before reading: by the time we
		// are scheduled again the client's next request has usually
		// arrived, so the read succeeds at once instead of failing with
		// EAGAIN and parking in the netpoller. Measured with strace on
		// 1 P under wrk -c50: EAGAIN reads drop from 0.84 to 0.003 per
		// request, epoll_pwait calls by 64%, server CPU per request by
		// 10-20%. With no other goroutine ready, Gosched returns at once.
		runtime.Gosched()
	}
	if (c.srv.shutting.Load() || c.srv.noKeepAlives.Load()) && c.requests > 0 {
		return c.lastChance() // a new connection gets Shutdown's grace instead
	}
	err := c.fill()
	if errors.Is(err, errInterrupted) {
		return c.lastChance()
	}
	return err
}

// shrink drops buffers that grew past the pooled size, so a connection
// that once saw a big request does not keep the memory.
func (c *conn) shrink() {
	if c.set != nil {
		c.rbuf = c.set.r[:]
		c.wbuf = c.set.w[:0]
		c.ctx.resp.buf = c.set.b[:0]
	}
}

// lastChance runs during Shutdown on an idle connection: a request that
// has already arrived is served (with "Connection: close"); otherwise the
// connection closes.
func (c *conn) lastChance() error {
	c.quiet.Store(true) // Shutdown interrupts us no more
	c.interrupted.Store(false)
	c.closing = true
	c.setReadDeadline(time.Now().Add(shutdownQuiet))
	if err := c.fill(); err != nil || c.r == c.w {
		return errClosing
	}
	return nil
}

// shutdownQuiet is how long Shutdown lets an idle keep-alive connection
// wait for one more request before closing it. A client that got a
// keep-alive response may already have sent its next request; closing at
// once would lose it (the client sees EOF or a reset). Served within the
// quiet period, it is answered with "Connection: close". What remains is
// a request sent just as the quiet period ends: a client retry covers it
// (Go's Transport retries such a request on a reused connection).
const shutdownQuiet = 200 * time.Millisecond

var (
	errInterrupted = errors.New("server: interrupted by Shutdown")
	errClosing     = errors.New("server: connection closing")
)

// interrupt wakes a connection blocked in a read, for Shutdown.
func (c *conn) interrupt() {
	c.interrupted.Store(true)
	c.nc.SetReadDeadline(aLongTimeAgo)
}

// fail answers a request that could not be parsed (or whose body was
// malformed) with its status and reason, then closes. Timeouts and
// closed connections get no answer.
func (c *conn) fail(err error) {
	var we *wire.Error
	if !errors.As(err, &we) {
		return
	}
	c.startResponse(time.Now())
	x := &c.ctx
	// The head may be half parsed: answer as to a plain HTTP/1.1 request
	// with no body, through the one response writer.
	x.req.Method, x.req.ProtoMinor, x.req.Close, x.req.Expect100 = nil, 1, true, false
	x.body.done.Store(true)
	x.body.err = nil
	x.resp.reset()
	x.resp.replaceWithError(we.Status, c.reasonFor(we))
	c.flush()
	c.lingerClose()
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
	case wire.ErrBodyTooLarge:
		return "request body exceeds Server.MaxRequestBodyBytes (" + strconv.FormatInt(lim.MaxBodyBytes, 10) + ")"
	}
	return we.Reason
}

// Lingering close: after an error response the client may still be
// sending the body we refused. Closing at once would reset the
// connection, and a reset can destroy our response before the client
// reads it; so the write side is closed and the rest is read and
// discarded, within bounds, as nginx's lingering_close does.
const (
	lingerGap   = 2 * time.Second  // the longest wait for more input (nginx lingering_timeout: 5 s)
	lingerTotal = 30 * time.Second // the longest linger (nginx lingering_time: 30 s)
	lingerBytes = 256 << 20        // the most discarded
	// lingerShutdown is how long a connection still lingers once
	// Shutdown has begun, so that a client that keeps sending does not
	// hold Shutdown for lingerTotal (net/http waits 500 ms there too).
	lingerShutdown = 500 * time.Millisecond
)

// conn.lingering's states.
const (
	lingerNo int32 = iota
	lingerOn
	lingerCut
)

// lingerClose half-closes the connection and discards what the client is
// still sending, until it closes its side or a bound is reached.
func (c *conn) lingerClose() {
	type closeWriter interface{ CloseWrite() error }
	cw, ok := c.nc.(closeWriter)
	if !ok || cw.CloseWrite() != nil {
		return
	}
	buf := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(buf)
	c.lingering.Store(lingerOn)
	defer c.lingering.Store(lingerNo)
	end := time.Now().Add(lingerTotal)
	shortened := false
	for total := 0; total < lingerBytes; {
		now := time.Now()
		next := now.Add(lingerGap)
		if next.After(end) {
			next = end
		}
		c.nc.SetReadDeadline(next)
		// Shutdown cuts a linger short: wakeIdle marks it lingerCut, then
		// sets its own deadline. Checked after ours is set, so that ours
		// never overrides that cut for a whole gap.
		if !shortened && (c.lingering.Load() == lingerCut || c.srv.shutting.Load()) {
			if cut := now.Add(lingerShutdown); cut.Before(end) {
				end = cut
			}
			shortened = true
			if next.After(end) {
				c.nc.SetReadDeadline(end)
			}
		}
		n, err := c.nc.Read(buf[:])
		total += n
		if err != nil {
			return
		}
	}
}

// finish closes the connection and returns its buffers.
func (c *conn) finish() {
	c.dropMark()
	if !c.hijacked {
		c.nc.Close()
	}
	c.ctx.resp.reset()
	c.release()
	if !c.untracked {
		c.setState(StateClosed)
		c.srv.trackConn(c, false)
	}
}
