package server

// HTTP/1.1 engine: writing to the socket: flushes, the write
// deadlines, and WriteStallTimeout (a write goes on while bytes move).

import (
	"context"
	"io"
	"net"
	"time"
)

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
	if c.retryWrites() {
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
	c.writeBroke = true
	if a := c.handler; a != nil && a.ctx != nil {
		a.ctx.cancel(context.Canceled)
	}
}

// writeStalling writes b with WriteStallTimeout's meaning: a write that
// times out goes on while bytes keep moving, and fails once none moved
// for a whole WriteStallTimeout (see stallRetry).
func (c *conn) writeStalling(b []byte) error {
	c.startWrite()
	if !c.retryWrites() {
		if err := c.writeTLSPieces(b); err != nil {
			return err
		}
		c.wrote()
		return nil
	}
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

// tlsStallPiece is how much of a large write goes to a TLS connection
// under one write deadline. A TLS write that timed out cannot be retried
// (crypto/tls fails the connection), so rather than one deadline for a
// whole Write, which would cut a client that reads slowly but steadily
// once one call outlasts WriteStallTimeout, each piece (a TLS record's
// worth) gets WriteStallTimeout from when it starts: a client that keeps
// reading is never cut, one that stopped is cut within a period.
const tlsStallPiece = 16 << 10

// writeTLSPieces writes b to a TLS connection in pieces of tlsStallPiece,
// the write deadline renewed (lazily, as armWrite does) before each.
func (c *conn) writeTLSPieces(b []byte) error {
	for len(b) > 0 {
		k := min(len(b), tlsStallPiece)
		c.armWrite(time.Now(), c.cfg.writeStall)
		if _, err := c.nc.Write(b[:k]); err != nil {
			return err
		}
		b = b[k:]
	}
	return nil
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
	if c.writeRenewFor == period && now.Before(c.writeRenewAt) {
		return // the test below, worked out when the deadline was set
	}
	if want := now.Add(period); c.writeDL.IsZero() || want.Sub(c.writeDL) > period/8 {
		c.writeDL = want
		c.nc.SetWriteDeadline(want)
		c.writeRenewFor, c.writeRenewAt = period, now.Add(period/8)
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
		c.writeDL, c.writeRenewFor = want, 0
		c.nc.SetWriteDeadline(want)
	}
}

// ownDeadline reports whether the handler set its own read deadline.
func (c *conn) ownDeadline() bool {
	c.dlMu.Lock()
	defer c.dlMu.Unlock()
	return c.ownReadDeadline
}

// writeVec writes v (consumed as it goes) with WriteStallTimeout's
// meaning, as writeStalling does for one buffer.
func (c *conn) writeVec(v net.Buffers) error {
	c.armStreamWrite()
	c.startWrite()
	if !c.retryWrites() { // crypto/tls has no writev: one Write per buffer, as WriteTo would
		for _, b := range v {
			if err := c.writeTLSPieces(b); err != nil {
				return err
			}
		}
		c.wrote()
		return nil
	}
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
	if c.retryWrites() {
		c.armWrite(c.now, c.cfg.writeStallCheck)
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
	if !c.retryWrites() || !isTimeout(err) || c.ctx.resp.ownWriteDeadline || d <= 0 {
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
	c.writeDL, c.writeRenewFor = next, 0
	c.nc.SetWriteDeadline(next)
	return true
}

// stallLastCheck: the last check before a cut comes WriteStallTimeout /
// stallLastCheck before it.
const stallLastCheck = 16
