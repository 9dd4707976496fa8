package client

// HTTP/2 request bodies: DATA frames within the stream's and the
// connection's send windows, then trailers or an empty DATA frame with
// END_STREAM.

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2Upload writes one request body. It lives only while the body is
// being sent, on the caller's goroutine, or on a goroutine of its own
// once the response head has come (see send).
type h2Upload struct {
	s       *h2Stream
	body    io.ReadCloser // nil for a request with trailers but no body
	closed  atomic.Bool   // body.Close was called (closeBody)
	began   atomic.Bool   // the body's reading began: the upload closes it
	buf     *[chunkBufSize]byte
	pending []byte // read from the body, not yet framed
	read    int64  // body bytes read so far
	want    int64  // the declared length; -1 unknown
	eof     bool
	done    bool // END_STREAM queued, or the upload stopped
	traced  bool // WroteRequest reported (traceEnd)
	trailer http.Header
}

// The ways sendLocked may wait for flow-control window.
const (
	upNoWait     = iota // never: the HEADERS it follows are not written yet
	upInline            // on the caller's goroutine: until the head arrives
	upBackground        // on the upload's own goroutine: as long as it takes
)

// fill reads the body's next piece into pending (readBody). A panic or a
// runtime.Goexit in the body's Read ends the stream, or gives back its
// slot if it is not open yet, and closes the body, before it goes on up:
// the caller may recover, and the connection must not keep a slot for a
// request nobody will finish.
func (u *h2Upload) fill() error {
	returned := false
	defer func() {
		if !returned {
			u.bodyFailed()
		}
	}()
	err := u.readBody()
	returned = true
	return err
}

// bodyFailed ends the request whose body's Read panicked or exited.
func (u *h2Upload) bodyFailed() {
	s, cc := u.s, u.s.cc
	cc.mu.Lock()
	u.done = true
	switch {
	case s.id == 0:
		s.stopTimersLocked()
		cc.releaseLocked(0)
	case !s.closed:
		s.resetLocked(h2.ErrCodeCancel, errBodyReadPanicked)
		cc.flushLocked(nil)
	}
	cc.mu.Unlock()
	u.closeBody()
}

// errBodyReadPanicked fails a request whose body's Read panicked.
var errBodyReadPanicked = fmt.Errorf("%w: its Read panicked", errRequestBody)

// readBody reads the body's next piece into pending, and checks it
// against the declared length: more bytes or fewer than declared fail the
// request (errRequestBody), as net/http's transport does.
func (u *h2Upload) readBody() error {
	u.began.Store(true)
	if u.buf == nil {
		u.buf = chunkBufs.Get().(*[chunkBufSize]byte)
	}
	room := u.buf[:]
	var one [1]byte
	if u.want >= 0 {
		switch left := u.want - u.read; {
		case left == 0:
			room = one[:] // the body must end here
		case left < int64(len(room)):
			room = room[:left]
		}
	}
	for tries := 0; ; tries++ {
		n, err := u.body.Read(room)
		if n > 0 {
			if u.want >= 0 && u.read == u.want {
				return bodyLonger(u.want)
			}
			u.read += int64(n)
			u.pending = room[:n]
		}
		switch {
		case err == io.EOF:
			u.eof = true
			if u.want >= 0 && u.read != u.want {
				return bodyShorter(u.want, u.read)
			}
			return nil
		case err != nil:
			return bodyError(err)
		case n > 0:
			return nil
		case tries > 100:
			return bodyError(io.ErrNoProgress)
		}
	}
}

// prefetch reads a small body whole, and its end, before the HEADERS go:
// then the request leaves in one write.
func (u *h2Upload) prefetch() error {
	if err := u.fill(); err != nil {
		return err
	}
	if !u.eof && u.read == u.want {
		return u.fill()
	}
	return nil
}

// run sends the body to its end: pieces read outside the lock, framed
// and queued under it. It reports true when the caller should return the
// response and leave the rest to finish: the head came while the body
// waited for window (upInline).
func (u *h2Upload) run(mode int) (handoff bool) {
	s, cc := u.s, u.s.cc
	for {
		if len(u.pending) == 0 && !u.eof {
			if err := u.fill(); err != nil {
				cc.mu.Lock()
				if !s.closed {
					s.resetLocked(h2.ErrCodeCancel, err)
					cc.flushLocked(s)
				}
				u.done = true
				cc.mu.Unlock()
				u.traceEnd(err)
				return false
			}
		}
		cc.mu.Lock()
		handoff := u.sendLocked(mode)
		cc.flushLocked(s)
		done, sentEnd := u.done, s.sentEnd
		cc.mu.Unlock()
		if done && !sentEnd {
			u.traceEnd(errH2StreamEnded) // a whole body was reported by sentEndLocked
		}
		if handoff || done {
			return handoff
		}
	}
}

// traceEnd reports the request written (err nil) or cut short, once, to
// httptrace's WroteRequest.
func (u *h2Upload) traceEnd(err error) {
	if tr := u.s.trace; tr != nil && !u.traced {
		u.traced = true
		traceWroteRequest(tr, err)
	}
}

// errH2StreamEnded is WroteRequest's error for a body the stream's end
// cut short (a reset, the server's wish to hear no more).
var errH2StreamEnded = errorString("client: the stream ended before the request body was sent")

// finish sends the rest of a body handed off by send, on its own
// goroutine.
func (u *h2Upload) finish() {
	u.run(upBackground)
	u.end()
}

// end closes the request body, as a RoundTripper must, and gives the
// buffer back.
func (u *h2Upload) end() {
	u.closeBody()
	if u.buf != nil {
		u.pending = nil
		chunkBufs.Put(u.buf)
		u.buf = nil
	}
}

// closeBody closes the request body once, whoever asks first: the
// upload's end, or an abort that must wake a Read blocked in it.
func (u *h2Upload) closeBody() {
	if u.body != nil && u.closed.CompareAndSwap(false, true) {
		u.body.Close()
	}
}

// sendLocked frames what pending holds as DATA within the send windows
// and, at the body's end, queues END_STREAM (on the last DATA frame, or
// on the trailers). It waits for window as mode allows. The stream's end
// or the server's wish (stopBody) stops it quietly: the stream's error,
// if any, is the request's.
func (u *h2Upload) sendLocked(mode int) (handoff bool) {
	s, cc := u.s, u.s.cc
	for !u.done {
		if s.err != nil || s.closed || s.stopBody || cc.err != nil {
			u.done = true
			return false
		}
		if len(u.pending) == 0 {
			if !u.eof {
				return false
			}
			if len(u.trailer) > 0 {
				block := cc.encodeTrailersLocked(u.trailer)
				cc.wbuf = h2.AppendHeaderBlock(cc.wbuf, s.id, true, block, cc.peer.MaxFrameSize)
			} else {
				cc.wbuf = h2.AppendData(cc.wbuf, s.id, h2.FlagEndStream, nil, 0)
			}
			u.sentEndLocked()
			return false
		}
		n := h2.SendLimit(&cc.sendWin, &s.sendWin, cc.peer.MaxFrameSize, len(u.pending))
		if n == 0 {
			switch {
			case mode == upNoWait:
				return false
			case mode == upInline && s.gotHead:
				return true
			case len(cc.wbuf) > 0 && !cc.flushing:
				cc.flushLocked(s) // what is queued leaves before we sleep
				continue
			}
			if !s.waitSend {
				s.waitSend = true
				cc.sendWaiters = append(cc.sendWaiters, s)
			}
			s.cond.Wait()
			continue
		}
		cc.sendWin.Consume(uint32(n))
		s.sendWin.Consume(uint32(n))
		last := n == len(u.pending) && u.eof && len(u.trailer) == 0
		var flags h2.Flags
		if last {
			flags = h2.FlagEndStream
		}
		cc.wbuf = h2.AppendData(cc.wbuf, s.id, flags, u.pending[:n], 0)
		u.pending = u.pending[n:]
		if last {
			u.sentEndLocked()
			return false
		}
		if len(cc.wbuf) >= h2MaxBuffered && mode != upNoWait {
			if !cc.flushing {
				cc.flushLocked(s)
			}
			for cc.flushing && len(cc.wbuf) >= h2MaxBuffered && s.err == nil && cc.err == nil {
				if !s.waitFlush {
					s.waitFlush = true
					cc.flushWaiters = append(cc.flushWaiters, s)
				}
				s.cond.Wait()
			}
		}
	}
	return false
}

// sentEndLocked notes END_STREAM queued: a stream whose response has
// ended too is closed.
func (u *h2Upload) sentEndLocked() {
	u.done = true
	u.s.sentEnd = true
	u.s.headDueLocked()
	u.traceEnd(nil) // before END_STREAM can leave: in order with the response's hooks
	if u.s.recvEnd {
		u.s.closeLocked()
	}
}

// encodeTrailersLocked encodes the request's trailers, lowercase, into
// cc.hbuf.
func (cc *h2Conn) encodeTrailersLocked(tr http.Header) []byte {
	e := &cc.enc
	b := e.StartBlock(cc.hbuf[:0])
	for k, vv := range tr {
		name := cc.lowerName(k)
		for _, v := range vv {
			b = e.AppendField(b, name, wire.TrimOWS(v))
		}
	}
	cc.hbuf = b
	return b
}
