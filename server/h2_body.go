package server

// HTTP/2 engine: request bodies: DATA frames buffered for the handler,
// window returned as they are read, trailers.

import (
	"io"
	"net/http"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// receiveData takes a DATA frame's payload into the body buffer.
func (st *h2Stream) receiveData(f *h2.Frame) *h2.Error {
	sc := st.sc
	if err := st.in.Receive(f.Length); err != nil {
		sc.releaseConnLocked(f.Length)
		return err.(*h2.Error)
	}
	data := f.Data()
	pad := f.Length - uint32(len(data))
	st.received += int64(len(data))
	ended := f.Flags.Has(h2.FlagEndStream)
	if err := h2.CheckContentLength(st.declared, st.received, ended); err != nil {
		sc.releaseConnLocked(f.Length)
		st.bodyErr = err
		return err.(*h2.Error)
	}
	if st.bodyClosed || st.bodyErr != nil {
		sc.releaseConnLocked(f.Length)
		pad = 0
	} else {
		if st.rpos > 0 && len(st.buf)+len(data) > cap(st.buf) {
			// Move what is unread to the front rather than grow.
			st.buf = st.buf[:copy(st.buf, st.buf[st.rpos:])]
			st.rpos = 0
		}
		st.buf = append(st.buf, data...)
		sc.releaseConnLocked(pad)
	}
	if pad > 0 {
		st.releaseStreamLocked(pad)
	}
	if ended {
		st.bodyEnd = true
	}
	st.wake.Broadcast()
	return nil
}

// trailers records the request's trailers, for the handler's goroutine
// to put in Request.Trailer when its body read meets the end (as
// net/http does); the body ends with them.
// failTrailers fails the body read with err: the request's trailers
// broke a limit, and the stream is being reset.
func (st *h2Stream) failTrailers(err error) {
	if st.bodyErr == nil {
		st.bodyErr = err
	}
}

func (st *h2Stream) trailers(hdr http.Header) {
	st.trailer = hdr
	st.endBody()
}

// handTrailers moves received trailers into Request.Trailer. On the
// handler's goroutine (a body Read), under the connection's mutex.
func (st *h2Stream) handTrailers() {
	if st.trailer == nil || st.req == nil {
		return
	}
	if st.req.Trailer == nil {
		st.req.Trailer = make(http.Header, len(st.trailer))
	}
	for k, vv := range st.trailer {
		st.req.Trailer[k] = vv
	}
	st.trailer = nil
}

// unread is how many body bytes wait for the handler.
func (st *h2Stream) unread() int { return len(st.buf) - st.rpos }

// endBody: the request's body is complete (trailers ended it).
func (st *h2Stream) endBody() {
	if err := h2.CheckContentLength(st.declared, st.received, true); err != nil {
		st.bodyErr = err
	}
	st.bodyEnd = true
	st.wake.Broadcast()
}

// dropBodyLocked gives back the connection credit of unread body bytes.
func (st *h2Stream) dropBodyLocked() {
	if n := st.unread(); n > 0 {
		st.buf, st.rpos = st.buf[:0], 0
		st.sc.releaseConnLocked(uint32(n))
	}
}

// h2ReqBody is the request body: what DATA frames brought, read under the
// stream's receive window.
type h2ReqBody struct {
	st *h2Stream
}

func (b *h2ReqBody) Read(p []byte) (int, error) {
	st := b.st
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if st.expect100 {
		// The handler wants the body: tell a client that waits for it
		// (RFC 9110 §10.1.1), once, unless the response has begun.
		st.expect100 = false
		if st.unread() == 0 && !st.bodyEnd && st.bodyErr == nil && !st.headSent && !sc.closed {
			block := sc.enc.StartBlock(sc.block[:0])
			block = sc.enc.AppendField(block, ":status", "100")
			sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, false, block, sc.peerFrame)
			sc.block = block
			sc.kickWriter()
		}
	}
	for st.unread() == 0 && len(p) > 0 && st.bodyErr == nil && !st.bodyEnd && !st.bodyClosed {
		st.readStall.begin(sc.srv.cfg.readStall, st)
		st.wake.Wait()
	}
	st.readStall.end()
	switch {
	case st.bodyClosed:
		return 0, http.ErrBodyReadAfterClose
	case st.unread() == 0 && st.bodyErr != nil:
		return 0, st.bodyErr
	case st.unread() == 0 && st.bodyEnd:
		st.handTrailers()
		return 0, io.EOF
	}
	n := copy(p, st.buf[st.rpos:])
	st.rpos += n
	if st.rpos == len(st.buf) {
		st.buf, st.rpos = st.buf[:0], 0
	}
	sc.releaseConnLocked(uint32(n))
	st.releaseStreamLocked(uint32(n))
	if limit := sc.srv.cfg.limits.MaxBodyBytes; limit >= 0 && !st.tunnel {
		if st.bodyRead+int64(n) > limit {
			st.bodyOver = true
			n = int(limit - st.bodyRead)
			st.bodyRead = limit
			if st.nx != nil {
				return n, wire.ErrBodyTooLarge // as the native API's HTTP/1.1 body
			}
			return n, &http.MaxBytesError{Limit: limit}
		}
	}
	st.bodyRead += int64(n)
	return n, nil
}

func (b *h2ReqBody) Close() error {
	st := b.st
	st.sc.mu.Lock()
	st.bodyClosed = true
	st.dropBodyLocked()
	st.wake.Broadcast() // a Read waiting in another goroutine returns
	st.sc.mu.Unlock()
	return nil
}
