package server

// HTTP/1.1 engine: idle connections without a goroutine (parking).
//
// An idle keep-alive connection that would wait for its next request in
// the netpoller holds a goroutine (its stack) and its working state
// (connWork: the native Ctx with its header slice, 1.7 KB; the
// http.Handler adapter and its header map besides), though it has nothing
// in hand. Instead it parks: its working state goes back to the Server's
// pool, its socket is registered with one of the Server's readiness sets
// (internal/park: an epoll instance of its own, EPOLLONESHOT) and its
// goroutine returns. What is left is the conn, 160 bytes (and for the
// http.Handler API its handlerConn: the context, the remote address),
// besides what Go keeps of the socket.
//
// A connection parks only when it has nothing in progress: no request in
// hand, nothing buffered (read or written: the buffers are back in their
// pool; over TLS, crypto/tls holds no whole record), no goroutine of the
// handler's (the disconnect watcher stopped, the body taken back), no
// mark, no deadline of the handler's, not hijacked, not closing, not in
// Shutdown's quiet period; and only once a read found the socket empty
// after waitRequest's yield and then parkGrace passed with nothing: busy
// connections never park.
//
// It wakes, on a goroutine that waits to resume connections (resumer) or
// a new one, with a working state from the pool, where awaitRequest would
// have returned, when
//   - the socket is readable (a request, the client's FIN or RST),
//   - its read deadline (IdleTimeout, as set on the socket) passes: the
//     set's timer resumes it, and the socket's own deadline then fails
//     the read, as for a waiting connection,
//   - Shutdown or SetKeepAlivesEnabled(false) interrupts it (interrupt:
//     its lastChance runs as for a waiting connection), or Close closes
//     it.
// It stays StateIdle while parked; ConnState sees StateActive when the
// next request arrives and StateClosed when it ends, as before.
//
// The http.Handler adapter is not reused across a park: a woken
// connection gets a new one, and the old one is detached. (A
// ResponseWriter kept past its handler's return reaches no adapter at
// all: it is its request's requestWriter, which answers errHandlerDone,
// h1_responsewriter.go.) The native Ctx is reused, as it always was: it
// must not be kept (see Ctx).

import (
	"errors"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire"
)

// parkGrace is how long an idle connection waits in the netpoller before
// it parks: a client that sends its next request within it (one after
// the other, with a little work between) finds the connection as fast as
// without parking. Measured in-process with one such client on 1 P:
// parking at the first empty read cost 2.5 µs per request (15%), and one
// allocation (the goroutine that resumes it); the grace costs a few
// atomic operations when the read finds nothing (h1_grace.go), and lasts
// up to a sweep's tick more. Under wrk -c50 (server on one core of a
// loaded 2-core machine), a 5 ms grace still parked a connection after
// 0.7% to 3% of requests, 20 ms after none.
const parkGrace = 20 * time.Millisecond

// initPark gives c a readiness set when it can park: a TCP (or Unix)
// socket with a raw path, or TLS over TCP.
func (c *conn) initPark() {
	c.parked.Init()
	if c.raw == nil && park.Socket(c.nc) == nil {
		return
	}
	c.pset = c.srv.nextParkSet()
}

// PollRaw is the socket a parked connection is registered with: the
// connection's own, or under TLS the TCP connection's.
func (c *conn) PollRaw() (syscall.RawConn, error) {
	if c.raw != nil {
		return c.raw, nil
	}
	return park.Raw(c.nc)
}

// mayPark reports whether c has nothing in progress and may park.
func (c *conn) mayPark() bool {
	if c.pset == nil || c.requests == 0 || c.closing || c.hijacked || c.quiet.Load() ||
		(c.set != nil && !c.idleRead) || len(c.wbuf) != 0 || c.r != c.w || c.hasPeeked || c.ownReadDeadline ||
		c.mark.bytes.Load() != 0 {
		return false
	}
	if a := c.handler; a != nil && a.watchDone != nil {
		return false
	}
	return true
}

// graceFill is fill with a grace wait (h1_grace.go) once it found
// nothing: errWouldBlock when nothing came within parkGrace. On the raw
// path the read begins the wait only when the socket is empty (rawRead),
// so a busy connection's read costs what it did without parking.
//
// Over TLS, a read that times out means crypto/tls holds no whole record
// (nothing decrypted, nothing it could decrypt): it may hold part of one,
// whose rest makes the socket readable. So a connection whose grace
// passed may park, TLS or not.
func (c *conn) graceFill() error {
	noGrace := c.noGrace
	c.noGrace = false
	if c.raw != nil {
		c.rawGrace, c.noGrace = true, noGrace
		err := c.fill()
		c.rawGrace, c.noGrace = false, false
		if !c.graced {
			return err // errWouldBlock at once with noGrace
		}
		c.graced = false
		return c.graceEnd(err)
	}
	if noGrace {
		// What crypto/tls holds, without waiting: a read past its
		// deadline does not touch the socket.
		c.nc.SetReadDeadline(aLongTimeAgo)
		err := c.fill()
		c.restoreReadDeadline()
		if err != nil && isTimeout(err) && !errors.Is(err, errInterrupted) {
			return errWouldBlock
		}
		return err
	}
	c.graceBegin()
	return c.graceEnd(c.fill())
}

// park gives c's working state back and registers c with its readiness
// set. It reports whether c parked: then c is no longer this goroutine's
// (it may already run again on another), which must return at once.
func (c *conn) park() bool {
	if !c.readDL.IsZero() && time.Until(c.readDL) < parkMinLeft {
		return false
	}
	// The last response's state goes now, not at the next request's
	// start: a write deadline of its handler's, on the socket, is the
	// connection's to clear, and the next request may find another
	// working state, which knows nothing of it.
	c.ctx.resp.reset()
	cw := c.connWork
	cw.detach() // before the park is seen: whoever sees c parked sees this done
	c.connWork = nil
	if !c.pset.Add(c) {
		c.attach(cw)
		return false
	}
	c.srv.works.Put(cw)
	return true
}

// unpark wakes c if it is parked, for Shutdown and Close: it runs again
// on a goroutine of its own, and finds the deadline Shutdown moved or the
// socket Close closed as a waiting connection would.
func (c *conn) unpark() {
	if ps := c.pset; ps != nil && ps.Take(c) {
		c.srv.resumeConn(c)
	}
}

// Parking, ParkDeadline, PollRaw, ParkVetoed and Wake make c a
// park.Parker; with resume, a parker (park.go).

func (c *conn) Parking() (*park.State, *bool) { return &c.parked, &c.registered }

func (c *conn) ParkDeadline() time.Time { return c.readDL }

func (c *conn) ParkVetoed() bool {
	return c.interrupted.Load() || c.srv.shutting.Load() || c.srv.noKeepAlives.Load()
}

func (c *conn) Wake() { c.srv.resumeConn(c) }

// resume runs a connection that woke from parking, on the calling
// goroutine, until it parks again or ends: it takes a working state and
// goes on where awaitRequest would have returned. One that was parked for
// parkGrace or longer parks again at its next empty read (noGrace): its
// client is one that comes now and then, and a wake-up of many such
// connections at once is served by a few goroutines and working states,
// each taken again as soon as its connection is done. One that woke
// sooner waits parkGrace first, as a busy connection does.
func (c *conn) resume() {
	c.attach(c.srv.takeWork())
	c.now = time.Now()
	c.noGrace = uint32(c.now.UnixMilli())-c.parked.Since() >= uint32(parkGrace/time.Millisecond)
	parked := false
	defer func() {
		if !parked {
			c.finish()
		}
	}()
	parked = c.loop(true)
}

// takeWork returns a working state for one of s's connections.
func (s *Server) takeWork() *connWork {
	if cw, ok := s.works.Get().(*connWork); ok {
		return cw
	}
	return newWork(s)
}

// newWork makes a working state for s's connections.
func newWork(s *Server) *connWork {
	cw := &connWork{}
	cw.init(s, make([]wire.Header, 0, 16))
	return cw
}

// init readies cw, zero, for s's connections, with hdrs (empty) for its
// requests' fields.
func (cw *connWork) init(s *Server, hdrs []wire.Header) {
	cw.cfg, cw.moved = &s.cfg, true
	cw.ctx.req.Headers = hdrs
	cw.ctx.resp.x = &cw.ctx
	cw.ctx.resp.collectLimit = streamThreshold
	if s.Native == nil {
		cw.ctx.resp.collectLimit = netHTTPBufferSize
	}
	cw.rawFn = cw.rawRead
}

// detach readies the working state of a connection that parks for the
// pool: what it held of the connection and its last request goes, so the
// pool keeps nothing alive.
func (cw *connWork) detach() {
	cw.c, cw.ctx.c, cw.ctx.body.c, cw.tcp = nil, nil, nil, nil
	cw.ctx.req.Reset()
	cw.rawErr, cw.noGrace = nil, false
	cw.graceLeave()
	if a := cw.handler; a != nil {
		// Detached for good: it never reaches the connection that
		// takes this working state next.
		a.c, a.req, a.body, a.ctx = nil, nil, nil, nil
		cw.handler = nil
		cw.ctx.body.dec.OnTrailer = nil
	}
}
