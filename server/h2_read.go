package server

// HTTP/2 engine: the read loop. Frames come off the socket here and are
// dispatched: SETTINGS, PING, WINDOW_UPDATE, DATA, RST_STREAM, and header
// blocks (handed to h2_request.go).

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Read buffers, pooled: a connection starts (and an idle one wakes) with
// a small one, enough for the requests of a browser or an API client, and
// takes a big one once a read fills the small one (uploads, bursts of
// many streams). An idle connection gives its buffer back
// (releaseReadBuf) and waits for its next byte without one.
var (
	h2SmallReadBufs = sync.Pool{New: func() any { return new([h2SmallReadBuffer]byte) }}
	h2ReadBufs      = sync.Pool{New: func() any { return new([h2ReadBuffer]byte) }}
)

// h2TakeReadBuf returns a read buffer with room for at least n bytes.
func h2TakeReadBuf(n int) []byte {
	switch {
	case n <= h2SmallReadBuffer:
		return h2SmallReadBufs.Get().(*[h2SmallReadBuffer]byte)[:]
	case n <= h2ReadBuffer:
		return h2ReadBufs.Get().(*[h2ReadBuffer]byte)[:]
	}
	return make([]byte, n)
}

// h2PutReadBuf gives b back to its pool, if it came from one.
func h2PutReadBuf(b []byte) {
	switch len(b) {
	case h2SmallReadBuffer:
		h2SmallReadBufs.Put((*[h2SmallReadBuffer]byte)(b))
	case h2ReadBuffer:
		h2ReadBufs.Put((*[h2ReadBuffer]byte)(b))
	}
}

// releaseReadBuf gives the read buffer back when it holds nothing unread
// (the reader's own).
func (sc *h2Conn) releaseReadBuf() {
	if sc.r != sc.w || sc.rbuf == nil {
		return
	}
	// What still points into the buffer: the last header block and
	// the request fields checked from it.
	sc.asm.Forget()
	sc.val.Reset(false)
	h2PutReadBuf(sc.rbuf)
	sc.rbuf, sc.r, sc.w, sc.readFull = nil, 0, 0, false
	sc.noReadBuf.Store(true)
}

// read reads into the read buffer. An idle connection that gave its
// buffer back waits for one byte, then takes a buffer again.
func (sc *h2Conn) read() (int, error) {
	if sc.rbuf == nil {
		n, err := sc.nc.Read(sc.one[:])
		if n == 0 {
			return 0, err
		}
		sc.tookOne()
		return 1, nil
	}
	n, err := sc.nc.Read(sc.rbuf[sc.w:])
	sc.readFull = sc.w+n == len(sc.rbuf)
	sc.w += n
	return n, err
}

// tookOne takes a read buffer for the byte a connection without one read.
func (sc *h2Conn) tookOne() {
	sc.rbuf = h2TakeReadBuf(0)
	sc.noReadBuf.Store(false)
	sc.rbuf[0] = sc.one[0]
	sc.w = 1
}

// h2Err returns err as an *h2.Error, or nil. (A variable errors.As
// writes to is moved to the heap: here only errors that are not an
// *h2.Error themselves pay for it.)
func h2Err(err error) *h2.Error {
	if err == nil {
		return nil
	}
	if he, ok := err.(*h2.Error); ok {
		return he
	}
	var he *h2.Error
	if errors.As(err, &he) {
		return he
	}
	return nil
}

// readLoop reads and handles frames until the connection fails, ends or
// parks (errH2Parked).
func (sc *h2Conn) readLoop() error {
	if err := sc.readPreface(); err != nil {
		return err
	}
	return sc.frameLoop()
}

// frameLoop is readLoop past the preface, where a parked connection
// resumes.
func (sc *h2Conn) frameLoop() error {
	for {
		f, n, err := h2.ReadFrame(sc.rbuf[sc.r:sc.w], h2.DefaultMaxFrameSize)
		if err == h2.ErrNeedMore {
			if err := sc.fill(); err != nil {
				return err
			}
			continue
		}
		ferr := h2Err(err)
		if err != nil && (ferr == nil || !ferr.Stream) {
			return err
		}
		sc.r += n
		if f.Type == h2.FrameHeaders && sc.workersBusy() {
			// Let the workers finish what they run before this request
			// needs one: on one core the reader would otherwise start
			// every request of a batch before any handler ran, and so a
			// goroutine for each.
			runtime.Gosched()
		}
		if err := sc.handleFrame(&f, ferr); err != nil {
			return err
		}
		if sc.sentFlood.Load() {
			return errH2ResetFlood
		}
		if f.Type == h2.FrameHeaders && sc.state != nil {
			sc.reportState()
		}
		if sc.r == sc.w {
			sc.r, sc.w = 0, 0
		}
	}
}

// fill reads more bytes, making room for a whole frame first.
func (sc *h2Conn) fill() error {
	sc.mu.Lock()
	// A stream waiting for its reset keeps the connection StateActive
	// (reportState): ConnState hears when the last one is done.
	noErrDone := len(sc.noErrReady) > 0 && len(sc.noErrQueued) == 0
	before := len(sc.wbuf)
	sc.resetNoErrLocked(sc.noErrReady)
	if len(sc.wbuf) > before && sc.state != nil {
		// The batch that carries the resets: StateActive until it is
		// written, then the writer reports.
		sc.noErrOut = sc.taken + 1
	}
	clear(sc.noErrReady)
	sc.noErrReady, sc.noErrQueued = sc.noErrQueued, sc.noErrReady[:0]
	if sc.readStop {
		sc.mu.Unlock()
		return io.EOF
	}
	// Until the preface is in, ReadHeaderTimeout; while nothing is in
	// progress, h2IdleTrim (to give back what the connection holds) then
	// IdleTimeout, both from when it became idle; else no deadline
	// (streams have their stall timers); and until the client
	// acknowledges the server's SETTINGS, no later than ReadHeaderTimeout
	// after they went out. Set under mu, so that maybeDoneLocked's wins.
	var dl, ackDue time.Time
	rht := sc.srv.cfg.readHeaderTimeout
	idleTrimmed, mayPark, busy := false, false, false
	switch {
	case !sc.gotPref:
		if rht > 0 {
			dl = time.Now().Add(rht)
		}
	case sc.running == 0 && sc.streams.Active() == 0:
		dl = sc.idleDeadlineLocked()
		idleTrimmed = sc.trimmed
	default:
		busy = true
	}
	if !sc.settingsAcked && rht > 0 {
		ackDue = sc.settingsSent.Add(rht)
		if dl.IsZero() || ackDue.Before(dl) {
			dl = ackDue
		}
	}
	if len(sc.noErrReady) > 0 {
		// Their resets are due after this read, even if nothing comes.
		if t := time.Now().Add(h2NoErrWait); dl.IsZero() || t.Before(dl) {
			dl = t
		}
	}
	sc.nc.SetReadDeadline(dl)
	if idleTrimmed {
		mayPark = sc.mayParkLocked()
	}
	sc.mu.Unlock()
	if noErrDone && sc.state != nil {
		sc.reportState()
	}
	// Streams open, no deadline: a read that may wait long with the
	// buffer, so the sweep may end it (h2_quiet.go).
	quiet := busy && dl.IsZero()
	if idleTrimmed {
		// A frame (a PING, say) woke a connection idle past its trim:
		// it waits without a buffer again, parked if it may
		// (h2_park.go), unless it has just woken: then what woke it is
		// read first.
		sc.releaseReadBuf()
		if mayPark && !sc.woke && sc.rbuf == nil {
			if err := sc.park(dl); err != nil || sc.rbuf != nil {
				return err // parked, a byte crypto/tls held, or its error
			}
		}
	}
	sc.woke = false
	if sc.r > 0 && (sc.w == len(sc.rbuf) || sc.r == sc.w) {
		sc.w = copy(sc.rbuf, sc.rbuf[sc.r:sc.w])
		sc.r = 0
	}
	if sc.rbuf != nil && (sc.w == len(sc.rbuf) || sc.readFull && len(sc.rbuf) < h2ReadBuffer) {
		// A frame larger than the buffer, or a client that sends more
		// than the small buffer takes in one read: a bigger one.
		nb := h2TakeReadBuf(max(h2ReadBuffer, 2*len(sc.rbuf)))
		sc.w = copy(nb, sc.rbuf[sc.r:sc.w])
		sc.r = 0
		h2PutReadBuf(sc.rbuf)
		sc.rbuf, sc.readFull = nb, false
	}
	quiet = quiet && sc.rbuf != nil && sc.r == sc.w
	if quiet {
		sc.quietBegin()
	}
	n, err := sc.read()
	if quiet && sc.quietEnd(n) {
		return nil // quiet: the next read waits without the buffer
	}
	if n > 0 {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if !ackDue.IsZero() && !time.Now().Before(ackDue) {
			return errH2SettingsAck
		}
		if !sc.gotPref {
			return err // ReadHeaderTimeout, before the preface was in
		}
		sc.mu.Lock()
		idleFor := time.Duration(-1)
		if sc.running == 0 && sc.streams.Active() == 0 && !sc.idleAt.IsZero() {
			idleFor = time.Since(sc.idleAt)
		}
		trimmed := sc.trimmed
		sc.mu.Unlock()
		if idleFor >= 0 {
			// IdleTimeout counts from the last stream, whatever the
			// client sent since: part of a frame, PINGs, SETTINGS.
			if d := sc.srv.cfg.idleTimeout; d > 0 && idleFor >= d {
				return errH2Idle
			}
			if !trimmed && idleFor >= h2IdleTrim {
				// The trim runs even with part of a frame buffered
				// (all but the read buffer, which keeps those
				// bytes), so that the next deadline is IdleTimeout's
				// and not this one again.
				sc.trimIdle()
				sc.releaseReadBuf()
				sc.quiet.leave() // idle: no quiet read for a while
			}
		}
		// Read on, under the next deadline, which fill arms anew: one
		// that has passed is never armed again as it is (a read that
		// fails at once, in a loop that reads nothing).
		return nil
	}
	return err
}

func (sc *h2Conn) readPreface() error {
	for sc.w-sc.r < len(h2.ClientPreface) {
		if err := sc.fill(); err != nil {
			return err
		}
	}
	if string(sc.rbuf[sc.r:sc.r+len(h2.ClientPreface)]) != h2.ClientPreface {
		return errH2Preface
	}
	sc.r += len(h2.ClientPreface)
	return nil
}

// handleFrame acts on one frame. ferr is a stream error ReadFrame found
// in it. A returned error ends the connection.
func (sc *h2Conn) handleFrame(f *h2.Frame, ferr *h2.Error) error {
	if !sc.gotPref {
		if f.Type != h2.FrameSettings || f.Flags.Has(h2.FlagAck) {
			return errH2Preface
		}
		sc.gotPref = true
	}
	if ferr == nil {
		if err := sc.countIdle(f); err != nil {
			return err
		}
	}
	st, err := sc.asm.Add(f)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	flood := len(sc.wbuf) > h2MaxQueued
	sc.mu.Unlock()
	if flood {
		return errH2Flood
	}
	switch st {
	case h2.BlockOpen:
		return nil
	case h2.BlockDone:
		return sc.handleBlock(sc.asm.Block(), ferr)
	}
	if ferr != nil {
		sc.mu.Lock()
		sc.resetLocked(f.StreamID, ferr.Code) // counted among the server's resets
		sc.mu.Unlock()
		return nil
	}
	switch f.Type {
	case h2.FrameSettings:
		return sc.handleSettings(f)
	case h2.FramePing:
		if !f.Flags.Has(h2.FlagAck) {
			sc.mu.Lock()
			sc.wbuf = h2.AppendPing(sc.wbuf, h2.FlagAck, f.PingData())
			sc.mu.Unlock()
			sc.kickWriter()
		}
		return nil
	case h2.FrameGoAway:
		return nil // the client sends no more streams; those open finish
	case h2.FrameWindowUpdate:
		if f.StreamID == 0 {
			sc.mu.Lock()
			err := sc.connOut.Add(f.Increment())
			if sc.connOut.Available() > 0 {
				sc.wakeConnWaitersLocked()
			}
			sc.mu.Unlock()
			return err
		}
	case h2.FrameData, h2.FrameRSTStream, h2.FramePriority:
	default:
		return nil // unknown types are ignored (§4.1, §5.5)
	}
	return sc.handleStreamFrame(f)
}

// countIdle counts the frames that carry no request (h2.FloodCounter):
// those h2.Idle lists, and WINDOW_UPDATEs below h2.MinWindowUpdate past
// the credit the server's DATA frames gave.
func (sc *h2Conn) countIdle(f *h2.Frame) error {
	if f.Type != h2.FrameWindowUpdate || f.Increment() >= h2.MinWindowUpdate {
		return sc.floods.Count(f, time.Now)
	}
	sc.mu.Lock()
	sent := sc.dataSent
	sc.mu.Unlock()
	sc.tinyUpdateOK = int(min(uint64(sc.tinyUpdateOK)+2*(sent-sc.dataSeen), 1<<10))
	sc.dataSeen = sent
	if sc.tinyUpdateOK > 0 {
		sc.tinyUpdateOK--
		return nil
	}
	return sc.floods.Add(time.Now())
}

// handleSettings applies the client's settings and acknowledges them.
func (sc *h2Conn) handleSettings(f *h2.Frame) error {
	if f.Flags.Has(h2.FlagAck) {
		sc.settingsAcked = true // nothing this server advertises waits for it
		return nil
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i := range f.NumSettings() {
		s := f.Setting(i)
		switch s.ID {
		case h2.SettingHeaderTableSize:
			sc.enc.SetMaxTableSize(s.Val)
		case h2.SettingInitialWindowSize:
			for _, st := range sc.table {
				if err := st.out.ApplyInitialSize(sc.peerWindow, s.Val); err != nil {
					return err
				}
				if s.Val > sc.peerWindow {
					st.wake.Broadcast()
				}
			}
			sc.peerWindow = s.Val
		case h2.SettingMaxFrameSize:
			sc.peerFrame = s.Val
		}
	}
	sc.wbuf = h2.AppendSettingsAck(sc.wbuf)
	sc.kickWriter()
	return nil
}

// handleStreamFrame handles DATA, RST_STREAM, PRIORITY and WINDOW_UPDATE
// on a stream, after the stream's state has judged the frame.
func (sc *h2Conn) handleStreamFrame(f *h2.Frame) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	id := f.StreamID
	if f.Type == h2.FrameData {
		// DATA counts against the connection's window whatever becomes
		// of it (§6.9).
		if err := sc.connIn.Receive(f.Length); err != nil {
			return err
		}
	}
	st := sc.table[id]
	if st == nil && sc.wasRefusedLocked(id) {
		// Sent before the client saw REFUSED_STREAM: dropped (§5.1,
		// "closed": frames after a RST_STREAM the endpoint sent are
		// ignored).
		if f.Type == h2.FrameData {
			sc.releaseConnLocked(f.Length)
		}
		return nil
	}
	var next h2.StreamState
	var err error
	if st != nil {
		next, err = st.state.Recv(f.Type, f.Flags)
	} else {
		next, err = sc.streams.RecvUntracked(id, f.Type, f.Flags)
	}
	he := h2Err(err)
	if err != nil && (he == nil || !he.Stream) {
		return err
	}
	if f.Type == h2.FrameData && (he != nil || st == nil) {
		sc.releaseConnLocked(f.Length) // dropped
	}
	if he != nil {
		if st == nil || st.state != h2.StateResetLocal {
			sc.resetLocked(id, he.Code)
		}
		return nil
	}
	if st == nil {
		return nil // PRIORITY on an idle stream, or a frame on a forgotten one
	}
	wasActive := st.state.Active()
	st.state = next
	switch f.Type {
	case h2.FrameData:
		if err := st.receiveData(f); err != nil {
			sc.resetLocked(id, err.Code)
			return nil
		}
	case h2.FrameRSTStream:
		st.peerReset()
		sc.streamClosedLocked(st)
		if !wasActive {
			return nil
		}
		return sc.resets.Count(time.Now())
	case h2.FrameWindowUpdate:
		if err := st.out.Add(f.Increment()); err != nil {
			sc.resetLocked(id, err.(*h2.Error).Code)
			return nil
		}
		st.wake.Broadcast()
	}
	if !next.Active() {
		sc.streamClosedLocked(st)
	}
	return nil
}
