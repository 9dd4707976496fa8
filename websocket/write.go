package websocket

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// The write side. Two locks order the frames: msgLock is held by a
// message's writer for all its frames (so messages never interleave),
// frameLock for each frame (so a control frame can go between a streamed
// message's frames, never inside one). Both are channels, so a writer
// waiting for them gives up when its ctx ends or the socket closes.
//
// A server frame goes out in one write: a small one copied behind its
// header in a pooled buffer, a large one as two buffers (writev). A
// client frame is masked (§5.3) into pooled buffers of writeBuf bytes,
// the caller's slice left as it was, with a key drawn per frame from a
// per-connection ChaCha8 generator seeded from crypto/rand (§10.3: the
// key must be unpredictable to the application).

const (
	writeBuf   = 8192
	smallWrite = 2048 // a server frame larger than this goes out with writev
)

var writePool = sync.Pool{New: func() any { b := make([]byte, 0, writeBuf); return &b }}

// lock takes g, or fails when ctx ends or the socket closes.
func (c *Conn) lock(ctx context.Context, g *gate) error {
	if g.tryLock(&c.syncMu) {
		return nil
	}
	which, err := g.lockOr(&c.syncMu, ctx, c.sockDone.wait(&c.syncMu), nil)
	if which == 1 {
		return errClosed
	}
	return err
}

// writeFrame writes one frame. After a write fails, or its ctx ends in
// the middle of it, the stream may hold part of a frame: the connection
// is closed, and every later write fails.
func (c *Conn) writeFrame(ctx context.Context, op ws.Opcode, fin bool, p []byte) error {
	return c.writeFramePre(ctx, op, fin, false, p, nil)
}

// writeFramePre is writeFrame with the frame already encoded (pre, a
// server's frame: unmasked), written as it is on a server connection; a
// client encodes p, masked, as always. rsv1 marks a compressed message's
// frame (permessage-deflate).
func (c *Conn) writeFramePre(ctx context.Context, op ws.Opcode, fin, rsv1 bool, p, pre []byte) error {
	if err := c.lock(ctx, &c.frameLock); err != nil {
		return err
	}
	defer c.frameLock.unlock(&c.syncMu)
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.sockDone.done() {
		return errClosed
	}
	if !op.IsControl() {
		c.closeMu.Lock()
		sent := c.closeSent
		c.closeMu.Unlock()
		if sent {
			return errCloseSent
		}
	}
	if !c.wdl.arm(c, ctx) {
		return ctx.Err()
	}
	err := c.wdl.before(c)
	if err == nil {
		if pre != nil && !c.client {
			_, err = c.nc.Write(pre)
		} else {
			err = c.send(op, fin, rsv1, p)
		}
		if cut := c.wdl.after(c); cut != nil && err == nil {
			err = cut // the stream is reset, though the frame went out
		}
	}
	ctxErr := c.wdl.disarm(c)
	if err == nil {
		return nil
	}
	if c.sockDone.done() {
		c.writeErr = errClosed
		return errClosed
	}
	if ctxErr != nil {
		c.writeErr = fmt.Errorf("websocket: write interrupted by its context, connection closed: %w (%w)", ctxErr, net.ErrClosed)
	} else {
		c.writeErr = fmt.Errorf("websocket: write failed, connection closed: %w (%w)", err, net.ErrClosed)
	}
	// Reads report the end as one without a close frame (1006).
	c.closeSocket(&CloseError{Code: ws.CloseAbnormal, err: c.writeErr})
	return c.writeErr
}

// send encodes and writes one frame; the caller holds frameLock.
func (c *Conn) send(op ws.Opcode, fin, rsv1 bool, p []byte) error {
	h := ws.Header{Fin: fin, Rsv1: rsv1, Opcode: op, Length: int64(len(p))}
	if !c.client && len(p) > smallWrite {
		var a [ws.MaxHeaderLen]byte
		bufs := net.Buffers{ws.AppendHeader(a[:0], h), p}
		_, err := bufs.WriteTo(c.nc)
		return err
	}
	if c.client {
		h.Masked = true
		binary.LittleEndian.PutUint32(h.Mask[:], uint32(c.x.rng.Uint64()))
	}
	bp := writePool.Get().(*[]byte)
	defer writePool.Put(bp)
	b, pos := ws.AppendHeader((*bp)[:0], h), 0
	for {
		k := min(len(p), cap(b)-len(b))
		start := len(b)
		b = append(b, p[:k]...)
		if c.client {
			pos = ws.Mask(h.Mask, pos, b[start:])
		}
		p = p[k:]
		if _, err := c.nc.Write(b); err != nil {
			return err
		}
		if len(p) == 0 {
			return nil
		}
		b = b[:0]
	}
}

// writeControl writes a control frame, between a streamed message's
// frames if one is being written.
func (c *Conn) writeControl(ctx context.Context, op ws.Opcode, p []byte) error {
	return c.writeFrame(ctx, op, true, p)
}

// writeClose sends the close frame once; it reports whether this call
// sent it. A second call returns errCloseSent.
func (c *Conn) writeClose(ctx context.Context, code ws.CloseCode, reason string) (bool, error) {
	c.closeMu.Lock()
	if c.closeSent {
		c.closeMu.Unlock()
		return false, errCloseSent
	}
	c.closeSent = true
	c.closeMu.Unlock()
	var a [ws.MaxControlPayload]byte
	err := c.writeControl(ctx, ws.OpClose, ws.AppendClose(a[:0], code, reason))
	return err == nil, err
}

// Write sends p as one message of type typ, in one frame. It is safe to
// call from any number of goroutines: it waits for a message being
// written (by Write or a [Conn.Writer]) to end, and for the messages
// [Conn.Send] queued before it to be written. When ctx ends while
// Write waits, it returns ctx's error and nothing was sent; when ctx
// ends in the middle of the frame, the connection is closed (the peer
// would otherwise see half a frame). After the connection closed, or
// after Close sent its close frame, Write returns an error wrapping
// net.ErrClosed. Text is sent as given: it is the caller's to make it
// UTF-8 (RFC 6455 §5.6), as the peer fails the connection otherwise.
//
// Under permessage-deflate, a message of at least CompressionThreshold
// bytes is sent compressed, unless compressing does not shorten it; with
// a negative CompressionThreshold every message is sent compressed.
func (c *Conn) Write(ctx context.Context, typ MessageType, p []byte) error {
	if typ != MessageText && typ != MessageBinary {
		return fmt.Errorf("websocket: Write of message type %d: not MessageText or MessageBinary", int(typ))
	}
	if err := c.afterQueued(ctx); err != nil {
		return err
	}
	if err := c.lock(ctx, &c.msgLock); err != nil {
		return err
	}
	defer c.msgLock.unlock(&c.syncMu)
	return c.writeMessage(ctx, typ, p)
}

// writeMessage sends p as one message (compressed as Write says); the
// caller holds msgLock.
func (c *Conn) writeMessage(ctx context.Context, typ MessageType, p []byte) error {
	if d := c.negotiatedDeflate(); d != nil && len(p) >= d.threshold {
		sent, err := deflate(p, d.sent, d.window, d.threshold < 0, func(z []byte) error {
			return c.writeFramePre(ctx, ws.Opcode(typ), true, true, z, nil)
		})
		if sent && err == nil && d.keepSent {
			// The peer's window now ends with p: the next message's
			// context (what went uncompressed is not in it).
			d.sent = keepWindow(d.sent, p, sentWindow)
		}
		if sent || err != nil {
			return err
		}
	}
	return c.writeFrame(ctx, ws.Opcode(typ), true, p)
}

// PreparedMessage is a data message encoded once for many connections (a
// broadcast): its frame is built by NewPreparedMessage, and WritePrepared
// writes those same bytes on every server connection (a server's frames
// are not masked, so they are the same for all). A client connection
// masks its frames with keys of its own: there, WritePrepared is Write.
// A PreparedMessage is read-only once made: use it from any number of
// goroutines.
type PreparedMessage struct {
	typ   MessageType
	p     []byte // the payload, for client connections
	frame []byte // header and payload, as a server sends it
}

// NewPreparedMessage encodes a message of type typ with payload p (copied)
// for WritePrepared.
func NewPreparedMessage(typ MessageType, p []byte) (*PreparedMessage, error) {
	if typ != MessageText && typ != MessageBinary {
		return nil, fmt.Errorf("websocket: NewPreparedMessage of message type %d: not MessageText or MessageBinary", int(typ))
	}
	frame := ws.AppendServerFrame(make([]byte, 0, ws.MaxHeaderLen+len(p)), ws.Opcode(typ), true, p)
	return &PreparedMessage{typ: typ, p: frame[len(frame)-len(p):], frame: frame}, nil
}

// WritePrepared sends pm as Write sends a message: whole, never
// interleaved with another, safe from any number of goroutines; on a
// server connection without encoding it again. It is sent uncompressed,
// even under permessage-deflate (which the RFC allows per message).
func (c *Conn) WritePrepared(ctx context.Context, pm *PreparedMessage) error {
	if err := c.afterQueued(ctx); err != nil {
		return err
	}
	if err := c.lock(ctx, &c.msgLock); err != nil {
		return err
	}
	defer c.msgLock.unlock(&c.syncMu)
	return c.writeFramePre(ctx, ws.Opcode(pm.typ), true, false, pm.p, pm.frame)
}

// Writer starts a message of type typ whose data is written in pieces:
// the returned writer buffers up to 4 KiB and sends a frame each time its
// buffer fills (a Write of more than the buffer goes out as its own
// frame), and its Close sends the final frame. Until that Close the
// message holds the connection's writer: other messages wait (control
// frames do not). ctx covers every frame of the message. A streamed
// message is sent uncompressed, even under permessage-deflate (which the
// RFC allows per message).
func (c *Conn) Writer(ctx context.Context, typ MessageType) (WriteCloser, error) {
	if typ != MessageText && typ != MessageBinary {
		return nil, fmt.Errorf("websocket: Writer of message type %d: not MessageText or MessageBinary", int(typ))
	}
	if err := c.afterQueued(ctx); err != nil {
		return nil, err
	}
	if err := c.lock(ctx, &c.msgLock); err != nil {
		return nil, err
	}
	bp := writePool.Get().(*[]byte)
	return &messageWriter{c: c, ctx: ctx, op: ws.Opcode(typ), bp: bp, buf: (*bp)[:0:4096]}, nil
}

// WriteCloser is the writer of one streamed message, from [Conn.Writer].
type WriteCloser interface {
	Write(p []byte) (int, error)
	// Close sends the message's final frame and lets the next message
	// be written.
	Close() error
}

type messageWriter struct {
	c    *Conn
	ctx  context.Context
	op   ws.Opcode // the message's type, then OpContinuation
	bp   *[]byte
	buf  []byte
	err  error
	done bool
}

func (w *messageWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errWriterDone
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(w.buf)+len(p) <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if len(w.buf) > 0 {
		if w.err = w.frame(w.buf, false); w.err != nil {
			return 0, w.err
		}
		w.buf = w.buf[:0]
	}
	if len(p) < cap(w.buf) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if w.err = w.frame(p, false); w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func (w *messageWriter) frame(p []byte, fin bool) error {
	err := w.c.writeFrame(w.ctx, w.op, fin, p)
	w.op = ws.OpContinuation
	return err
}

func (w *messageWriter) Close() error {
	if w.done {
		return errWriterDone
	}
	w.done = true
	err := w.err
	if err == nil {
		err = w.frame(w.buf, true)
	}
	writePool.Put(w.bp)
	w.bp, w.buf = nil, nil
	w.c.msgLock.unlock(&w.c.syncMu)
	return err
}

// pingIDs numbers pings across the process: a connection keeps no
// counter of its own (8 bytes of every idle Conn).
var pingIDs atomic.Uint64

// Ping sends a ping and waits for its pong, which a Read in progress (on
// another goroutine) must receive: the blocking API reads only when the
// application does.
func (c *Conn) Ping(ctx context.Context) error {
	ch := make(chan struct{})
	id := pingIDs.Add(1)
	c.closeMu.Lock()
	if c.pings == nil {
		c.pings = make(map[uint64]chan struct{})
	}
	c.pings[id] = ch
	c.closeMu.Unlock()
	defer func() {
		c.closeMu.Lock()
		delete(c.pings, id)
		c.closeMu.Unlock()
	}()
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], id)
	if err := c.writeControl(ctx, ws.OpPing, p[:]); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.sockDone.wait(&c.syncMu):
		return errClosed
	}
}
