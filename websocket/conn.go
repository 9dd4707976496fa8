package websocket

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// MessageType is a data message's type: text (UTF-8) or binary.
type MessageType int

// The data message types, with the values of their opcodes (RFC 6455 §5.6).
const (
	MessageText   MessageType = MessageType(ws.OpText)
	MessageBinary MessageType = MessageType(ws.OpBinary)
)

// String returns "text" or "binary".
func (t MessageType) String() string { return ws.Opcode(t).String() }

// Defaults of [Options].
const (
	// DefaultReadLimit is the largest message Read accepts by default:
	// 16 MiB, which the largest messages of the Autobahn test suite
	// (section 9) fit, and the codec's own default. A message is held
	// in memory as it arrives, never allocated whole from the length a
	// frame announces, so a peer must send the bytes to cost them.
	DefaultReadLimit = ws.DefaultMaxMessage
	// DefaultMaxFrame is the largest frame payload accepted by default
	// (ws.DefaultMaxPayload, 16 MiB).
	DefaultMaxFrame = ws.DefaultMaxPayload
	// DefaultCloseTimeout bounds the wait for the peer's close frame in
	// Close, and the write of a close frame when failing a connection.
	DefaultCloseTimeout = 5 * time.Second
)

// Options are the settings of a connection, on either side (embedded in
// [AcceptOptions] and [DialOptions]). The zero value is ready: the default
// limits, no keepalive, no idle timeout.
type Options struct {
	// ReadLimit is the largest message, in bytes; a longer one fails the
	// connection with 1009 as soon as a frame header announces it. Zero
	// means DefaultReadLimit (16 MiB); negative means no limit.
	ReadLimit int64
	// MaxFrame is the largest frame payload (ws.Rules.MaxPayload): zero
	// means DefaultMaxFrame (16 MiB); negative means no limit.
	MaxFrame int64
	// PingInterval, when positive, sends a ping every interval, from a
	// timer (no goroutine waits between pings). Its pongs come back
	// through Read, as every frame does.
	PingInterval time.Duration
	// IdleTimeout, when positive, closes a connection from which nothing
	// (no frame, no pong) has arrived for that long while a Read waits:
	// a close frame with 1001 (going away) is sent, the socket closed at
	// once without waiting for an answer a silent peer will not give,
	// and Read returns a [*CloseError] with 1006 wrapping
	// [ErrIdleTimeout] (no close frame was received, RFC 6455 §7.1.5).
	// With PingInterval below IdleTimeout, a live peer's pongs keep the
	// connection open. Zero: no idle timeout.
	IdleTimeout time.Duration
	// CloseTimeout bounds Close's wait for the peer's close frame; zero
	// means DefaultCloseTimeout (5 s).
	CloseTimeout time.Duration
	// OnPong, if set, is called with each pong's payload, on the
	// goroutine that reads; the payload is valid only during the call.
	OnPong func(payload []byte)
	// CompressionThreshold, once permessage-deflate is negotiated
	// (AcceptOptions.Compression, DialOptions.Compression), is the
	// shortest message Write compresses (when that shortens it); zero
	// means DefaultCompressionThreshold (128 bytes); negative: every
	// message is sent compressed, whatever its size.
	CompressionThreshold int
	// SendQueue bounds the bytes of the messages Send and SendPrepared
	// hold for the connection, the one being written included: zero
	// means DefaultSendQueue (256 KiB), negative no bound. Write,
	// WritePrepared and Writer queue nothing: they wait for the socket.
	SendQueue int
	// SendQueueFull is what Send does with a message the queue has no
	// room for: wait (SendBlock, the default) or fail with
	// ErrSendQueueFull (SendFail).
	SendQueueFull SendPolicy
}

// connOptions are the Options every Conn keeps (the limits went to its
// reader, the rarer settings to connExtras): an idle connection's every
// byte counts.
type connOptions struct {
	IdleTimeout, CloseTimeout time.Duration
}

// connExtras are a Conn's settings that most connections do not use,
// made only for one that does.
type connExtras struct {
	rng          *rand.ChaCha8 // masking keys (a client's), under frameLock
	dfl          *negotiated   // permessage-deflate (deflate.go), when negotiated
	subprotocol  string
	onPong       func(payload []byte)
	pingInterval time.Duration
	keepalive    *time.Timer
}

// Conn is a WebSocket connection (RFC 6455), from [Accept] or [Dial].
//
// Writes ([Conn.Write], [Conn.Writer], [Conn.Send], [Conn.Ping],
// [Conn.Close]) are safe from any number of goroutines: the frames of different messages
// never interleave, and a streamed message holds the connection's writer
// until its Close, with control frames (pongs, pings, the close frame)
// allowed between its frames. A write after the connection closed
// returns an error wrapping net.ErrClosed; nothing panics.
//
// Reads ([Conn.Read], [Conn.Reader]) are meant for one goroutine at a
// time (others wait). Pings are answered, pongs delivered and the close
// handshake completed by whichever call is reading, so an application
// must keep reading to see its peer's control frames.
//
// An idle Conn (a Read waiting for the next message) holds its struct
// (448 bytes: no channel until a goroutine must wait), a 128-byte read
// buffer, the net.Conn, and the goroutine blocked in Read: no pooled
// buffer. A 4 KiB buffer is taken from a pool while messages flow
// and given back when the input is drained at a message boundary; writes
// use pooled buffers for the length of one frame.
type Conn struct {
	nc        net.Conn
	client    bool  // this end is the client: it masks, and reads unmasked frames
	direct    bool  // nc is the socket itself (not TLS) on a platform with readiness sets: reads wait without a buffer (waitFill)
	sendFail  bool  // Options.SendQueueFull is SendFail
	sendLimit int32 // Options.SendQueue, resolved (at most 2 GiB)
	opts      connOptions
	x         *connExtras // what few connections have: nil for most

	rd reader // the read side, under readLock

	syncMu    sync.Mutex // the gates' and events' (sync.go)
	readLock  gate       // one reader at a time (a ctx can end the wait)
	msgLock   gate       // held by a message's writer for all its frames
	frameLock gate       // held for one frame's write
	writeErr  error      // sticky, under frameLock

	// Deadline arming for ctx (see deadline.go).
	rdl, wdl deadlineArm

	closeMu    sync.Mutex // guards what follows, to pings
	closeSent  bool
	sockClosed bool                     // closeSocket ran
	peerClose  *CloseError              // the peer's close frame, once read
	closeRcvd  event                    // the peer's close frame was read
	sockDone   event                    // the socket closed
	sockErr    error                    // what reads and writes return once the socket is closed
	pings      map[uint64]chan struct{} // Ping's waiters, by the id their ping carries (pingIDs)
	sq         *sendQueue               // Send's queue, while its writer runs (send.go)

	ev atomic.Pointer[eventConn] // set by Start (events.go)

	// inCallback counts the handler's callbacks running on the goroutine
	// that reads (OnMessage, OnPong): a Close from one cannot wait for
	// the peer's answer, which that goroutine reads once it returns.
	inCallback atomic.Int32
}

func newConn(nc net.Conn, client bool, subprotocol string, opts Options, pending []byte, dfl negotiated) *Conn {
	if opts.ReadLimit == 0 {
		opts.ReadLimit = DefaultReadLimit
	}
	if opts.MaxFrame == 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.CloseTimeout <= 0 {
		opts.CloseTimeout = DefaultCloseTimeout
	}
	c := &Conn{
		nc:     nc,
		client: client,
		opts:   connOptions{opts.IdleTimeout, opts.CloseTimeout},
	}
	if client || dfl.on || subprotocol != "" || opts.OnPong != nil || opts.PingInterval > 0 {
		c.x = &connExtras{subprotocol: subprotocol, onPong: opts.OnPong, pingInterval: opts.PingInterval}
	}
	switch q := opts.SendQueue; {
	case q == 0:
		c.sendLimit = DefaultSendQueue
	case q < 0:
		c.sendLimit = -1
	default:
		c.sendLimit = int32(min(q, math.MaxInt32))
	}
	c.sendFail = opts.SendQueueFull == SendFail
	c.direct = park.Supported && any(park.Socket(nc)) == any(nc)
	role := ws.Server
	if client {
		role = ws.Client
		var seed [32]byte
		crand.Read(seed[:])
		c.x.rng = rand.NewChaCha8(seed)
	}
	c.rd.init(c, ws.Rules{Role: role, MaxPayload: opts.MaxFrame, Deflate: dfl.on}, opts.ReadLimit, pending)
	if dfl.on {
		dfl.threshold = opts.CompressionThreshold
		if dfl.threshold == 0 {
			dfl.threshold = DefaultCompressionThreshold
		}
		c.x.dfl = &dfl
	}
	if opts.PingInterval > 0 {
		// Created stopped and then started, so that the first tick sees
		// the field set.
		c.x.keepalive = time.AfterFunc(time.Duration(1<<63-1), c.keepalivePing)
		c.x.keepalive.Reset(opts.PingInterval)
	}
	return c
}

// negotiatedDeflate returns the connection's permessage-deflate, or nil.
func (c *Conn) negotiatedDeflate() *negotiated {
	if c.x == nil {
		return nil
	}
	return c.x.dfl
}

// Subprotocol returns the subprotocol both ends agreed on
// (Sec-WebSocket-Protocol), or "" if none.
func (c *Conn) Subprotocol() string {
	if c.x == nil {
		return ""
	}
	return c.x.subprotocol
}

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr returns the peer's network address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// keepalivePing sends a ping without waiting for its pong and schedules
// the next; a ping that cannot be written within the interval is skipped.
func (c *Conn) keepalivePing() {
	if c.sockDone.done() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.x.pingInterval)
	c.writeControl(ctx, ws.OpPing, nil)
	cancel()
	c.x.keepalive.Reset(c.x.pingInterval)
}

// Close starts the close handshake (RFC 6455 §7.1.2): it sends a close
// frame with code and reason (after the messages [Conn.Send] queued, if
// they are written within CloseTimeout), waits up to CloseTimeout for
// the peer's close frame, then closes the socket. A Read in progress reads the
// peer's frame (and returns its [*CloseError]); with none, Close reads
// and discards data messages itself while it waits.
//
// Called from a callback of the event API or from OnPong (or while one
// runs), Close returns once its close frame is sent: the goroutine that
// reads the peer's answer is the one in the callback, and it takes the
// answer, closes the socket and reports the end (OnClose) when the
// callback returns, CloseTimeout after Close at the latest.
//
// code must be one a close frame may carry (ws.CloseCode.Valid), or
// CloseNoStatus for a close frame without a code; reason at most 123
// bytes of UTF-8. If the peer closed first, or the connection is gone,
// Close just closes the socket and returns nil or the reason it could
// not send.
func (c *Conn) Close(code ws.CloseCode, reason string) error {
	if !(code.Valid() || code == ws.CloseNoStatus && reason == "") || len(reason) > ws.MaxCloseReason || !utf8.ValidString(reason) {
		return fmt.Errorf("websocket: Close(%d, %q): not a code and reason a close frame may carry (RFC 6455 §7.4, a reason of at most 123 bytes of UTF-8)", uint16(code), reason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
	defer cancel()
	c.afterQueued(ctx) // what Send queued goes before the close frame, within CloseTimeout
	sent, err := c.writeClose(ctx, code, reason)
	switch {
	case err == errCloseSent:
		// A Close before this one is in its handshake (it closes the
		// socket when the answer comes, or at its CloseTimeout), or the
		// peer closed first (the reader closes it then): wait for that,
		// within this call's CloseTimeout, rather than cut it short;
		// from a callback, the reading goroutine ends it (below).
		if c.inCallback.Load() == 0 {
			select {
			case <-c.sockDone.wait(&c.syncMu):
			case <-ctx.Done():
			}
			c.closeSocket(errClosed)
		}
		return nil
	case err != nil || !sent:
		c.closeSocket(errClosed)
		return err
	}
	if c.inCallback.Load() > 0 {
		// From a callback (or while one runs): the reading goroutine
		// takes the peer's answer when the callback returns, and closes
		// the socket then (OnClose follows); CloseTimeout bounds it.
		time.AfterFunc(c.opts.CloseTimeout, func() { c.closeSocket(errClosed) })
		return nil
	}
	if which, err := c.readLock.lockOr(&c.syncMu, ctx, c.closeRcvd.wait(&c.syncMu), c.sockDone.wait(&c.syncMu)); which == 0 && err == nil {
		c.rd.drainUntilClose(ctx) // no Read in progress: read the answer here
		c.readLock.unlock(&c.syncMu)
	}
	c.closeSocket(errClosed)
	return nil
}

// CloseNow closes the socket without a close handshake: the peer sees
// the connection end with 1006.
func (c *Conn) CloseNow() error {
	c.closeSocket(errClosed)
	return nil
}

// closeSocket closes the socket once; err is what reads and writes then
// return (unless the peer's close frame came, which reads report).
func (c *Conn) closeSocket(err error) {
	c.closeMu.Lock()
	if c.sockClosed {
		c.closeMu.Unlock()
		return
	}
	c.sockClosed, c.sockErr = true, err
	c.closeMu.Unlock()
	if c.x != nil && c.x.keepalive != nil {
		c.x.keepalive.Stop()
	}
	c.nc.Close()
	c.sockDone.fire(&c.syncMu)
	if ev := c.ev.Load(); ev != nil {
		ev.unpark()
	}
}

// closed returns what the connection's end says, once the socket is
// closed: the peer's close frame, or the reason this end closed it.
func (c *Conn) closedErr() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.peerClose != nil {
		return c.peerClose
	}
	if c.sockErr != nil {
		return c.sockErr
	}
	return errClosed
}

// fail fails the connection (RFC 6455 §7.1.7): it sends a close frame
// with the error's code and reason, if none was sent yet, and closes the
// socket. It returns the error Read reports.
func (c *Conn) fail(e *ws.Error) error {
	err := failure(e)
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
	c.writeClose(ctx, e.Code, e.Reason)
	cancel()
	c.linger()
	c.closeSocket(err)
	return err
}

// linger half-closes the socket and discards what the peer still sends,
// a bounded while: closing with unread input would send a reset, which
// can make the peer's TCP drop the close frame before its application
// reads it (as net/http's server does before closing after an error).
func (c *Conn) linger() {
	cw, ok := c.nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, c.nc, lingerBytes)
}

// How long and how much linger discards.
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// gotClose records the peer's close frame and answers it (§5.5.1: with
// the same code, or 1000 for a close frame without one), unless this end
// sent its own first, then closes the socket.
func (c *Conn) gotClose(code ws.CloseCode, reason []byte) error {
	ce := &CloseError{Code: code, Reason: string(reason)}
	c.closeMu.Lock()
	if c.peerClose == nil {
		c.peerClose = ce
		c.closeRcvd.fire(&c.syncMu)
	}
	c.closeMu.Unlock()
	reply := code
	if reply == ws.CloseNoStatus {
		reply = ws.CloseNormal
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
	c.writeClose(ctx, reply, "")
	cancel()
	c.closeSocket(ce)
	return ce
}
