package server

// HTTP/2 engine: idle connections: what they give back at the trim
// (trimIdle), and parking without a reader goroutine.
//
// An HTTP/2 engine connection idle past its trim (h2IdleTrim: no stream
// open, no handler running) has given back its read buffer, its workers
// and its writer goroutine (parkWriterLocked); what was left was its
// reader, blocked in a one-byte read in the netpoller with its stack.
// Instead the reader parks, as an idle HTTP/1.1 connection does
// (h1_park.go): the socket is registered with one of the Server's
// readiness sets (internal/park) and the reader returns (errH2Parked)
// without ending the connection. It wakes on a resumer goroutine
// (resume), where the one-byte read would have returned, when
//   - the socket is readable: a request, a PING, SETTINGS, the client's
//     FIN or RST;
//   - its idle deadline (idleAt + IdleTimeout, as set on the socket)
//     passes: the set's timer resumes it, and the socket's deadline then
//     fails the read (errH2Idle);
//   - GOAWAY (Shutdown, SetKeepAlivesEnabled(false)), Close or a failed
//     write ends it (stopParking): it then sees readStop or the closed
//     socket. A closed socket leaves epoll without a word, so whoever
//     closes one wakes the reader explicitly.
// The connection stays StateIdle while parked. Its end (ended: GOAWAY,
// the socket closed, unregistered, StateClosed) runs on whichever
// goroutine its reader finally ends on.
//
// It parks only with nothing in progress and nothing held: the client's
// preface and SETTINGS in and the server's acknowledged, nothing buffered
// (the read buffer given back), no reset due (noErrReady), not going
// away, not closed. Over TLS, crypto/tls may still hold bytes the reader
// has not taken (a record read with the previous one): a read past its
// deadline takes them without touching the socket (tlsHeld), and only
// when it finds nothing does the connection park. What it may still hold
// then is part of a record, whose rest makes the socket readable.

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
)

// attachBusyLocked gives the connection a busy state if it has none:
// at its start, when it wakes (resume), and when something is queued on
// it while it is parked (goAwayLocked). Under mu, or before anyone else
// has the connection.
func (sc *h2Conn) attachBusyLocked() {
	if sc.h2Busy != nil {
		return
	}
	sc.h2Busy = &h2Busy{table: make(map[uint32]*h2Stream)}
	sc.cond.L = &sc.mu
	sc.asm.MaxBlockSize = 2 * sc.srv.h2MaxHeaderList()
	// The SETTINGS sent at the start allowed extended CONNECT (RFC 8441)
	// for the connection's life, not only until it first parked (then a
	// browser's WebSocket opened after an idle spell was reset).
	sc.val.ExtendedConnect = sc.srv.cfg.extendedConnect
}

// detachBusyLocked lets go of the busy state of a connection that parks
// with nothing in progress, once its reader has parked (readerIdle), its
// writer has left (parkWriterLocked) and its last worker has ended,
// whichever comes last; with it the HPACK tables' slack (the encoder's
// table entirely: the next response head tells the client to empty its
// copy). Any of them calls it; it does nothing while one is still there
// or anything is held.
func (sc *h2Conn) detachBusyLocked() {
	b := sc.h2Busy
	if b == nil || !sc.readerIdle || !sc.writerParked.Load() || sc.workers > 0 || sc.running > 0 ||
		sc.streams.Active() > 0 || len(b.table) > 0 || len(b.wbuf) > 0 || len(b.wrefs) > 0 ||
		b.refWaiters > 0 || b.mapped > 0 || len(b.roomWaiters) > 0 || len(b.connWaiters) > 0 ||
		len(b.noErrQueued) > 0 || len(b.noErrReady) > 0 || b.noErrOut != 0 || sc.closed || sc.goAway || sc.fatal {
		return
	}
	if _, open := b.asm.Open(); open {
		return // a header block waits for its CONTINUATION
	}
	sc.h2Busy = nil
	sc.enc.Empty()
	sc.dec.Trim()
}

// trimIdle gives back what an idle connection holds for the next burst:
// its recycled native streams, its idle handler goroutines (and their
// stacks), and a write buffer grown by a big response.
func (sc *h2Conn) trimIdle() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.trimmed = true
	// The streams kept as recently reset go too: the client's frames in
	// flight for them have long arrived, and a late one meets a closed
	// stream (STREAM_CLOSED).
	for _, id := range sc.recent {
		delete(sc.table, id)
	}
	sc.recent = nil
	clear(sc.free)
	sc.free = nil
	if sc.trimCh != nil {
		close(sc.trimCh) // idle workers end
		sc.trimCh = nil  // the next worker makes another
	}
	sc.dropBigWriteBufsLocked()
	sc.kickWriter() // which finds nothing to write, and leaves
}

// readerBackLocked marks the reader at work again (its park failed, or
// it woke), with a busy state.
func (sc *h2Conn) readerBackLocked() {
	sc.readerIdle = false
	sc.attachBusyLocked()
}

// errH2Parked is what the read loop returns when the connection parked:
// it is no longer the reader's goroutine's, which must not end it.
var errH2Parked = errors.New("server: HTTP/2 connection parked")

// initPark gives the connection a readiness set if it can park: TCP or
// Unix, or TLS over TCP; and parking is on.
func (sc *h2Conn) initPark() {
	sc.parked.Init()
	if park.Socket(sc.nc) != nil {
		sc.pset = sc.srv.nextParkSet()
	}
}

// mayParkLocked reports whether the reader, about to wait for the next
// byte of an idle connection past its trim, may park instead (but for
// its read buffer, which fill gives back after it).
func (sc *h2Conn) mayParkLocked() bool {
	return sc.pset != nil && !sc.parkFailed && sc.trimmed && sc.gotPref && sc.settingsAcked &&
		sc.running == 0 && sc.streams.Active() == 0 && len(sc.noErrReady) == 0 &&
		!sc.goAway && !sc.closed && !sc.fatal && !sc.readStop
}

// park parks the idle reader, to wake at dl (the idle timeout; zero:
// none) at the latest. It returns errH2Parked when the connection
// parked: the caller returns it at once and touches the connection no
// more (it may already run on another goroutine). Else nil, with a byte
// in the read buffer if crypto/tls held one, or the error a read got.
// A connection that could not park waits on its goroutine until it is
// busy again (parkFailed).
func (sc *h2Conn) park(dl time.Time) error {
	if !dl.IsZero() && time.Until(dl) < parkMinLeft {
		return nil
	}
	if held, err := sc.tlsHeld(); held || err != nil {
		return err
	}
	sc.parkDL = dl
	sc.mu.Lock()
	sc.readerIdle = true
	sc.detachBusyLocked()
	sc.mu.Unlock()
	if sc.pset.Add(sc) {
		return errH2Parked
	}
	sc.parkFailed = true
	// tlsHeld moved the deadline: back to the one in force, unless
	// maybeDoneLocked moved it since to stop the reader.
	sc.mu.Lock()
	sc.readerBackLocked()
	if !sc.readStop && !sc.closed {
		sc.nc.SetReadDeadline(dl)
	}
	sc.mu.Unlock()
	return nil
}

// tlsHeld takes what crypto/tls holds of the client's bytes without
// waiting (a read past its deadline does not touch the socket): held
// says it got a byte, which the read buffer now holds. Not TLS: nothing.
func (sc *h2Conn) tlsHeld() (held bool, err error) {
	tc, ok := sc.nc.(*tls.Conn)
	if !ok {
		return false, nil
	}
	tc.SetReadDeadline(aLongTimeAgo)
	n, err := tc.Read(sc.one[:])
	if n > 0 {
		sc.tookOne()
		return true, nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, nil
	}
	return false, err
}

// stopParking keeps the connection from parking from now on and wakes
// its reader if it is parked: for GOAWAY (it must see readStop), Close
// and a failed write (it must see the closed socket). With or without
// mu.
func (sc *h2Conn) stopParking() {
	ps := sc.pset
	if ps == nil {
		return
	}
	sc.noPark.Store(true) // before take: add sees it, or take sees the park
	if ps.Take(sc) {
		sc.srv.resumeConn(sc)
	}
}

// resume runs the reader of a connection that woke, on the calling
// goroutine, until it parks again or ends. Its first read waits on the
// goroutine (woke): what woke it is read, not parked on again.
func (sc *h2Conn) resume() {
	sc.mu.Lock()
	sc.readerBackLocked()
	sc.mu.Unlock()
	sc.woke = true
	sc.ended(sc.frameLoop())
}

// Parking, ParkDeadline, PollRaw, ParkVetoed and Wake make the
// connection a park.Parker; with resume, a parker (park.go).

func (sc *h2Conn) Parking() (*park.State, *bool) { return &sc.parked, &sc.registered }

func (sc *h2Conn) ParkDeadline() time.Time { return sc.parkDL }

func (sc *h2Conn) ParkVetoed() bool { return sc.noPark.Load() || sc.srv.shutting.Load() }

func (sc *h2Conn) Wake() { sc.srv.resumeConn(sc) }

// PollRaw is the socket the connection waits on: its own, or under TLS
// the TCP connection's. Looked up at the first park, then kept.
func (sc *h2Conn) PollRaw() (syscall.RawConn, error) {
	if sc.raw == nil {
		rc, err := park.Raw(sc.nc)
		if err != nil {
			return nil, err
		}
		sc.raw = rc
	}
	return sc.raw, nil
}
