package load

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2Conn is one HTTP/2 connection of a group. Every field but those the
// reader or the writer keeps for itself is guarded by the group's mutex.
type h2Conn struct {
	g   *h2Group
	e   *h2Engine
	raw net.Conn // the TCP connection: closed, or its deadline moved, to stop
	nc  net.Conn // raw, or the TLS connection over it

	streams     h2Streams        // streams in flight, by ID
	ids         h2.ClientStreams // stream IDs; streams open, or reserved by a slot about to open one
	peer        h2.PeerSettings  // the server's SETTINGS; MAX_CONCURRENT_STREAMS 0 until its first
	sendWins    []*h2.Window     // the streams' send windows, gathered for a SETTINGS frame
	held        uint32           // room held back: streams refused since the last one finished
	opened      int64            // streams opened so far
	roomWait    []*h2Stream      // slots waiting for room under maxStreams, in order
	sending     []*h2Stream      // streams with request body left to send, in order
	pumpMore    bool             // pump stopped at its budget, not at a window
	sendWin     h2.Window        // the connection's send window
	in          h2.Inflow        // the connection's receive window
	wbuf        []byte           // frames queued for the writer
	flushQueued bool             // the writer has been woken for wbuf
	flushing    bool             // the reader flushes wbuf after its batch: no need to wake the writer
	owed        int              // slots woken by the reader's batch that have not queued their next request
	sizeUpdate  bool             // the next field block starts with a table size update
	tmp         []byte           // the first field block, with its size update
	retired     bool             // no new streams: GOAWAY, IDs spent, keep-alive off
	retiredWell bool             // retired before any failure
	dead        bool             // closed
	failed      bool             // closed by an error, failKind
	failKind    errKind
	lastRead    time.Time // the last read batch
	checkAt     time.Time // the next sweep for requests past their timeout

	// The reader's own.
	dec        h2.Decoder
	asm        h2.Assembler
	fields     []h2.Field
	blockBytes int64 // frame bytes of the field block being assembled
	blockErr   error // the stream error of the block's HEADERS frame, for when its CONTINUATION ends it
	sawFrame   bool
	scratch    []*h2Stream

	wake chan struct{} // the writer's: wbuf has frames
	quit chan struct{} // closed when the reader ends

	wmu   sync.Mutex // held while writing: frames go out in the order queued
	spare []byte     // the buffer wbuf swaps with, guarded by wmu
	renew time.Time  // when the write deadline is moved on next, guarded by wmu
}

func newH2Conn(g *h2Group, raw, nc net.Conn) *h2Conn {
	c := &h2Conn{
		g: g, e: g.e, raw: raw, nc: nc,
		sendWin:    h2.ConnWindow(h2.DefaultInitialWindowSize),
		peer:       h2.NewPeerSettings(0, 0), // no stream before the server's SETTINGS; none set: no limit
		sizeUpdate: true,
		wake:       make(chan struct{}, 1),
		quit:       make(chan struct{}),
	}
	c.streams.init(g.e.cfg.streams())
	if id := g.e.firstID; id > 0 {
		c.ids.StartAt(id)
	}
	c.in.Init(h2.DefaultInitialWindowSize, false)
	c.wbuf = make([]byte, 0, 16<<10)
	c.spare = make([]byte, 0, 16<<10)
	c.wbuf = append(c.wbuf, h2.ClientPreface...)
	c.wbuf = h2.AppendSettings(c.wbuf,
		h2.Setting{ID: h2.SettingEnablePush, Val: 0},
		h2.Setting{ID: h2.SettingInitialWindowSize, Val: h2Window})
	c.wbuf = h2.AppendWindowUpdate(c.wbuf, 0, c.in.Grow(h2Window))
	c.flushQueued = true
	c.wake <- struct{}{}
	c.lastRead = time.Now()
	c.checkAt = c.lastRead.Add(g.e.cfg.Timeout / 2)
	// Armed before stop can see c (in readLoop, it could undo the past
	// deadline of a stop before readLoop's start: a wait for checkAt).
	nc.SetReadDeadline(c.checkAt)
	return c
}

func (c *h2Conn) usable() bool { return !c.retired && !c.dead }

// mayOpenGranted reports whether a slot granted room on c may still open
// its stream. Spent identifiers retire c only for the slots not granted:
// Reserve kept an identifier for each granted one, and opening it keeps
// every identifier of the connection in use. A GOAWAY or one request per
// connection allows no new stream at all.
func (c *h2Conn) mayOpenGranted() bool {
	return !c.dead && (!c.retired || !c.ids.GoingAway() && !c.e.cfg.DisableKeepAlive)
}

// room reports whether c may open one more stream: under the server's
// MAX_CONCURRENT_STREAMS, less one for each stream it refused
// (REFUSED_STREAM) since the last one finished, as a server may count a
// stream a little after it ended it. With nothing in flight there is
// room whatever was refused: nothing would finish to give it back.
func (c *h2Conn) room() bool {
	active, limit := c.ids.Active(), c.peer.MaxConcurrentStreams
	return active < limit && (active == 0 || active+c.held < limit)
}

// open starts st's request for target on c, whose room the caller
// reserved, and queues its frames. It reports whether c had carried a
// stream before.
func (c *h2Conn) open(st *h2Stream, target uint16) (reused bool) {
	id := c.ids.Open()
	if c.owed > 0 {
		c.owed--
	}
	body := c.e.bodies[target]
	*st = h2Stream{wake: st.wake, id: id, target: target, start: st.start, body: body, sendWin: h2.StreamWindow(c.peer.InitialWindowSize)}
	st.in.Init(h2Window, true)
	c.streams.put(st)
	reused = c.opened > 0
	c.opened++
	n := len(c.wbuf)
	if f := c.e.frames[target]; f != nil && !c.sizeUpdate {
		// The frame rendered once, its stream ID set.
		c.wbuf = append(c.wbuf, f...)
		binary.BigEndian.PutUint32(c.wbuf[n+5:], id)
	} else {
		block := c.e.blocks[target]
		if c.sizeUpdate {
			c.sizeUpdate = false
			c.tmp = append(append(c.tmp[:0], 0x20), block...) // size update to 0 (RFC 7541 §6.3)
			block = c.tmp
		}
		c.wbuf = h2.AppendHeaderBlock(c.wbuf, id, len(body) == 0, block, c.peer.MaxFrameSize)
	}
	st.bytesOut = int64(len(c.wbuf) - n)
	if len(body) > 0 {
		st.queued = true
		c.sending = append(c.sending, st)
		c.pump()
	}
	if c.ids.Spent() || c.e.cfg.DisableKeepAlive {
		c.retire() // stream IDs spent, or one request per connection
	}
	c.kick()
	return reused
}

// pump queues DATA frames of the request bodies waiting to be sent, in
// order, as far as the send windows allow and up to h2PumpBudget bytes.
func (c *h2Conn) pump() {
	budget := h2PumpBudget
	queued := false
	for i := 0; i < len(c.sending) && budget > 0; {
		st := c.sending[i]
		n := h2.SendLimit(&c.sendWin, &st.sendWin, c.peer.MaxFrameSize, min(len(st.body), budget))
		if n == 0 {
			if c.sendWin.Available() <= 0 {
				break
			}
			i++ // this stream's window is shut; the next may be open
			continue
		}
		c.sendWin.Consume(uint32(n))
		st.sendWin.Consume(uint32(n))
		var fl h2.Flags
		if n == len(st.body) {
			fl = h2.FlagEndStream
		}
		c.wbuf = h2.AppendData(c.wbuf, st.id, fl, st.body[:n], 0)
		st.bytesOut += int64(h2.FrameHeaderLen + n)
		st.body = st.body[n:]
		budget -= n
		queued = true
		if len(st.body) == 0 {
			st.queued = false
			c.sending = append(c.sending[:i], c.sending[i+1:]...)
		}
	}
	c.pumpMore = budget <= 0 && len(c.sending) > 0
	if queued {
		c.kick()
	}
}

// finish completes st (done, cut, failed or to retry) and wakes its slot.
func (c *h2Conn) finish(st *h2Stream, now time.Time) {
	c.streams.del(st.id)
	if st.queued {
		st.queued = false
		for i, q := range c.sending {
			if q == st {
				c.sending = append(c.sending[:i], c.sending[i+1:]...)
				break
			}
		}
	}
	c.ids.Done(st.id)
	c.owed++
	if st.retry && st.err == errReset {
		c.held++ // refused: the server has less room than it says, for now
	} else if c.held > 0 {
		c.held--
	}
	st.end = now
	st.wake <- struct{}{}
	c.grant()
	c.drained()
}

// grant hands the room finished streams left to the slots waiting for
// it, in order, the room reserved for them.
func (c *h2Conn) grant() {
	for len(c.roomWait) > 0 && c.room() && c.usable() && c.ids.Reserve(c.peer.MaxConcurrentStreams) {
		w := c.roomWait[0]
		c.roomWait = append(c.roomWait[:0], c.roomWait[1:]...)
		w.granted = true
		w.wake <- struct{}{}
	}
}

// retire takes c out of service for new streams: the slots waiting for
// room go to the next connection, and c closes once its streams end.
func (c *h2Conn) retire() {
	if c.retired {
		return
	}
	c.retired = true
	if c.g.cur == c {
		c.g.cur = nil
	}
	c.retiredWell = !c.failed
	for _, w := range c.roomWait {
		w.wake <- struct{}{}
	}
	clear(c.roomWait)
	c.roomWait = c.roomWait[:0]
	c.drained()
}

// drained closes a retired connection with nothing left in flight.
func (c *h2Conn) drained() {
	if c.retired && c.ids.Active() == 0 {
		c.shutLocked()
	}
}

// shutLocked closes c on purpose; its reader then ends.
func (c *h2Conn) shutLocked() {
	if c.dead {
		return
	}
	c.dead = true
	c.retire()
	c.raw.Close()
}

// failLocked closes c after an error: every stream in flight and every
// slot waiting for room fails with kind (canceled once the run stops).
func (c *h2Conn) failLocked(kind errKind, now time.Time) {
	if c.g.stopped {
		kind = errCanceled
	}
	if !c.dead && !c.failed {
		c.failed, c.failKind = true, kind
	}
	c.shutLocked()
	for i, st := range c.streams.slots {
		if st != nil {
			c.streams.slots[i] = nil
			st.failed, st.err, st.end, st.queued = true, kind, now, false
			st.wake <- struct{}{}
		}
	}
	c.streams.n = 0
	for _, w := range c.roomWait {
		w.wake <- struct{}{}
	}
	clear(c.roomWait)
	c.roomWait = c.roomWait[:0]
	clear(c.sending)
	c.sending = c.sending[:0]
	c.ids.Clear()
}

// readLoop is the connection's reader: it reads as much as has arrived,
// handles every whole frame in it under one hold of the group's mutex,
// and keeps the partial frame at the end for the next read.
func (c *h2Conn) readLoop() {
	defer c.g.wg.Done()
	defer close(c.quit)
	defer c.exit()
	buf := make([]byte, h2ReadBuf)
	have := 0
	for {
		n, err := c.nc.Read(buf[have:])
		if n > 0 {
			have += n
			p, ok, flush := c.process(buf[:have])
			if !ok || flush && !c.flushBatch() {
				return
			}
			have = copy(buf, buf[p:have])
		}
		if err != nil && !c.readError(err) {
			return
		}
	}
}

// exit fails whatever the connection still held and forgets it.
func (c *h2Conn) exit() {
	g := c.g
	g.mu.Lock()
	c.failLocked(errClosed, time.Now())
	for i, x := range g.conns {
		if x == c {
			g.conns = append(g.conns[:i], g.conns[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
}

// readError handles a failed read; it reports whether to read on. A
// deadline is the periodic sweep for requests past their timeout; the
// connection fails when one ran out with nothing read for Timeout/2.
func (c *h2Conn) readError(err error) bool {
	now := time.Now()
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.stopped:
		c.failLocked(errCanceled, now)
		return false
	case c.dead:
		return false
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		half := c.e.cfg.Timeout / 2
		if c.sweep(now) && now.Sub(c.lastRead) >= half {
			c.failLocked(errTimeout, now)
			return false
		}
		c.checkAt = now.Add(half)
		c.nc.SetReadDeadline(c.checkAt)
		return true
	}
	c.failLocked(classify(err, errRead), now)
	return false
}

// sweep fails the requests in flight or waiting for room for Timeout/2
// or more (so each gets between Timeout/2 and Timeout, checks being
// Timeout/2 apart), resetting their streams. It reports whether any did.
func (c *h2Conn) sweep(now time.Time) bool {
	half := c.e.cfg.Timeout / 2
	expired := c.collect(func(st *h2Stream) bool { return now.Sub(st.start) >= half })
	for _, st := range expired {
		c.wbuf = h2.AppendRSTStream(c.wbuf, st.id, h2.ErrCodeCancel)
		st.failed, st.err = true, errTimeout
		c.finish(st, now)
	}
	if len(expired) > 0 {
		c.kick()
	}
	n := len(expired)
	keep := c.roomWait[:0]
	for _, w := range c.roomWait {
		if now.Sub(w.start) >= half {
			w.timeout = true
			w.wake <- struct{}{}
			n++
			continue
		}
		keep = append(keep, w)
	}
	clear(c.roomWait[len(keep):])
	c.roomWait = keep
	return n > 0
}

// collect returns the streams in flight for which keep is true, in a
// slice reused by the next call.
func (c *h2Conn) collect(keep func(*h2Stream) bool) []*h2Stream {
	c.scratch = c.scratch[:0]
	for _, st := range c.streams.slots {
		if st != nil && keep(st) {
			c.scratch = append(c.scratch, st)
		}
	}
	return c.scratch
}
