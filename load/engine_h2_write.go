package load

// The HTTP/2 connection's writes: frames are queued in wbuf under the
// group's mutex and go out in the order queued, written by the
// connection's writer goroutine or, after a read batch, by the reader.

import (
	"runtime"
	"time"
)

// h2ReaderFlush is the most the reader writes itself after a batch; more
// goes to the writer, so that a slow peer never holds up reading.
const h2ReaderFlush = 16 << 10

// kick wakes the writer unless it or the reader is already due to flush.
func (c *h2Conn) kick() {
	if !c.flushQueued && !c.flushing {
		c.flushQueued = true
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// writeLoop is the connection's writer, for the frames no read batch
// flushes (a connection's first requests, open-loop sends, request
// bodies): woken when frames are queued, it yields once so that other
// runnable slots queue theirs too, then writes them all.
func (c *h2Conn) writeLoop() {
	defer c.g.wg.Done()
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			return
		}
		runtime.Gosched()
		c.wmu.Lock()
		ok := c.writeLocked()
		c.wmu.Unlock()
		if !ok {
			return
		}
	}
}

// flushBatch is the reader's flush after a batch: it yields until the
// slots the batch woke have queued their next requests (or a few times),
// then writes what they queued in one write. The writer does it instead
// when it is writing already or there is much to write, so that the
// reader never waits on a peer that is not reading.
func (c *h2Conn) flushBatch() bool {
	g := c.g
	for range 3 {
		g.mu.Lock()
		done := c.owed <= 0 || c.dead
		g.mu.Unlock()
		if done {
			break
		}
		runtime.Gosched()
	}
	if c.wmu.TryLock() {
		g.mu.Lock()
		small := len(c.wbuf) <= h2ReaderFlush
		g.mu.Unlock()
		if small {
			ok := c.writeLocked()
			c.wmu.Unlock()
			return ok
		}
		c.wmu.Unlock()
	}
	g.mu.Lock()
	c.flushing = false
	c.kick()
	g.mu.Unlock()
	return true
}

// writeLocked writes what is queued, more of the request bodies first if
// a budget stopped them; c.wmu is held. It reports false once the
// connection is closed.
func (c *h2Conn) writeLocked() bool {
	g := c.g
	g.mu.Lock()
	if c.pumpMore {
		c.pump()
	}
	out := c.wbuf
	c.wbuf = c.spare[:0]
	c.flushQueued, c.flushing, c.owed = false, false, 0
	if c.pumpMore {
		c.kick()
	}
	dead := c.dead
	if !dead && len(out) > 0 && !g.stopped {
		// A write blocked on a server that stopped reading ends by
		// Timeout: the reader writes small batches itself, and blocked
		// there it would time nothing out (a run of -n requests would
		// never end). Moved at most every Timeout/2, under g.mu so that
		// it never undoes stop's deadline.
		if now := time.Now(); now.After(c.renew) {
			c.raw.SetWriteDeadline(now.Add(c.e.cfg.Timeout))
			c.renew = now.Add(c.e.cfg.Timeout / 2)
		}
	}
	g.mu.Unlock()
	if dead || len(out) == 0 {
		c.spare = out
		return !dead
	}
	_, err := c.nc.Write(out)
	c.spare = out[:0]
	if err != nil {
		g.mu.Lock()
		c.failLocked(classify(err, errWrite), time.Now())
		g.mu.Unlock()
		return false
	}
	return true
}
