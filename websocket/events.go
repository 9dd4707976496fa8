package websocket

// The event API: a connection handed to an EventHandler (Conn.Start) is
// read by the package's goroutines, only while data arrives. Between
// messages, with nothing buffered, it parks: its socket waits in one of
// the package's readiness sets (internal/park, the server's idle
// connections' machinery: epoll on Linux), its read buffer goes back to
// the pool and no goroutine waits for it. What is left is the Conn and
// the socket. When the socket becomes readable (a frame, the peer's
// FIN), its idle timeout passes, or Close is called, a resumer goroutine
// takes it, reads and delivers what came, and parks it again.
//
// A message is read whole before it is delivered: a peer that sends half
// a message holds a goroutine (blocked in the read, as Read would) until
// the rest comes or the idle timeout ends it. Where a connection cannot
// park (no readiness sets on this platform, a net.Conn that is not a
// socket of its own), a goroutine reads it as Read would, and the
// handler sees the same events.

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
)

// EventHandler receives the messages and the end of a connection handed
// to it by [Conn.Start]. Its methods run on the package's goroutines, one
// call at a time per connection, in the order the frames came: a method
// that blocks delays that connection's next message, not other
// connections'. They may write to the connection (every write method is
// safe from any goroutine) and Close it (which returns once its close
// frame is sent: the loop takes the answer, then calls OnClose).
type EventHandler interface {
	// OnMessage receives a whole data message. msg is valid only during
	// the call (its memory is reused): copy what must outlive it.
	OnMessage(c *Conn, typ MessageType, msg []byte)
	// OnClose is called once, last, when the connection has ended, with
	// the error Read would have returned: a [*CloseError] for a close
	// handshake (either side's), a peer gone without one (1006) or an
	// idle timeout; the broken rule's error when the peer broke one
	// ([CloseStatus] reads the code sent).
	OnClose(c *Conn, err error)
}

var errEventMode = errors.New("websocket: the connection's reads are its EventHandler's (Conn.Start)")

// Start hands the connection's read side to h and returns at once: from
// then on, each data message goes to h.OnMessage and the connection's
// end to h.OnClose, pings are answered and pongs delivered (OnPong), on
// the package's goroutines. Between messages the connection holds no
// goroutine and no read buffer (see [EventHandler] and the package
// documentation); an http.Handler may return right after Start. Read
// and Reader fail after Start; writes work as before. Start fails if
// called twice or while a Read is in progress.
//
// A connection over an HTTP/2 stream (RFC 8441) lives only while its
// handler runs: there Start runs the events on the calling goroutine
// and returns when the connection has ended, after OnClose.
func (c *Conn) Start(h EventHandler) error {
	if h == nil {
		return errors.New("websocket: Start with a nil EventHandler")
	}
	if c.ev.Load() != nil {
		return errors.New("websocket: Start called twice")
	}
	if !c.readLock.tryLock(&c.syncMu) { // the event loop's for good
		return errors.New("websocket: Start while a Read is in progress")
	}
	ev := &eventConn{c: c, h: h}
	ev.state.Init()
	if rc, err := park.Raw(c.nc); err == nil {
		if sets := eventSets(); len(sets) > 0 {
			ev.rc = rc
			ev.set = sets[eventSetNext.Add(1)%uint32(len(sets))]
			ev.direct = any(park.Socket(c.nc)) == any(c.nc)
		}
	}
	c.ev.Store(ev)
	if _, stream := c.nc.(*streamConn); stream {
		ev.run() // until the end: the handler's return would end the stream
		return nil
	}
	resumeEvent(ev) // what came with the handshake, then it parks
	return nil
}

// eventConn is a started connection's event loop state; it is the
// park.Parker its readiness set holds.
//
// Its fields are in an order that leaves no padding: 96 bytes, a size
// class (TestEventConnSize).
type eventConn struct {
	c        *Conn
	h        EventHandler
	set      *park.Set       // nil: it cannot park, a goroutine reads it
	rc       syscall.RawConn // the socket it waits on
	msg      *[]byte         // the message being read, from msgPool
	deadline int64           // a parked connection's idle timeout, Unix nanoseconds; zero: none

	state      park.State     // guarded by set's mutex
	edge       park.EdgeState // guarded by set's mutex (AddEdge's)
	vetoed     atomic.Bool
	direct     bool // the Conn reads that socket itself (not TLS): reads without waiting go to it, and it parks with AddEdge
	registered bool // guarded by set's mutex (Add's, over TLS)
	woke       bool // the set woke it (set before Wake hands it over)
}

var (
	eventSets    = sync.OnceValue(park.NewSets)
	eventSetNext atomic.Uint32
	msgPool      = sync.Pool{New: func() any { b := make([]byte, 0, bigBuf); return &b }}
)

// maxPooledMsg: a message buffer grown past this is dropped after its
// message, not kept in the pool.
const maxPooledMsg = 64 << 10

// Parking, ParkDeadline, PollRaw, ParkVetoed and Wake make an eventConn
// a park.Parker.

func (ev *eventConn) Parking() (*park.State, *bool) { return &ev.state, &ev.registered }
func (ev *eventConn) ParkDeadline() time.Time {
	if ev.deadline == 0 {
		return time.Time{}
	}
	return time.Unix(0, ev.deadline)
}
func (ev *eventConn) PollRaw() (syscall.RawConn, error) { return ev.rc, nil }
func (ev *eventConn) ParkVetoed() bool                  { return ev.vetoed.Load() }
func (ev *eventConn) Wake()                             { ev.woke = true; resumeEvent(ev) }
func (ev *eventConn) Edge() *park.EdgeState             { return &ev.edge }

// run reads and delivers what arrived until the connection parks or
// ends.
func (ev *eventConn) run() {
	c, rd := ev.c, &ev.c.rd
	woke := ev.woke
	ev.woke = false
	for {
		if rd.err != nil {
			ev.end(rd.err)
			return
		}
		if rd.r == rd.w { // between messages, nothing buffered
			switch {
			case woke && ev.deadline != 0 && time.Now().UnixNano() >= ev.deadline:
				// Woken for its idle timeout: unless something came
				// just now, it ends.
				got, err := ev.fillNow()
				if err == nil && !got {
					err = rd.ioFailed(os.ErrDeadlineExceeded)
				}
				if err != nil {
					ev.end(err)
					return
				}
			case woke:
				// Readable: the read below finds what came (over TLS,
				// it waits for the rest of a record begun), into the
				// pooled buffer at once: data flows.
				rd.full = true
			case rd.short && ev.direct:
				// The last read drained the socket: park without
				// asking it again (an edge since then answers Retry).
				rd.release()
				switch ev.park() {
				case park.Parked:
					return
				case park.Retry:
					rd.short = false
					continue
				}
			default:
				got, err := ev.fillNow()
				if err != nil {
					ev.end(err)
					return
				}
				if !got {
					rd.release()
					switch ev.park() {
					case park.Parked:
						return
					case park.Retry:
						rd.short = false
						continue
					}
				}
			}
			woke = false
		}
		data, err := rd.step()
		if err != nil {
			ev.end(err)
			return
		}
		if !data {
			continue
		}
		typ, msg, err := ev.message()
		if err != nil {
			ev.end(err)
			return
		}
		c.inCallback.Add(1)
		ev.h.OnMessage(c, typ, msg)
		c.inCallback.Add(-1)
		if ev.msg != nil && cap(msg) <= maxPooledMsg { // nil: msg was in the read buffer
			*ev.msg = msg[:0]
			msgPool.Put(ev.msg)
		}
		ev.msg = nil
	}
}

// message reads the rest of the data message whose first frame step
// read: where it lies in the read buffer when it is all there (whole),
// else into a pooled buffer (ev.msg).
func (ev *eventConn) message() (MessageType, []byte, error) {
	rd := &ev.c.rd
	if b, ok, err := rd.whole(); ok {
		return MessageType(rd.op), b, err
	}
	ev.msg = msgPool.Get().(*[]byte)
	if rd.compressed {
		b, err := rd.compressedMessage((*ev.msg)[:0])
		if err != nil {
			return 0, nil, err
		}
		return MessageType(rd.op), b, nil
	}
	b, err := appendMessage((*ev.msg)[:0], rd.data)
	if err != nil {
		return 0, nil, err
	}
	return MessageType(rd.op), b, nil
}

// fillNow reads what has arrived without waiting; got reports whether
// anything did. An error is the read side's last (the connection ended).
func (ev *eventConn) fillNow() (got bool, err error) {
	rd := &ev.c.rd
	if ev.set == nil {
		return true, nil // no parking: the next read waits, as Read's
	}
	rd.now = ev.readNow
	rd.full = true // what is there goes to the pooled buffer, at once
	err = rd.fill()
	rd.now = nil
	switch {
	case err == nil:
		return true, nil
	case err == errWouldBlock:
		return false, nil
	}
	return false, rd.ioFailed(err)
}

// errWouldBlock: nothing has arrived.
var errWouldBlock = errors.New("websocket: nothing to read yet")

// readNow reads what the socket (or, over TLS, crypto/tls) holds, without
// waiting.
func (ev *eventConn) readNow(p []byte) (int, error) {
	if ev.direct {
		return rawReadNow(ev.rc, p)
	}
	// A read past its deadline does not touch the socket: it returns
	// what crypto/tls has decrypted or can, from bytes it holds.
	nc := ev.c.nc
	nc.SetReadDeadline(aLongTimeAgo)
	n, err := nc.Read(p)
	nc.SetReadDeadline(time.Time{})
	var ne interface{ Timeout() bool }
	if n == 0 && errors.As(err, &ne) && ne.Timeout() {
		return 0, errWouldBlock
	}
	return n, err
}

// park registers the connection with its readiness set, edge-triggered
// (park.AddEdge) when it reads its socket itself. It answers Parked (the
// connection is then the set's, and may already run again on another
// goroutine), Retry (something came since the last read: read again
// without waiting), or Refused (no parking: the next read waits on this
// goroutine).
func (ev *eventConn) park() park.AddResult {
	if ev.set == nil {
		return park.Refused
	}
	ev.deadline = 0
	if d := ev.c.opts.IdleTimeout; d > 0 {
		ev.deadline = time.Now().Add(d).UnixNano()
	}
	if !ev.direct {
		// Over TLS a read without waiting does not touch the socket
		// (readNow): bytes whose edge came while the connection ran
		// would wait there unseen. A one-shot registration, re-armed at
		// each park, reports them (epoll looks at the socket then).
		if ev.set.Add(ev) {
			return park.Parked
		}
		return park.Refused
	}
	return ev.set.AddEdge(ev)
}

// end closes the connection, if it is not closed yet, and reports err to
// the handler: the last event.
func (ev *eventConn) end(err error) {
	c := ev.c
	if ev.set != nil {
		ev.set.Forget(ev)
	}
	c.closeSocket(err)
	c.rd.release()
	ev.msg = nil
	ev.h.OnClose(c, err)
}

// unpark is closeSocket's: a parked connection is taken from its set and
// resumed, to find its socket closed and end.
func (ev *eventConn) unpark() {
	ev.vetoed.Store(true)
	if ev.set != nil && ev.set.Take(ev) {
		resumeEvent(ev)
	}
}

// resumers run woken event connections (park.Resumers, as the server's).
// Made in init: run reaches resumeEvent, which a variable's initializer
// may not refer back to.
var resumers *park.Resumers[*eventConn]

func init() { resumers = park.NewResumers((*eventConn).run, nil) }

func resumeEvent(ev *eventConn) { resumers.Resume(ev) }
