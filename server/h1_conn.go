package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
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

var aLongTimeAgo = time.Unix(1, 0)

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
	want := now.Add(d)
	if c.readDL.IsZero() || want.Sub(c.readDL) > d/8 || c.readDL.After(want) || c.bodyDL {
		c.bodyDL = false
		c.readDL = want
		c.nc.SetReadDeadline(want)
	}
}

// setReadDeadline sets an exact read deadline.
func (c *conn) setReadDeadline(t time.Time) {
	c.bodyDL = false
	c.readDL = t
	c.nc.SetReadDeadline(t)
}

// startResponse takes the time a request's response starts from. Its
// first write timeout finds the writes moving: the deadline in force was
// armed lazily, from this time or earlier, and no clock reading says
// when the previous response last moved.
func (c *conn) startResponse(now time.Time) {
	c.now = now
	c.moved = true
	c.watchWrites = false
}

// flush writes the pending output: a batch of responses, or part of a
// streamed one. On a TCP connection the write deadline is armed lazily
// from the time the request head was parsed, without reading the clock;
// a write that times out then checks whether it really stalled (see
// stallRetry). On TLS, where a timed-out write cannot be retried, it is
// armed from now.
func (c *conn) flush() error {
	if len(c.wbuf) == 0 {
		return nil
	}
	c.armStreamWrite()
	var err error
	if c.retryWrites {
		err = c.writeStalling(c.wbuf)
	} else {
		_, err = c.nc.Write(c.wbuf)
	}
	c.wbuf = c.wbuf[:0]
	c.flushes++
	if err != nil {
		c.writeFailed()
	}
	return err
}

// writeFailed: a write to the client failed. The connection closes after
// this request, and an http.Handler's request context is canceled, as
// net/http's is, so that a handler waiting on ctx.Done() (with its body
// unread, the disconnect watcher cannot run) learns that its client is
// gone.
func (c *conn) writeFailed() {
	c.closing = true
	if a := c.handler; a != nil && a.ctx != nil {
		a.ctx.cancel(context.Canceled)
	}
}

// writeStalling writes b with WriteStallTimeout's meaning: a write that
// times out goes on while bytes keep moving, and fails once none moved
// for a whole WriteStallTimeout (see stallRetry).
func (c *conn) writeStalling(b []byte) error {
	c.startWrite()
	for {
		n, err := c.nc.Write(b)
		if err == nil {
			c.wrote()
			return nil
		}
		b = b[n:]
		if !c.stallRetry(err, n > 0) {
			return err
		}
	}
}

// writeStallingTCP is writeStalling on a TCP connection, for the native
// API's large writes: a call of the concrete (*net.TCPConn).Write keeps b
// from escaping to the heap, where a net.Conn's Write would make every
// caller's buffer escape.
func (c *conn) writeStallingTCP(b []byte) error {
	c.startWrite()
	for {
		n, err := c.tcp.Write(b)
		if err == nil {
			c.wrote()
			return nil
		}
		b = b[n:]
		if !c.stallRetry(err, n > 0) {
			return err
		}
	}
}

// stallChecks is how many times per WriteStallTimeout a write that waits
// checks whether it still moves (see stallRetry): a client that stops
// reading is cut between 1 and 1+1/stallChecks periods after the socket
// last took bytes of the response, within 1+2/stallChecks of the client's
// last read (the socket takes what the read freed at the next check at
// the latest), and a waiting write wakes every 7.5 s with the default.
const stallChecks = 8

// stallCheck is the time between checks of a waiting write under a stall
// timeout of d > 0.
func stallCheck(d time.Duration) time.Duration {
	return max(d/stallChecks, 1)
}

// armWrite sets the write deadline before a write: period from now,
// never past the absolute WriteTimeout counted from the request head,
// unless the handler set its own deadline. Renewed lazily, when it
// drifted by more than 1/8 of its period. A deadline already later than
// now+period, under a stall timeout alone, is kept: it was armed from a
// later clock reading (stallRetry).
func (c *conn) armWrite(now time.Time, period time.Duration) {
	if c.ctx.resp.ownWriteDeadline {
		return
	}
	if c.cfg.writeTimeout > 0 {
		c.armWriteAbsolute(now, period)
		return
	}
	// The hot path: a stall timeout alone.
	if period <= 0 {
		return
	}
	if want := now.Add(period); c.writeDL.IsZero() || want.Sub(c.writeDL) > period/8 {
		c.writeDL = want
		c.nc.SetWriteDeadline(want)
	}
}

// armWriteAbsolute is armWrite with an absolute WriteTimeout, which may
// come before the stall deadline. A deadline later than the stall's but
// not past the absolute one is kept, as in armWrite.
func (c *conn) armWriteAbsolute(now time.Time, period time.Duration) {
	d := c.cfg.writeTimeout
	abs := c.now.Add(d)
	want, slack := abs, d/8
	if period > 0 && now.Add(period).Before(abs) {
		want, slack = now.Add(period), period/8
	}
	if c.writeDL.IsZero() || want.Sub(c.writeDL) > slack || c.writeDL.After(abs) {
		c.writeDL = want
		c.nc.SetWriteDeadline(want)
	}
}

// ownDeadline reports whether the handler set its own read deadline.
func (c *conn) ownDeadline() bool {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	return c.ownReadDeadline
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
				start = c.created
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
