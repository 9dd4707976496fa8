package load

import (
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The reader's handling of each frame the server sends (RFC 9113 §6).

// process handles every whole frame at the front of b, read at one
// instant, under one hold of the group's mutex. It returns how many bytes
// it used, false once the connection is closed, and whether the reader
// is to flush what the batch and the slots it woke queue.
func (c *h2Conn) process(b []byte) (used int, ok, flush bool) {
	now := time.Now()
	g := c.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		c.failLocked(errCanceled, now)
		return 0, false, false
	}
	if c.dead {
		return 0, false, false
	}
	c.lastRead = now
	if !c.sawFrame && len(b) >= 5 && string(b[:5]) == "HTTP/" {
		// An HTTP/1.x server answering the preface (h2c).
		c.failLocked(errProtocol, now)
		c.e.mismatch(protocolError(c.e.proto, string(b[:min(len(b), 8)])))
		return 0, false, false
	}
	p := 0
	for {
		f, n, err := h2.ReadFrame(b[p:], h2.DefaultMaxFrameSize)
		if err == h2.ErrNeedMore {
			break
		}
		var serr error // a stream error: f is whole, its stream fails
		if err != nil {
			if he, ok := err.(*h2.Error); !ok || !he.Stream {
				c.failLocked(errParse, now)
				return p, false, false
			}
			serr = err
		}
		p += n
		c.sawFrame = true
		if c.peer.CheckPreface(&f) != nil { // the server's preface is SETTINGS (§3.4)
			c.failLocked(errParse, now)
			return p, false, false
		}
		switch bs, err := c.asm.Add(&f); {
		case err != nil:
			c.failLocked(errParse, now)
			return p, false, false
		case bs == h2.BlockOpen:
			c.blockBytes += int64(n)
			if serr != nil {
				c.blockErr = serr
			}
			continue
		case bs == h2.BlockDone:
			c.blockBytes += int64(n)
			if serr == nil {
				serr = c.blockErr
			}
			c.headers(serr, now)
			c.blockBytes, c.blockErr = 0, nil
		default:
			switch f.Type {
			case h2.FrameData:
				c.data(&f, n, now)
			case h2.FrameRSTStream:
				if st := c.streams.get(f.StreamID); st != nil {
					// REFUSED_STREAM before the response: the server did
					// not process it (§8.7), so it is sent again, as the
					// client does; after the response head, it did.
					st.retry = f.ErrCode() == h2.ErrCodeRefusedStream && !st.final
					st.failed, st.err = true, errReset
					c.finish(st, now)
				} else {
					c.untracked(&f.FrameHeader, now)
				}
			case h2.FrameSettings:
				c.settings(&f, now)
			case h2.FramePing:
				if !f.Flags.Has(h2.FlagAck) {
					c.wbuf = h2.AppendPing(c.wbuf, h2.FlagAck, f.PingData())
					c.kick()
				}
			case h2.FrameGoAway:
				c.goAway(&f, now)
			case h2.FrameWindowUpdate:
				c.windowUpdate(&f, serr, now)
			}
		}
		if c.dead {
			return p, false, false
		}
	}
	if !now.Before(c.checkAt) {
		c.sweep(now)
		c.checkAt = now.Add(c.e.cfg.Timeout / 2)
		c.nc.SetReadDeadline(c.checkAt)
	}
	if c.owed > 0 || len(c.wbuf) > 0 {
		c.flushing = true
	}
	return p, !c.dead, c.flushing
}

// headers handles a complete field block: decoded always, so that the
// HPACK table stays in step, then applied to its stream if it is ours.
func (c *h2Conn) headers(serr error, now time.Time) {
	blk := c.asm.Block()
	var err error
	c.fields, err = c.dec.AppendFields(c.fields[:0], blk.Fragment)
	if err != nil && err != h2.ErrHeaderListTooLarge || blk.Start.Type == h2.FramePushPromise {
		// A broken block (the tables may disagree from here), or a push
		// this client disabled (§8.4): the connection is over.
		c.failLocked(errParse, now)
		return
	}
	st := c.streams.get(blk.Start.StreamID)
	if st == nil {
		c.untracked(&blk.Start, now) // a stream already cut, timed out or failed; or never opened
		return
	}
	st.bytesIn += c.blockBytes
	if err != nil || serr != nil {
		c.reset(st, h2.ErrCodeProtocol, errParse, now)
		return
	}
	end := blk.Start.Flags.Has(h2.FlagEndStream)
	if st.final {
		// Trailers end the stream (§8.1).
		if !end {
			c.reset(st, h2.ErrCodeProtocol, errParse, now)
			return
		}
		c.done(st, now)
		return
	}
	status, cl := 0, int64(-1)
	for _, f := range c.fields {
		switch {
		case string(f.Name) == ":status":
			status = atoi3(f.Value)
		case string(f.Name) == "content-length":
			if n, err := wire.ParseContentLength(f.Value); err == nil {
				cl = n
			}
		}
	}
	if st.first.IsZero() {
		st.first = now
	}
	switch {
	case status < 100:
		c.reset(st, h2.ErrCodeProtocol, errParse, now)
		return
	case status < 200:
		if end || status == 101 { // 101 has no place in HTTP/2 (§8.6)
			c.reset(st, h2.ErrCodeProtocol, errParse, now)
		}
		return // interim: the final head follows
	}
	st.final, st.status, st.declared = true, status, cl
	if status == 204 || status == 304 || c.e.heads[st.target] {
		st.declared = -1 // a length that describes no body here (§8.1.1)
	}
	if end {
		c.done(st, now)
		return
	}
	switch bm := c.e.cfg.ResponseBody; {
	case bm.Mode == CloseBody && cl != 0, bm.Mode == LimitBody && cl > bm.Limit:
		c.cut(st, now)
	}
}

// data handles a DATA frame of n bytes on the wire.
func (c *h2Conn) data(f *h2.Frame, n int, now time.Time) {
	// The connection's credit goes back whatever became of the stream.
	if err := c.in.Receive(f.Length); err != nil {
		c.failLocked(errParse, now)
		return
	}
	if inc := c.in.Release(f.Length); inc > 0 {
		c.wbuf = h2.AppendWindowUpdate(c.wbuf, 0, inc)
		c.kick()
	}
	st := c.streams.get(f.StreamID)
	if st == nil {
		c.untracked(&f.FrameHeader, now)
		return
	}
	st.bytesIn += int64(n)
	if !st.final {
		c.reset(st, h2.ErrCodeProtocol, errParse, now) // DATA before the head (§8.1)
		return
	}
	if err := st.in.Receive(f.Length); err != nil {
		c.reset(st, h2.ErrCodeFlowControl, errParse, now)
		return
	}
	st.bodyIn += int64(len(f.Data()))
	end := f.Flags.Has(h2.FlagEndStream)
	if !end && st.declared >= 0 && st.bodyIn > st.declared {
		c.reset(st, h2.ErrCodeProtocol, errParse, now) // more than its content-length (§8.1.1)
		return
	}
	if end {
		c.done(st, now)
		return
	}
	if inc := st.in.Release(f.Length); inc > 0 {
		c.wbuf = h2.AppendWindowUpdate(c.wbuf, st.id, inc)
		c.kick()
	}
	if bm := c.e.cfg.ResponseBody; bm.Mode == CloseBody || bm.Mode == LimitBody && st.bodyIn > bm.Limit {
		c.cut(st, now)
	}
}

// done completes a response the server ended (END_STREAM): one whose
// body is not the length its content-length declared is malformed and
// counts as an error (bad_response), as the client's would. A request
// body not all sent by then (the server answered first, RFC 9113 §8.1)
// is sent no further, and its stream is reset (CANCEL): without the
// reset the server would hold the stream half-open, counted against its
// MAX_CONCURRENT_STREAMS, until the connection ends.
func (c *h2Conn) done(st *h2Stream, now time.Time) {
	if st.declared >= 0 && st.bodyIn != st.declared {
		st.failed, st.err = true, errParse // malformed: not the content-length it declared (§8.1.1)
	}
	if st.queued {
		c.wbuf = h2.AppendRSTStream(c.wbuf, st.id, h2.ErrCodeCancel)
		c.kick()
	}
	c.finish(st, now)
}

// cut ends a response the body mode reads no further: RST_STREAM(CANCEL),
// the response counted, the connection kept (HTTP/2 can skip the rest).
func (c *h2Conn) cut(st *h2Stream, now time.Time) {
	c.wbuf = h2.AppendRSTStream(c.wbuf, st.id, h2.ErrCodeCancel)
	c.kick()
	c.finish(st, now)
}

// reset fails st with kind, resetting its stream with code.
func (c *h2Conn) reset(st *h2Stream, code h2.ErrCode, kind errKind, now time.Time) {
	c.wbuf = h2.AppendRSTStream(c.wbuf, st.id, code)
	c.kick()
	st.failed, st.err = true, kind
	c.finish(st, now)
}

// untracked judges a frame for a stream c does not hold: one that ended
// (cut, timed out, failed) is dropped, one never opened (§5.1) ends the
// connection.
func (c *h2Conn) untracked(f *h2.FrameHeader, now time.Time) {
	if c.ids.RecvUntracked(f.StreamID, f.Type) != nil {
		c.failLocked(errParse, now)
	}
}

// settings applies the server's SETTINGS (wire/h2's PeerSettings, as the
// client) and acknowledges them (§6.5.3). Two are only recorded:
// HEADER_TABLE_SIZE, as load's header blocks are rendered once per run
// with no dynamic table (newH2Engine: SetMaxTableSize(0)), which every
// table size the server allows holds (so no encoder is given); and
// MAX_HEADER_LIST_SIZE, advisory (RFC 9113 §6.5.2): a request over it
// still goes, and what the server answers (431, a reset) is counted with
// the run's results; load measures what the server does. The client,
// which must not send what will be refused, checks it.
func (c *h2Conn) settings(f *h2.Frame, now time.Time) {
	if f.Flags.Has(h2.FlagAck) {
		return
	}
	wins := c.sendWins[:0]
	for _, st := range c.streams.slots {
		if st != nil {
			wins = append(wins, &st.sendWin)
		}
	}
	err := c.peer.Apply(f, nil, wins)
	clear(wins)
	c.sendWins = wins[:0]
	if err != nil {
		c.failLocked(errParse, now)
		return
	}
	c.wbuf = h2.AppendSettingsAck(c.wbuf)
	c.kick()
	c.grant()
	if len(c.sending) > 0 {
		c.pump()
	}
}

// goAway retires the connection (§6.8): streams above the last one the
// server will process were not, and are sent again on the next
// connection, as net/http does; the others run to their end.
func (c *h2Conn) goAway(f *h2.Frame, now time.Time) {
	c.ids.GoAway(f.LastStreamID())
	c.retire()
	for _, st := range c.collect(func(st *h2Stream) bool { return c.ids.Unprocessed(st.id) }) {
		st.retry = true
		st.failed, st.err = true, errClosed
		c.finish(st, now)
	}
}

// windowUpdate adds credit to a send window and sends what it allows.
func (c *h2Conn) windowUpdate(f *h2.Frame, serr error, now time.Time) {
	if f.StreamID == 0 {
		if err := c.sendWin.Add(f.Increment()); err != nil {
			c.failLocked(errParse, now)
			return
		}
	} else if st := c.streams.get(f.StreamID); st == nil {
		c.untracked(&f.FrameHeader, now)
		return
	} else {
		if serr != nil {
			c.reset(st, h2.ErrCodeProtocol, errParse, now)
			return
		}
		if err := st.sendWin.Add(f.Increment()); err != nil {
			c.reset(st, h2.ErrCodeFlowControl, errParse, now)
			return
		}
	}
	if len(c.sending) > 0 {
		c.pump()
	}
}

// atoi3 reads a three-digit status code, or returns 0.
func atoi3(b []byte) int {
	if len(b) != 3 {
		return 0
	}
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0
		}
		n = n*10 + int(ch-'0')
	}
	return n
}
