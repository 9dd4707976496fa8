package server

// HTTP/1.1 engine: the connection (conn) and its working state
// (connWork): its buffers, its serve loop (wait, read a head, serve,
// finish). Reading is in h1_read.go, writing and its stall timeout in
// h1_write.go, the lingering close in h1_linger.go, idle connections
// without a goroutine in h1_park.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire"
)

// conn is one client connection, as the server tracks it (Server.conns).
// Only its own goroutine touches it, except for state, interrupted, quiet
// and lingering, which Shutdown reads and sets, and setHeld, which tests
// observe.
//
// A connection has a goroutine and a working state (connWork, embedded,
// so that c.rbuf is c.connWork.rbuf) while it has a request in hand or
// waits for one. On Linux an idle keep-alive connection parks instead
// (h1_park.go): its goroutine returns, its working state goes back to the
// Server's pool, and what is left is this struct: the socket, the
// deadlines in force on it, the counters and the per-connection values
// its requests need (the http.Handler context, the remote address). While
// parked, connWork is nil.
type conn struct {
	// The fields are in an order that leaves no padding: 160 bytes, a
	// size class of Go's allocator (h1_park_linux_test.go checks it).
	*connWork

	srv     *Server
	nc      net.Conn
	raw     syscall.RawConn // non-nil when idle waits can run without a buffer
	hc      *handlerConn    // the http.Handler adapter's per-connection values; nil for Native
	pset    *park.Set       // where the connection parks; nil: it never does (h1_park.go)
	created int64           // when it was accepted (Unix ns; see accepted)

	readDL, writeDL time.Time // deadlines currently set, for lazy renewal

	state       atomic.Int32 // a ConnState
	lingering   atomic.Int32 // lingerNo, lingerOn (in lingerClose) or lingerCut (by Shutdown)
	interrupted atomic.Bool  // Shutdown moved the read deadline to wake us
	quiet       atomic.Bool  // in Shutdown's quiet period (lastChance): not to be interrupted
	setHeld     atomic.Bool  // mirrors set != nil for observers (tests)
	requests    uint32       // requests served (saturating)
	parked      park.State   // the connection's place in pset while parked

	isTLS      bool // a *tls.Conn (see retryWrites)
	bodyDL     bool // readDL was armed by armBodyRead
	registered bool // the socket was added to pset's epoll instance (under pset's mutex)
	// hijacked: a handler took the connection over (h1_hijack.go), or
	// HTTP/2 did. On the conn, not its working state: an http.Handler
	// that hijacks lets go of the working state while it runs on.
	hijacked bool
}

// connWork is the working state of a connection that has a goroutine: its
// buffers, the request and response in hand (the native Ctx, the
// http.Handler adapter), the timing of reads and writes. It is reused:
// a connection that parks gives it back to its Server's pool and one that
// wakes takes one (h1_park.go). Everything here is reset between
// requests, or set when it is attached to a connection.
//
// The read buffer holds unread input in rbuf[r:w]. While a handler runs,
// rbuf[:bodyBase] holds the request head that the Ctx's slices point into;
// nothing may move those bytes until the handler returns.
type connWork struct {
	c     *conn // the connection served now
	cfg   *config
	tcp   *net.TCPConn          // nc, when it is one: writes through it keep their buffer off the heap
	rawFn func(fd uintptr) bool // cw.rawRead, bound once
	// flushes counts the writes of wbuf to the socket: what a response
	// appended to wbuf is still there while it has not moved.
	flushes uint32

	// The request's "Expect: 100-continue" may still be answered: the
	// body's first read sends 100 Continue, maybe on a goroutine of the
	// handler's own, so the 100 and the response's head go to the
	// write buffer under contMu while it is set (see sendContinue).
	canContinue atomic.Bool
	contMu      sync.Mutex

	set      *bufs // nil while idle on the raw path
	rbuf     []byte
	r, w     int
	bodyBase int
	wbuf     []byte

	peekBuf [1]byte // the first byte of a request on an idle TLS connection

	// client is who the connection's handlers are charged to
	// (orphans.go), once clientKnown: looked up when first needed.
	client      clientKey
	clientKnown bool

	rawErr   error // error seen by the last raw read
	rawGrace bool  // the raw read begins a grace wait if it finds nothing (graceFill)
	graced   bool  // it did: graceEnd follows
	noGrace  bool  // woke after a long park: park again at the first empty read (resume)

	// The grace wait (h1_grace.go), as the Server's sweep of read waits
	// knows it (waitsweep.go).
	grace sweptWait

	now time.Time // taken once per request, when its head is parsed
	// The lazy renewals' shortcuts (renewReadDeadline, armWrite): while
	// readRenewFor is not zero, the read deadline in force is the one a
	// renewal for that period set, and another renewal for it moves the
	// deadline only from readRenewAt on (1/8 of the period after it was
	// set); so for writes. Time.Add and Time.Sub per request, twice each,
	// cost more than the rest of the two renewals: a comparison with
	// readRenewAt is one of monotonic readings.
	readRenewAt, writeRenewAt   time.Time
	readRenewFor, writeRenewFor time.Duration
	headStart                   time.Time  // when the head began arriving (only with an absolute ReadTimeout)
	ownReadDeadline             bool       // the handler set a read deadline itself (ResponseController)
	dlMu                        sync.Mutex // orders a body read on another goroutine with the handler's SetReadDeadline
	mark                        rcvMark    // a big upload's receive low-water mark (rcvmark.go)

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

	closing bool // close once the current response is written
	// idleRead: the read waits for the next request, with nothing in
	// hand: a buffer set held may go back to the pool when the socket
	// is found empty (rawRead), and the connection may park (mayPark).
	idleRead bool
	// writeBroke: a write to the client failed (writeFailed); the end
	// then closes with closeAfterFailedWrite (tls.go).
	writeBroke bool
	untracked  bool // no longer in srv.conns (hijacked)
	ctx        Ctx
	handler    *adapter // the http.Handler adapter's per-connection state; nil for Native
}

// newConn makes the state of a connection accepted on s; ctx is the base
// of its http.Handler requests' contexts (BaseContext, ConnContext).
func newConn(s *Server, nc net.Conn, ctx context.Context) *conn {
	c := &conn{srv: s, nc: nc, created: time.Now().UnixNano()}
	c.state.Store(-1) // so that serve's first setState(StateNew) is reported
	_, c.isTLS = nc.(*tls.Conn)
	if s.Native == nil {
		c.hc = &handlerConn{base: ctx}
	}
	c.initRaw()
	c.initPark()
	// A working state parked connections gave back: connections that
	// come and park in turn share a few, however many are open.
	c.attach(s.takeWork())
	return c
}

// retryWrites reports whether a write that timed out may be retried:
// not on TLS, whose state a write timeout corrupts.
func (c *conn) retryWrites() bool { return !c.isTLS }

// accepted is when the connection was accepted.
func (c *conn) accepted() time.Time { return time.Unix(0, c.created) }

// attach gives c the working state cw.
func (c *conn) attach(cw *connWork) {
	c.connWork = cw
	cw.c = c
	cw.clientKnown = false
	cw.idleRead = false
	cw.readRenewFor, cw.writeRenewFor = 0, 0 // the deadlines in force are the conn's, not this working state's
	cw.ctx.c = c
	cw.ctx.body.c = c
	cw.tcp, _ = c.nc.(*net.TCPConn)
	if c.hc != nil {
		// An adapter of its own for each goroutine's spell: one a
		// parked connection had is not reused (h1_park.go).
		a := newAdapter(c.srv.cfg.handler)
		a.c = c
		cw.handler = a
		cw.ctx.body.dec.OnTrailer = a.onTrailer
	}
}

// setState records and reports the connection's state. One writer at a
// time: Serve's goroutine before the connection's starts, then the
// connection's goroutine, then, once HTTP/2 took it over, its reporters
// under stateMu; others only read (Shutdown). So a load and a store do,
// with no compare-and-swap loop on the path of every request.
func (c *conn) setState(st ConnState) {
	old := ConnState(c.state.Load())
	if old == st || old == StateClosed {
		return // a repeat, or a late report (an HTTP/2 worker's) after the end
	}
	c.state.Store(int32(st))
	if hook := c.srv.ConnState; hook != nil {
		hook(c.nc, st)
	}
}

// serve is the connection's goroutine: read a request, run the handler,
// write the response, until the connection closes or parks.
func (c *conn) serve() {
	parked := false
	defer func() {
		if !parked { // a parked connection is another goroutine's, or none's
			c.finish()
		}
	}()
	if c.handler != nil {
		c.addrs()
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
	parked = c.loop(false)
}

// loop serves requests until the connection ends (false) or parks
// (true): then another goroutine may already run it, and the caller must
// not touch c. resumed says the connection comes back from parking: it
// goes on where waitRequest would have returned.
func (c *conn) loop(resumed bool) bool {
	for {
		if resumed || c.r == c.w {
			var err error
			if resumed {
				// What woke it is read first, with the grace (over
				// TLS a read with no wait would leave the socket's
				// bytes where they are, and park again); noGrace is
				// for the wait after this request.
				resumed = false
				long := c.noGrace
				c.noGrace = false
				if err = c.awaitRequest(); err == nil {
					c.noGrace = long
				}
			} else {
				err = c.waitRequest()
			}
			if err != nil {
				return err == errParked
			}
		}
		c.setState(StateActive)
		if c.requests == 0 && c.cfg.h2c && (c.handler != nil || c.srv.ownH2()) && c.maybeH2C() {
			return false
		}
		if !c.cfg.http1 {
			return false // Protocols without HTTP1: h2c or nothing
		}
		if err := c.readHead(); err != nil {
			c.fail(err)
			return false
		}
		c.serveRequest()
		if c.hijacked {
			return false
		}
		if c.closing {
			c.flush()
			if c.ctx.body.unfinished() {
				c.lingerClose()
			}
			return false
		}
		if len(c.wbuf) >= flushThreshold {
			if c.flush() != nil {
				return false
			}
		}
	}
}

// flushThreshold is how much pipelined output may wait in the write
// buffer before it is written even though more requests are queued.
const flushThreshold = 16 << 10

// waitRequest flushes pending output and waits for the next request's
// first bytes. On the raw path the buffers go back to the pool first.
// It returns errParked when the connection parked instead of waiting.
func (c *conn) waitRequest() error {
	if err := c.flush(); err != nil {
		return err
	}
	c.r, c.w = 0, 0
	if c.raw != nil {
		// The set stays for the read, which most often finds the next
		// request there (see yieldBeforeRead): given back and taken
		// again, it cost a sync.Pool Put and Get and two atomic stores
		// per request. A read that finds the socket empty gives it
		// back before it waits (rawRead, idleRead), so an idle
		// connection still holds none.
		c.shrink()
		c.idleRead = true
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
	if c.cfg.yieldBeforeRead && !c.noGrace { // not for one just woken from parking: idle, not busy
		// Let the other connections run before reading: by the time we
		// are scheduled again the client's next request has usually
		// arrived, so the read succeeds at once instead of failing with
		// EAGAIN and parking in the netpoller. Measured with strace on
		// 1 P under wrk -c50: EAGAIN reads drop from 0.84 to 0.003 per
		// request, epoll_pwait calls by 64%, server CPU per request by
		// 10-20%. With no other goroutine ready, Gosched returns at once.
		runtime.Gosched()
	}
	err := c.awaitRequest()
	if err != errParked { // parked: the working state is no longer c's
		c.idleRead = false
	}
	return err
}

// awaitRequest is waitRequest's wait: for the first bytes of the next
// request, for Shutdown's last chance, or parked (errParked) when the
// socket stays empty and the connection may park (h1_park.go). A
// connection that wakes from parking starts here: it reads what woke it,
// or finds the deadline passed, the socket closed, or Shutdown begun.
func (c *conn) awaitRequest() error {
	if (c.srv.shutting.Load() || c.srv.noKeepAlives.Load()) && c.requests > 0 {
		return c.lastChance() // a new connection gets Shutdown's grace instead
	}
	if c.mayPark() {
		// The read, with a short wait in the netpoller (parkGrace) if
		// it finds nothing, so that a client that sends its requests
		// one after the other does not pay for parking at each; a busy
		// client's next request is usually there already (see
		// yieldBeforeRead). Over TLS the grace's read is also the test
		// that crypto/tls holds nothing to decrypt.
		if err := c.graceFill(); err == nil {
			return nil
		} else if err != errWouldBlock {
			return c.filled(err)
		}
		if c.park() {
			return errParked
		}
	}
	if err := c.fill(); err != nil {
		return c.filled(err)
	}
	return nil
}

// filled is what awaitRequest makes of its read's error (not nil: the
// callers check that first, which keeps this call and errors.Is off the
// path of every request).
func (c *conn) filled(err error) error {
	if errors.Is(err, errInterrupted) {
		return c.lastChance()
	}
	return err
}

var (
	errInterrupted = errors.New("server: interrupted by Shutdown")
	errClosing     = errors.New("server: connection closing")
	errParked      = errors.New("server: connection parked")
	errWouldBlock  = errors.New("server: nothing to read yet")
)

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

// finish closes the connection and returns its buffers.
func (c *conn) finish() {
	if c.connWork == nil {
		return // handed to HTTP/2 (dropWork), which closes it and reports its states
	}
	c.graceLeave()
	c.dropMark()
	if !c.hijacked {
		if c.writeBroke {
			closeAfterFailedWrite(c.nc)
		} else {
			c.nc.Close()
		}
	}
	c.ctx.resp.reset()
	c.release()
	if !c.untracked {
		c.setState(StateClosed)
		c.srv.trackConn(c, false)
	}
}

// clientKey returns who the connection's handlers are charged to
// (orphans.go), computed once.
func (c *conn) clientKey() clientKey {
	if !c.clientKnown {
		c.client, c.clientKnown = clientKeyOf(c.nc.RemoteAddr()), true
	}
	return c.client
}
