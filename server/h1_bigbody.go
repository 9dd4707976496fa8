package server

import (
	"io"
	"net"
	"os"
	"time"

	"github.com/hotpathhq/hotpath/internal/tcpcork"
	"github.com/hotpathhq/hotpath/wire"
)

// Big bodies skip the write buffer. Small writes are copied into the
// connection's write buffer so that a response leaves in one write with
// its pipelined neighbours; a large one would be copied for nothing. For
// http.Handlers (whose Write arguments escape anyway, through the
// interface):
//
//   - a Write of directWriteMin bytes or more, once the head is due, goes
//     to the socket with what is buffered before it in one writev;
//   - ReadFrom with a declared Content-Length hands the source to the TCP
//     connection's ReadFrom: sendfile for an *os.File (http.FileServer,
//     http.ServeContent), splice for a socket.
//
// The native API's Write must not let its argument escape (handlers
// write from stack buffers), so no writev: on a TCP connection a Write of
// directWriteMin bytes or more, once the head is due, sends what is
// buffered (the head, a chunk header) first, then p in one write of its
// own (writeTCP).
//
// All keep WriteStallTimeout's meaning: a transfer that times out while
// still moving is given a fresh timeout (see writeStalling).

// directWriteMin is the smallest Write sent straight to the socket.
const directWriteMin = 16 << 10

// writeDirect sends p as body after the head was committed, in one
// writev with the buffered output before it (the head, a chunk header).
func (r *response) writeDirect(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	c := r.x.c
	var err error
	switch {
	case r.state == respChunked:
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
		err = c.writeVec(net.Buffers{c.wbuf, p, crlf})
	case len(c.wbuf) > 0:
		err = c.writeVec(net.Buffers{c.wbuf, p})
	default:
		c.armStreamWrite()
		err = c.writeStalling(p)
	}
	c.wbuf = c.wbuf[:0]
	if err != nil {
		r.err = err
		c.writeFailed()
		return 0, err
	}
	r.sent += int64(len(p))
	return len(p), nil
}

var crlf = []byte("\r\n")

// writeTCP is writeDirect for the native API, on a TCP connection: the
// buffered output goes first in a write of its own, then p, so that p
// never escapes (writeStallingTCP).
func (r *response) writeTCP(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	c := r.x.c
	if r.state == respChunked {
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
	}
	err := c.flush()
	if err == nil {
		c.armStreamWrite()
		err = c.writeStallingTCP(p)
	}
	if err != nil {
		r.err = err
		c.writeFailed()
		return 0, err
	}
	if r.state == respChunked {
		c.wbuf = wire.AppendChunkEnd(c.wbuf)
	}
	r.sent += int64(len(p))
	return len(p), nil
}

// kernelSource reports whether src is something the TCP connection's
// ReadFrom moves inside the kernel (sendfile from a file, splice from a
// socket), directly or under one io.LimitedReader. Other readers are
// copied through a pooled buffer: net's own fallback would allocate a
// 32 KiB one per call.
func kernelSource(src io.Reader) bool {
	if lr, ok := src.(*io.LimitedReader); ok {
		src = lr.R
	}
	switch src.(type) {
	case *os.File, *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// readFromDirect sends src as the body of a response with a declared
// length, through the connection's ReadFrom (sendfile, splice). It
// reports ok=false, having sent nothing, when the response cannot go that
// way (no declared length, no body, chunked, a connection without
// ReadFrom): the caller copies instead.
func (r *response) readFromDirect(src io.Reader) (n int64, ok bool, err error) {
	c := r.x.c
	rf, isRF := c.nc.(io.ReaderFrom)
	if !isRF || !c.retryWrites || r.declaredLen < 0 || !kernelSource(src) {
		return 0, false, nil
	}
	if r.state == respCollecting {
		if err := r.commit(); err != nil {
			return 0, true, err
		}
	}
	if r.state != respFixed || r.discard {
		return 0, false, nil
	}
	// One LimitedReader over the source itself: the TCP connection's
	// sendfile looks through one level only.
	lr := &io.LimitedReader{R: src, N: r.declaredLen - r.sent}
	outer, isLR := src.(*io.LimitedReader)
	if isLR {
		lr.R, lr.N = outer.R, min(outer.N, lr.N)
	}
	// Corked before the head is flushed, so that the head leaves with the
	// file's first bytes; uncorked as soon as the copy ends, which sends
	// the last partial segment.
	corked := tcpcork.File(lr.R, lr.N) && tcpcork.Set(c.nc, true)
	if err := c.flush(); err != nil {
		if corked {
			tcpcork.Set(c.nc, false)
		}
		r.err = err
		return 0, true, err
	}
	before := lr.N
	err = c.readFromStalling(rf, lr)
	if corked {
		tcpcork.Set(c.nc, false)
	}
	n = before - lr.N
	r.sent += n
	if isLR {
		outer.N -= n
	}
	if err != nil {
		r.err = err
		c.writeFailed()
		return n, true, err
	}
	if r.sent == r.declaredLen && (!isLR || outer.N > 0) {
		// The declared length is sent: more from src is an error, as for
		// Write.
		var one [1]byte
		if k, _ := src.Read(one[:]); k > 0 {
			return n, true, ErrBodyTooLong
		}
	}
	return n, true, nil
}

// writeVec writes v (consumed as it goes) with WriteStallTimeout's
// meaning, as writeStalling does for one buffer.
func (c *conn) writeVec(v net.Buffers) error {
	c.armStreamWrite()
	c.startWrite()
	for {
		n, err := v.WriteTo(c.nc)
		if err == nil {
			c.wrote()
			return nil
		}
		if !c.stallRetry(err, n > 0) {
			return err
		}
	}
}

// readFromStalling is rf.ReadFrom(lr) with WriteStallTimeout's meaning.
func (c *conn) readFromStalling(rf io.ReaderFrom, lr *io.LimitedReader) error {
	c.armStreamWrite()
	c.startWrite()
	for lr.N > 0 {
		n, err := rf.ReadFrom(lr)
		if err == nil {
			c.wrote()
			return nil // the source ended, or the limit was reached
		}
		if !c.stallRetry(err, n > 0) {
			return err
		}
	}
	return nil
}

// armStreamWrite arms the write deadline for a write in the middle of a
// response. On TCP it is armed lazily from the head's time, without a
// clock reading, for a fraction of WriteStallTimeout: a timeout is only a
// check, which goes on while bytes move (see stallRetry). On TLS, whose
// timed-out writes cannot be retried, for the whole WriteStallTimeout
// from now.
func (c *conn) armStreamWrite() {
	if c.retryWrites {
		period := c.cfg.writeStall
		if period > 0 {
			period = stallCheck(period)
		}
		c.armWrite(c.now, period)
	} else {
		c.armWrite(time.Now(), c.cfg.writeStall)
	}
}

// startWrite notes that a write begins. While the response is watched (a
// deadline expired during it), the clock dates it, as a time bytes moved:
// the stall is counted from there, for time the handler spent with
// nothing to write (between events, say) is not the client's, and the
// write before this one ended just before it.
func (c *conn) startWrite() {
	if c.watchWrites {
		c.movedAt, c.moved = time.Now(), false
	}
}

// wrote notes a write that completed: bytes moved.
func (c *conn) wrote() { c.moved = true }

// stallRetry decides, after a write error, whether to go on: only after a
// timeout on a connection whose writes can be retried, under a stall
// timeout of the server's, before the absolute WriteTimeout, and while
// bytes moved less than WriteStallTimeout ago. progress says whether the
// write that failed moved bytes, which it did since the last check (a
// retried write starts at one).
//
// The write deadline is a check, every WriteStallTimeout/stallChecks,
// armed lazily from the request head's time until the first one. At a
// check, bytes that moved since the last one (progress, or writes that
// completed meanwhile) are dated now: no earlier than they moved, so no
// write is cut less than WriteStallTimeout after bytes last went to the
// socket, and none more than one check later than that. The first check
// of a response dates them now as well, its deadline being maybe older
// than the response. From then on the response is watched: each write
// dates its start (startWrite), so that time with nothing to write counts
// for nothing. Each check retries the write, which hands the socket what
// the client freed since the last one (the kernel wakes a waiting write
// only once a third of its send buffer is free); the last check comes
// WriteStallTimeout/stallLastCheck before the cut, so that a client that
// read shortly before it is still seen moving.
func (c *conn) stallRetry(err error, progress bool) bool {
	d := c.cfg.writeStall
	if !c.retryWrites || !isTimeout(err) || c.ctx.resp.ownWriteDeadline || d <= 0 {
		return false
	}
	now := time.Now()
	var abs time.Time
	if wt := c.cfg.writeTimeout; wt > 0 {
		if abs = c.now.Add(wt); !now.Before(abs) {
			return false
		}
	}
	if progress || c.moved {
		c.movedAt, c.moved = now, false
	}
	c.watchWrites = true
	cut := c.movedAt.Add(d)
	if !now.Before(cut) {
		return false
	}
	next := now.Add(stallCheck(d))
	if last := cut.Add(-d / stallLastCheck); now.Before(last) && next.After(last) {
		next = last
	} else if next.After(cut) {
		next = cut
	}
	if !abs.IsZero() && next.After(abs) {
		next = abs
	}
	c.writeDL = next
	c.nc.SetWriteDeadline(next)
	return true
}

// stallLastCheck: the last check before a cut comes WriteStallTimeout /
// stallLastCheck before it.
const stallLastCheck = 16
