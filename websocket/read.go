package websocket

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// The read side. Bytes come into a small buffer (128 bytes, made at the
// first read that needs it) while a Read waits for a message, and a
// pooled bufio-sized one while messages flow: a read that fills the small
// buffer switches to the pooled one, which goes back to the pool when the
// input is drained at a message boundary. The event loop (events.go)
// reads into the pooled one only, and parks with none. A payload read
// that finds the buffer empty and wants at least directRead bytes goes
// from the socket straight into the caller's slice.

const (
	smallBuf   = 128
	bigBuf     = 4096
	directRead = 512
)

var readPool = sync.Pool{New: func() any { b := make([]byte, bigBuf); return &b }}

type reader struct {
	c     *Conn
	small *[smallBuf]byte // made by the first read into it
	big   *[]byte         // the pooled buffer, while messages flow
	buf   []byte          // small[:], *big, or nil with nothing buffered
	r, w  int             // unread bytes are buf[r:w]
	full  bool            // the last read filled the small buffer: take the big one
	short bool            // the last fill read less than it had room for: the socket was drained

	rules ws.Rules
	asm   ws.Assembler
	utf   ws.UTF8

	// The data frame being read.
	left       int64 // payload bytes not yet read
	masked     bool
	key        [4]byte
	pos        uint8 // the mask's phase (the payload's position mod 4)
	fin        bool
	op         ws.Opcode // the message's type
	inMsg      bool      // a message has begun and its end has not been read
	compressed bool      // the message's first frame had RSV1 (permessage-deflate)
	gen        uint64    // counts messages, so a stale message reader fails
	err        error     // sticky: the read side is done

	// now, when set, is what fill reads with instead of the socket's
	// Read: what has arrived, without waiting (events.go).
	now func([]byte) (int, error)
}

func (rd *reader) init(c *Conn, rules ws.Rules, limit int64, pending []byte) {
	rd.c, rd.rules = c, rules
	rd.asm.MaxMessage = limit
	switch {
	case len(pending) > bigBuf:
		rd.buf = make([]byte, len(pending)) // dropped at the first message boundary it drains at
	case len(pending) > smallBuf:
		rd.big = readPool.Get().(*[]byte)
		rd.buf = *rd.big
	case len(pending) > 0:
		rd.small = new([smallBuf]byte)
		rd.buf = rd.small[:]
	}
	rd.w = copy(rd.buf, pending)
}

// fill reads more bytes into the buffer, keeping the unread ones.
func (rd *reader) fill() error {
	if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	if rd.w == 0 && rd.big == nil && rd.now == nil && rd.c.direct {
		return rd.waitFill()
	}
	switch {
	case rd.full && rd.big == nil:
		rd.big = readPool.Get().(*[]byte)
		rd.w = copy(*rd.big, rd.buf[:rd.w])
		rd.buf = *rd.big
	case rd.buf == nil:
		if rd.small == nil {
			rd.small = new([smallBuf]byte)
		}
		rd.buf = rd.small[:]
	}
	var n int
	var err error
	if rd.now != nil {
		n, err = rd.now(rd.buf[rd.w:])
	} else {
		if err := rd.c.rdl.before(rd.c); err != nil {
			return err
		}
		n, err = rd.c.nc.Read(rd.buf[rd.w:])
		if cut := rd.c.rdl.after(rd.c); cut != nil {
			return cut
		}
	}
	rd.short = rd.w+n < len(rd.buf)
	rd.full = rd.big == nil && rd.w+n == len(rd.buf)
	rd.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// waitFill is fill with nothing buffered, on a socket the Conn reads
// itself: it waits for bytes holding no buffer (a Read waiting on an
// idle connection holds none), then reads what came into the pooled
// buffer, so that a message that arrived whole is read in one call. The
// socket's deadline (a ctx, the idle timeout) ends the wait as it ends a
// Read.
func (rd *reader) waitFill() error {
	rc, err := rd.c.rawConn()
	if err != nil {
		return err
	}
	if err := rd.c.rdl.before(rd.c); err != nil {
		return err
	}
	n, bp, err := rawRead(rc, nil, true)
	rd.c.rdl.after(rd.c) // a socket's, not a stream's: no error
	if err != nil {
		return err
	}
	rd.big, rd.buf, rd.r, rd.w = bp, *bp, 0, n
	rd.short, rd.full = n < len(rd.buf), false
	return nil
}

// rawConn is the socket's raw connection: the event loop's, kept since
// Start, or a new one (SyscallConn allocates a small value each call).
func (c *Conn) rawConn() (syscall.RawConn, error) {
	if ev := c.ev.Load(); ev != nil && ev.rc != nil {
		return ev.rc, nil
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return nil, errors.New("websocket: the socket has no raw access")
	}
	return sc.SyscallConn()
}

// release lets go of the buffer once it is drained: the pooled one goes
// back to the pool, and the next read starts small again, whatever
// filled the small buffer before (a message's first bytes).
func (rd *reader) release() {
	if rd.r != rd.w {
		return
	}
	if rd.big != nil {
		readPool.Put(rd.big)
		rd.big = nil
	}
	rd.buf, rd.r, rd.w, rd.full = nil, 0, 0, false
}

// whole returns the message whose first frame step read, in place, when
// that frame is the whole message, uncompressed, and its payload is all
// in the buffer (an echo's 1 KiB message, most messages of a busy
// connection): unmasked where it lies and checked as data checks it,
// with no pooled buffer and no copy. The slice is the read buffer's: the
// caller is done with it before the next read (the event loop, whose
// OnMessage gets it). ok false: read the message with data.
func (rd *reader) whole() (p []byte, ok bool, err error) {
	n := rd.left
	if rd.compressed || !rd.fin || n == 0 || n > int64(rd.w-rd.r) {
		return nil, false, nil
	}
	p = rd.buf[rd.r : rd.r+int(n)]
	rd.r += int(n)
	rd.left = 0
	if rd.masked {
		rd.pos = uint8(ws.Mask(rd.key, int(rd.pos), p) & 3)
	}
	if rd.op == ws.OpText && !rd.utf.Write(p) {
		return nil, true, rd.failed(ws.ErrInvalidUTF8)
	}
	if _, err := rd.data(nil); err != io.EOF { // the message's end, as data ends it
		return nil, true, err
	}
	return p, true, nil
}

// payload reads up to len(p) bytes of the current frame's payload,
// unmasked.
func (rd *reader) payload(p []byte) (int, error) {
	p = p[:min(int64(len(p)), rd.left)]
	var n int
	switch {
	case rd.r < rd.w:
		n = copy(p, rd.buf[rd.r:rd.w])
		rd.r += n
	case len(p) >= directRead:
		if err := rd.c.rdl.before(rd.c); err != nil {
			return 0, err
		}
		var err error
		rd.short = false // whether more waits behind this frame is unknown
		n, err = rd.c.nc.Read(p)
		if cut := rd.c.rdl.after(rd.c); cut != nil {
			return 0, cut
		}
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return 0, err
		}
	default:
		if err := rd.fill(); err != nil {
			return 0, err
		}
		n = copy(p, rd.buf[rd.r:rd.w])
		rd.r += n
	}
	if rd.masked {
		rd.pos = uint8(ws.Mask(rd.key, int(rd.pos), p[:n]) & 3)
	}
	rd.left -= int64(n)
	return n, nil
}

// frame reads the next frame header and checks it against the message
// in progress.
func (rd *reader) frame() (ws.Header, ws.Opcode, error) {
	for {
		h, n, err := ws.ParseHeader(rd.buf[rd.r:rd.w], rd.rules)
		if err == ws.ErrNeedMore {
			if err := rd.fill(); err != nil {
				return h, 0, rd.ioFailed(err)
			}
			continue
		}
		if err != nil {
			return h, 0, rd.failed(err)
		}
		rd.r += n
		op, err := rd.asm.Frame(h)
		if err != nil {
			return h, 0, rd.failed(err)
		}
		return h, op, nil
	}
}

// next reads frames, answering control frames, up to the next data
// frame, whose payload is then ready to read.
func (rd *reader) next() error {
	for {
		data, err := rd.step()
		if data || err != nil {
			return err
		}
	}
}

// step reads one frame: a control frame is read and acted on (data is
// false), a data frame's payload is then ready to read (data is true).
func (rd *reader) step() (data bool, err error) {
	h, op, err := rd.frame()
	if err != nil {
		return false, err
	}
	rd.left, rd.masked, rd.key, rd.pos, rd.fin = h.Length, h.Masked, h.Mask, 0, h.Fin
	if op.IsControl() {
		return false, rd.control(op)
	}
	if h.Opcode != ws.OpContinuation {
		rd.op, rd.inMsg, rd.compressed = op, true, h.Rsv1
		rd.utf.Reset()
	}
	return true, nil
}

// control reads a control frame's payload and acts on it (§5.5).
func (rd *reader) control(op ws.Opcode) error {
	var a [ws.MaxControlPayload]byte
	p := a[:rd.left]
	for got := 0; got < len(p); {
		n, err := rd.payload(p[got:])
		if err != nil {
			return rd.ioFailed(err)
		}
		got += n
	}
	c := rd.c
	switch op {
	case ws.OpPing:
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
		c.writeControl(ctx, ws.OpPong, p)
		cancel()
	case ws.OpPong:
		if len(p) == 8 {
			id := binary.BigEndian.Uint64(p)
			c.closeMu.Lock()
			if ch, ok := c.pings[id]; ok {
				close(ch)
				delete(c.pings, id)
			}
			c.closeMu.Unlock()
		}
		if c.x != nil && c.x.onPong != nil {
			c.inCallback.Add(1)
			c.x.onPong(p)
			c.inCallback.Add(-1)
		}
	case ws.OpClose:
		code, reason, err := ws.ParseClose(p)
		if err != nil {
			return rd.failed(err)
		}
		rd.err = c.gotClose(code, reason)
		return rd.err
	}
	return nil
}

// data reads the current message's payload into p, from the next frames
// when the current one is done; io.EOF at the message's end. Text is
// checked as UTF-8 piece by piece (§8.1), failing on the first bad byte.
func (rd *reader) data(p []byte) (int, error) {
	for rd.left == 0 {
		if rd.fin {
			if rd.op == ws.OpText && !rd.compressed && !rd.utf.Done() {
				return 0, rd.failed(ws.ErrInvalidUTF8)
			}
			rd.inMsg = false
			return 0, io.EOF
		}
		if err := rd.next(); err != nil {
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := rd.payload(p)
	if err != nil {
		return 0, rd.ioFailed(err)
	}
	if rd.op == ws.OpText && !rd.compressed && !rd.utf.Write(p[:n]) {
		return 0, rd.failed(ws.ErrInvalidUTF8)
	}
	return n, nil
}

// failed fails the connection for a rule the peer broke.
func (rd *reader) failed(err error) error {
	var e *ws.Error
	if !errors.As(err, &e) {
		e = &ws.Error{Code: ws.CloseProtocolError, Reason: "protocol error"}
	}
	rd.err = rd.c.fail(e)
	return rd.err
}

// ioFailed turns a failed socket read into the read side's last error.
func (rd *reader) ioFailed(err error) error {
	c := rd.c
	if ctxErr := c.rdl.ended(); ctxErr != nil {
		rd.err = fmt.Errorf("websocket: read interrupted by its context; the connection can no longer be read: %w", ctxErr)
		return rd.err
	}
	if c.sockDone.done() {
		rd.err = c.closedErr()
		return rd.err
	}
	var ne net.Error
	if c.opts.IdleTimeout > 0 && errors.As(err, &ne) && ne.Timeout() {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.CloseTimeout)
		c.writeClose(ctx, ws.CloseGoingAway, "idle timeout")
		cancel()
		rd.err = &CloseError{Code: ws.CloseAbnormal, Reason: "idle timeout", err: ErrIdleTimeout}
		c.closeSocket(rd.err)
		return rd.err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	rd.err = &CloseError{Code: ws.CloseAbnormal, err: err}
	c.closeSocket(rd.err)
	if c.closeRcvd.done() { // a concurrent Close's handshake got there first
		rd.err = c.closedErr()
	}
	return rd.err
}

// drainUntilClose reads and discards frames until the peer's close frame,
// for Close when no Read is in progress.
func (rd *reader) drainUntilClose(ctx context.Context) {
	if rd.err != nil {
		return
	}
	rd.c.rdl.disarm(rd.c)
	rd.c.rdl.arm(rd.c, ctx)
	defer rd.c.rdl.disarm(rd.c)
	var scratch [512]byte
	for {
		if _, err := rd.data(scratch[:]); err != nil && err != io.EOF {
			return
		}
		if !rd.inMsg && rd.next() != nil {
			return
		}
	}
}
