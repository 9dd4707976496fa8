package client

// HTTP/2 client: the read loop, the connection's one goroutine. It reads
// frames, decodes header blocks into responses, appends DATA to the
// streams' buffers and applies the server's SETTINGS, WINDOW_UPDATE,
// RST_STREAM and GOAWAY. Frames it owes the server (acknowledgements,
// window updates) are queued and written before it next blocks on a read.

import (
	"errors"
	"fmt"
	"io"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// readLoop reads until the connection fails or closes, then fails every
// stream still open.
func (cc *h2Conn) readLoop() {
	defer close(cc.readDone)
	err := cc.readFrames()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	cc.fail(connLostError(err))
	cc.nc.Close()
}

// readFrames reads and handles frames; it returns the error that ends
// the connection.
func (cc *h2Conn) readFrames() error {
	framed := false // a frame was read: the server speaks HTTP/2
	for {
		if !framed && cc.w-cc.r >= 5 && string(cc.rbuf[cc.r:cc.r+5]) == "HTTP/" {
			return errH2GotHTTP1 // not a frame header: an HTTP/1.x answer
		}
		f, n, err := h2.ReadFrame(cc.rbuf[cc.r:cc.w], h2.DefaultMaxFrameSize)
		if err == h2.ErrNeedMore {
			if err := cc.fill(); err != nil {
				return err
			}
			continue
		}
		framed = true
		var serr *h2.Error
		if err != nil {
			he, ok := err.(*h2.Error)
			if !ok || !he.Stream {
				return cc.connError(err)
			}
			serr = he
		}
		cc.r += n
		if err := cc.peer.CheckPreface(&f); err != nil {
			return cc.connError(err)
		}
		if err := cc.handleFrame(&f, serr); err != nil {
			return cc.connError(err)
		}
	}
}

// errH2GotHTTP1: the server answered an HTTP/2 connection in HTTP/1.x (a
// prior-knowledge h2c connection to a server without h2c).
var errH2GotHTTP1 = errors.New("client: the server answered in HTTP/1.x on an HTTP/2 connection: it does not speak h2c (HTTP/2 over cleartext with prior knowledge)")

// fill writes what the frames read so far queued (unless a goroutine
// that deferred its write will), then reads more, making room for a
// whole frame.
func (cc *h2Conn) fill() error {
	cc.mu.Lock()
	if len(cc.wbuf) > 0 && cc.deferred == 0 {
		cc.flushLocked(nil)
	}
	cc.mu.Unlock()
	cc.asm.Forget() // the last block may point into rbuf
	if cc.r == cc.w {
		cc.r, cc.w = 0, 0
	} else if len(cc.rbuf)-cc.r < h2.FrameHeaderLen+h2.DefaultMaxFrameSize {
		cc.w = copy(cc.rbuf, cc.rbuf[cc.r:cc.w])
		cc.r = 0
	}
	n, err := cc.nc.Read(cc.rbuf[cc.w:])
	cc.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// connError ends the connection for a violation of the server's: GOAWAY
// with the violation's code. Other errors (the socket's) pass through.
func (cc *h2Conn) connError(err error) error {
	var he *h2.Error
	if !errors.As(err, &he) {
		return err
	}
	cc.mu.Lock()
	cc.goAwayLocked(he.Code, err)
	cc.mu.Unlock()
	return err
}

// protocolError is a connection error of the client's own finding.
func protocolError(reason string) error {
	return &h2.Error{Code: h2.ErrCodeProtocol, Reason: reason}
}

// handleFrame acts on one frame; serr is the stream error ReadFrame found
// in it, if any.
func (cc *h2Conn) handleFrame(f *h2.Frame, serr *h2.Error) error {
	switch st, err := cc.asm.Add(f); {
	case err != nil:
		return err
	case st == h2.BlockOpen:
		if serr != nil {
			cc.blockErr = serr
		}
		return nil
	case st == h2.BlockDone:
		if serr == nil {
			serr = cc.blockErr
		}
		cc.blockErr = nil
		return cc.onHeaderBlock(cc.asm.Block(), serr)
	}
	if serr != nil {
		if f.Type == h2.FramePriority {
			return nil // we never look at priorities
		}
		cc.mu.Lock()
		if s := cc.streams[f.StreamID]; s != nil {
			s.resetLocked(serr.Code, serr)
		}
		cc.mu.Unlock()
		return nil
	}
	switch f.Type {
	case h2.FrameData:
		return cc.onData(f)
	case h2.FrameRSTStream:
		return cc.onRSTStream(f)
	case h2.FrameSettings:
		return cc.onSettings(f)
	case h2.FramePing:
		if !f.Flags.Has(h2.FlagAck) {
			cc.mu.Lock()
			defer cc.mu.Unlock()
			if cc.acks++; cc.acks > h2MaxQueuedAcks {
				return errH2TooManyAcks
			}
			cc.wbuf = h2.AppendPing(cc.wbuf, h2.FlagAck, f.PingData())
		}
	case h2.FrameGoAway:
		cc.onGoAway(f)
	case h2.FrameWindowUpdate:
		return cc.onWindowUpdate(f)
	}
	return nil // PRIORITY and unknown types are ignored (§5.5)
}

// onHeaderBlock decodes a whole field block (always: the HPACK table must
// stay in step) and gives it to its stream as the response head or its
// trailers.
func (cc *h2Conn) onHeaderBlock(blk h2.HeaderBlock, serr *h2.Error) error {
	if blk.Start.Type == h2.FramePushPromise {
		return protocolError("PUSH_PROMISE though SETTINGS_ENABLE_PUSH is 0 (§8.4)")
	}
	fields, err := cc.dec.AppendFields(cc.fields[:0], blk.Fragment)
	cc.fields = fields
	if err != nil {
		if he, ok := err.(*h2.Error); !ok || !he.Stream {
			return err
		}
		err = fmt.Errorf("client: response header from %s exceeds MaxResponseHeaderBytes (%d): %w", cc.key.host, cc.maxHeaderList, err)
	}
	id := blk.Start.StreamID
	cc.mu.Lock()
	s := cc.streams[id]
	if s == nil {
		// A stream the client has not opened: a connection error; one
		// that has ended: dropped, its block decoded all the same.
		err := cc.ids.RecvUntracked(id, h2.FrameHeaders)
		cc.mu.Unlock()
		return err
	}
	switch {
	case serr != nil:
		s.resetLocked(serr.Code, serr)
	case err != nil:
		s.resetLocked(h2.ErrCodeProtocol, err)
	case s.recvEnd:
		s.resetLocked(h2.ErrCodeStreamClosed, errH2Malformed("HEADERS after END_STREAM"))
	}
	cc.mu.Unlock()
	if serr != nil || err != nil || s.recvEnd {
		return nil
	}
	end := blk.Start.Flags.Has(h2.FlagEndStream)
	if !s.gotHead {
		return cc.onResponseHead(s, fields, end)
	}
	return cc.onTrailers(s, fields, end)
}

// onData appends a DATA frame's bytes to its stream's buffer, within the
// windows, and checks them against the content-length.
func (cc *h2Conn) onData(f *h2.Frame) error {
	data := f.Data()
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if err := cc.inflow.Receive(f.Length); err != nil {
		return err
	}
	s := cc.streams[f.StreamID]
	if s == nil || s.recvEnd || !s.gotHead {
		cc.releaseConnLocked(f.Length)
		switch {
		case s == nil:
			return cc.ids.RecvUntracked(f.StreamID, f.Type)
		case s.recvEnd:
			s.resetLocked(h2.ErrCodeStreamClosed, errH2Malformed("DATA after END_STREAM"))
		default:
			s.resetLocked(h2.ErrCodeProtocol, errH2Malformed("DATA before the response head"))
		}
		return nil
	}
	if err := s.inflow.Receive(f.Length); err != nil {
		cc.releaseConnLocked(f.Length)
		s.resetLocked(h2.ErrCodeFlowControl, err)
		return nil
	}
	if pad := f.Length - uint32(len(data)); pad > 0 {
		// Padding is nobody's to read: its credit goes back at once.
		cc.releaseConnLocked(pad)
		if inc := s.inflow.Release(pad); inc > 0 {
			cc.wbuf = h2.AppendWindowUpdate(cc.wbuf, s.id, inc)
		}
	}
	s.received += int64(len(data))
	if s.declared >= 0 && !s.noBody && s.received > s.declared {
		cc.releaseConnLocked(uint32(len(data)))
		s.resetLocked(h2.ErrCodeProtocol, s.lengthError())
		return nil
	}
	if len(data) > 0 {
		if s.noBody {
			cc.releaseConnLocked(uint32(len(data))) // HEAD, 204, 304: no body to read
		} else {
			s.appendLocked(data, f.Flags.Has(h2.FlagEndStream))
		}
	}
	if f.Flags.Has(h2.FlagEndStream) {
		s.endLocked()
	}
	s.cond.Broadcast()
	return nil
}

// releaseConnLocked gives the connection's credit for n bytes nobody will
// read straight back.
func (cc *h2Conn) releaseConnLocked(n uint32) {
	if inc := cc.inflow.Release(n); inc > 0 {
		cc.wbuf = h2.AppendWindowUpdate(cc.wbuf, 0, inc)
	}
}

// appendLocked adds body bytes to the stream's buffer: sized to the whole
// body when it is known to be small, and compacted rather than grown when
// the reader has consumed the front.
func (s *h2Stream) appendLocked(data []byte, last bool) {
	if s.buf == nil {
		if last && len(data) <= len(s.small) {
			s.buf = s.small[:0]
		}
	}
	if s.buf == nil {
		size := len(data)
		if !last {
			size = max(size, 16<<10)
			if s.declared > int64(size) && s.declared <= 256<<10 {
				size = int(s.declared)
			}
		}
		s.buf = make([]byte, 0, size)
	} else if s.off > 0 && len(s.buf)+len(data) > cap(s.buf) {
		s.buf = s.buf[:copy(s.buf, s.buf[s.off:])]
		s.off = 0
	}
	s.buf = append(s.buf, data...)
}

// endLocked ends the response: the content-length is checked, and the
// stream closes if the request has ended too. A request body the server
// declined (stopBody) is cut off with RST_STREAM.
func (s *h2Stream) endLocked() {
	s.recvEnd = true
	if s.declared >= 0 && !s.noBody && s.received != s.declared && s.err == nil {
		// Short of its content-length: what came is read, then
		// io.ErrUnexpectedEOF, as net/http's transport does (and as a
		// short HTTP/1.1 body reads).
		s.err = io.ErrUnexpectedEOF
	}
	switch {
	case s.sentEnd:
		s.closeLocked()
	case s.stopBody:
		s.resetLocked(h2.ErrCodeCancel, nil)
	}
}

// onRSTStream fails the stream the server reset. REFUSED_STREAM before
// any response means the request was not processed: errH2Retry. NO_ERROR
// after a whole response only stops the request body (§8.1).
func (cc *h2Conn) onRSTStream(f *h2.Frame) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	s := cc.streams[f.StreamID]
	if s == nil {
		return cc.ids.RecvUntracked(f.StreamID, f.Type)
	}
	code := f.ErrCode()
	switch {
	case code == h2.ErrCodeNo && s.recvEnd:
		s.stopBody = true
		s.closeLocked()
		s.cond.Broadcast()
	case code == h2.ErrCodeRefusedStream && !s.gotHead:
		s.abortLocked(&h2RetryError{cause: &h2ResetError{Code: code}})
	default:
		s.abortLocked(&h2ResetError{Code: code})
	}
	return nil
}

// onSettings applies the server's SETTINGS (wire/h2's PeerSettings: the
// streams' send windows, the encoder's table, the limits) and
// acknowledges them.
func (cc *h2Conn) onSettings(f *h2.Frame) error {
	if f.Flags.Has(h2.FlagAck) {
		return nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	win := cc.peer.InitialWindowSize
	wins := cc.sendWins[:0]
	for _, s := range cc.streams {
		wins = append(wins, &s.sendWin)
	}
	err := cc.peer.Apply(f, &cc.enc, wins)
	clear(wins)
	cc.sendWins = wins[:0]
	if err != nil {
		return err
	}
	if cc.peer.InitialWindowSize != win {
		for _, s := range cc.streams {
			s.cond.Broadcast() // a body waiting for window may have some
		}
	}
	if cc.acks++; cc.acks > h2MaxQueuedAcks {
		return errH2TooManyAcks
	}
	cc.wbuf = h2.AppendSettingsAck(cc.wbuf)
	return nil
}

// errH2TooManyAcks ends a connection whose server sent more PING and
// SETTINGS frames than h2MaxQueuedAcks while the acknowledgements could
// not be written (a write in progress: the server is not reading).
var errH2TooManyAcks = &h2.Error{Code: h2.ErrCodeEnhanceYourCalm, Reason: "the server sent over 10000 PING and SETTINGS frames while not reading their acknowledgements"}

// h2GoAwayError is the server's GOAWAY, the cause of the errors of the
// streams it cut off.
type h2GoAwayError struct {
	Code       h2.ErrCode
	LastStream uint32
	Debug      string
}

// Error gives the GOAWAY's code, last stream and debug data.
func (e *h2GoAwayError) Error() string {
	msg := fmt.Sprintf("client: server sent GOAWAY (%v, last stream %d)", e.Code, e.LastStream)
	if e.Debug != "" {
		msg += ": " + e.Debug
	}
	return msg
}

// onGoAway stops new streams and fails those above the last stream the
// server will process: they may be sent again elsewhere (errH2Retry).
// The others run to their end.
func (cc *h2Conn) onGoAway(f *h2.Frame) {
	cause := &h2GoAwayError{Code: f.ErrCode(), LastStream: f.LastStreamID(), Debug: string(f.DebugData())}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.ids.GoAway(f.LastStreamID())
	for id, s := range cc.streams {
		if cc.ids.Unprocessed(id) {
			s.abortLocked(&h2RetryError{cause: cause})
		}
	}
	if cc.ids.Active() == 0 && !cc.closed {
		cc.shutdownLocked(errH2Closed)
		go cc.nc.Close()
	}
}

// onWindowUpdate grows a send window and wakes the bodies waiting on it.
func (cc *h2Conn) onWindowUpdate(f *h2.Frame) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if f.StreamID == 0 {
		if err := cc.sendWin.Add(f.Increment()); err != nil {
			return err
		}
		cc.wakeSendWaitersLocked()
		return nil
	}
	s := cc.streams[f.StreamID]
	if s == nil {
		return cc.ids.RecvUntracked(f.StreamID, f.Type)
	}
	if err := s.sendWin.Add(f.Increment()); err != nil {
		s.resetLocked(h2.ErrCodeFlowControl, err)
		return nil
	}
	s.cond.Broadcast()
	return nil
}
