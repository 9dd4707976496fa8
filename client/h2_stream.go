package client

// HTTP/2 client streams: a request's HEADERS (its block encoded in
// h2_head.go), its body as DATA (h2_upload.go), and the wait for the
// response head, all on the caller's goroutine.

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2Stream is one request on an h2Conn: its stream state, its response
// and its response body (the stream is the body's io.ReadCloser), in one
// allocation. Every field but the read loop's own is under cc.mu.
type h2Stream struct {
	cc   *h2Conn
	id   uint32 // 0 until the stream is in cc.streams
	req  *http.Request
	ctx  context.Context
	resp http.Response
	// cond, on cc.mu, wakes whoever waits on the stream: send for
	// the head, a body reader for data, a body writer for window or for
	// the write buffer to drain. Several may wait at once: always
	// Broadcast.
	cond sync.Cond

	// trace is the request's httptrace hooks (trace.go), nil unless its
	// context has them; firstByte notes GotFirstResponseByte reported.
	trace         *httptrace.ClientTrace
	tracedHead    []string // the head's fields, name and value, for WroteHeaderField
	firstByte     bool
	informational int // the size of the 1xx heads received, not handed to Got1xxResponse (informationalSize)

	startOff int64     // where the stream's frames begin in the connection's output
	sendWin  h2.Window // the stream's send window
	inflow   h2.Inflow // its receive window
	buf      []byte    // received body bytes; buf[off:] are unread
	off      int
	err      error       // sticky: what ended the request or its body
	trailer  http.Header // trailers received, for resp.Trailer at EOF

	gotHead    bool // the final response head arrived
	recvEnd    bool // the response ended (END_STREAM received)
	sentEnd    bool // the request ended (END_STREAM queued)
	closed     bool // out of cc.streams: both ends done, or reset
	bodyClosed bool // the response body was closed
	stopBody   bool // the server wants no more of the request body
	await100   bool // the body waits for "100 Continue" (Expect)
	got100     bool // "100 Continue" came
	waitSend   bool // listed in cc.sendWaiters
	waitFlush  bool // listed in cc.flushWaiters

	// Fixed before the stream is published, or the read loop's own.
	isHead   bool
	gzip     bool  // gzip was asked for on the caller's behalf
	noBody   bool  // no content (HEAD, 204, 304): DATA dropped, content-length unchecked
	declared int64 // the response's content-length; -1 for none
	received int64 // DATA bytes received

	up       *h2Upload   // the request body's upload, if any
	stopCtx  func() bool // stops the context watch, if any
	deadline time.Time   // when the stream is due in cc.deadlines; zero for none
	dlIndex  int         // its place in cc.deadlines; -1 when not there
	// overall is the request's deadline (zero: none); headDL when its
	// response head is due, ResponseHeaderTimeout after the request was
	// all sent (zero: not yet, or no such timeout). deadline is the
	// earlier of the two while the head is awaited.
	overall, headDL time.Time

	// Room in the one allocation for what a small response needs: its
	// header values (http.Header's []string) and a short body.
	vals  [h2InlineVals]string
	small [h2InlineBody]byte
}

// The inline room of an h2Stream: most responses fit, and their head and
// body cost no allocation of their own.
const (
	h2InlineVals = 8
	h2InlineBody = 128
)

// send sends req on a new stream and returns its response once the head
// has arrived; the body streams after. deadline (zero: none) bounds the
// whole request, reading the body included, like Transport.Timeout: past
// it the request fails with errRequestTimeout. ctx's cancellation resets
// the stream (RST_STREAM CANCEL) and fails the request with ctx's error.
// A request body is written here, on the caller's goroutine, unless the
// response head arrives while it waits for flow-control window: then a
// goroutine finishes it, as the server may need the response read before
// it grants more. bodyClosed reports that the body is closed or being
// closed (its reading began: the upload, or an abort that had to wake a
// Read, closes it once), which the caller must then not close again;
// when it is false and err is not nil, the body is untouched, and the
// caller may resend it on errH2Retry.
func (cc *h2Conn) send(req *http.Request, ctx context.Context, deadline time.Time) (resp *http.Response, bodyClosed bool, err error) {
	s := &h2Stream{cc: cc, req: req, ctx: ctx, declared: -1, dlIndex: -1, trace: httptrace.ContextClientTrace(ctx)}
	s.cond.L = &cc.mu
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	s.isHead = method == http.MethodHead
	hasBody := req.Body != nil && req.Body != http.NoBody
	s.gzip = !cc.t.DisableCompression && !s.isHead &&
		req.Header["Accept-Encoding"] == nil && req.Header["Range"] == nil

	if err := ctx.Err(); err != nil {
		cc.release()
		return nil, false, err
	}
	if !deadline.IsZero() && time.Until(deadline) <= 0 {
		cc.release()
		return nil, false, errRequestTimeout
	}
	var up *h2Upload
	if hasBody || len(req.Trailer) > 0 {
		up = &h2Upload{s: s, body: req.Body, want: -1, trailer: req.Trailer}
		if !hasBody {
			up.body, up.eof = nil, true
		} else if req.ContentLength > 0 {
			up.want = req.ContentLength
		}
		s.up = up // before the context's watch, which may close the body
	}
	if ctx.Done() != nil {
		s.stopCtx = context.AfterFunc(ctx, s.onCancel)
	}
	// "Expect: 100-continue": the body waits for the server's word.
	expect := hasBody && cc.t.ExpectContinueTimeout >= 0 && headerHasToken(req.Header["Expect"], "100-continue")
	// A small body in memory (http.NewRequest sets GetBody for those) is
	// read first, to leave in one write with the HEADERS.
	if up != nil && !expect && hasBody && req.GetBody != nil && up.want > 0 && up.want <= h2.DefaultMaxFrameSize {
		if err := up.prefetch(); err != nil {
			up.end()
			cc.mu.Lock()
			s.stopTimersLocked()
			cc.releaseLocked(0)
			cc.mu.Unlock()
			return nil, true, err
		}
	}

	cc.mu.Lock()
	if !deadline.IsZero() {
		s.deadline, s.overall = deadline, deadline
		cc.addDeadlineLocked(s)
	}
	// Expecting 100 from before the HEADERS leave: a 100 the read loop
	// takes before awaitContinueLocked runs is still the one awaited
	// (Got100Continue), as net/http's transports report it.
	s.await100 = expect
	if err := cc.openLocked(s, req, method, up); err != nil {
		s.stopTimersLocked()
		cc.releaseLocked(0)
		cc.mu.Unlock()
		if up != nil && up.began.Load() {
			up.end() // its reading began: GetBody can make another
			return nil, true, err
		}
		return nil, false, err
	}
	if up != nil && (len(up.pending) > 0 || up.eof) {
		up.sendLocked(upNoWait)
	}
	if cc.ids.Active() > 1 && !cc.flushing {
		// Other streams are active: let the goroutines that are ready
		// to run queue their frames too, and write them all at once.
		// (On one P, nothing else runs while this one is in write(2),
		// so without this every request costs a system call.)
		cc.deferred++
		cc.mu.Unlock()
		runtime.Gosched()
		cc.mu.Lock()
		cc.deferred--
	}
	cc.flushLocked(s)
	if expect {
		s.awaitContinueLocked()
	}
	if up != nil {
		sentEnd := s.sentEnd
		cc.mu.Unlock()
		switch {
		case up.done:
			if !sentEnd {
				up.traceEnd(errH2StreamEnded)
			}
			up.end()
		case !inMemoryBody(req):
			// Its Read may wait on the server (a pipe fed by the
			// response): never on the caller's goroutine, which must
			// be free to return the response.
			go up.finish()
		case up.run(upInline):
			go up.finish()
		default:
			up.end()
		}
		cc.mu.Lock()
	}
	for !s.gotHead && s.err == nil {
		s.cond.Wait()
	}
	if !s.gotHead {
		err := s.err
		cc.mu.Unlock()
		return nil, up != nil, err
	}
	cc.mu.Unlock()
	resp = &s.resp
	if ce := resp.Header["Content-Encoding"]; s.gzip && resp.Body == s && len(ce) > 0 && strings.EqualFold(ce[0], "gzip") {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipBody{body: s}
	}
	return resp, up != nil, nil
}

// awaitContinueLocked holds the request body until "100 Continue", the
// final response, the stream's end or ExpectContinueTimeout (0 means
// 1 s), whichever comes first, as net/http's HTTP/2 transport does. A
// body the server then declined (an error status, stopBody) is never
// read: the upload ends before its first Read.
func (s *h2Stream) awaitContinueLocked() {
	cc := s.cc
	if s.trace != nil && s.trace.Wait100Continue != nil {
		s.trace.Wait100Continue()
	}
	wait := cc.t.ExpectContinueTimeout
	if wait == 0 {
		wait = defaultExpectContinueTimeout
	}
	s.await100 = true
	timedOut := false
	timer := time.AfterFunc(wait, func() {
		cc.mu.Lock()
		timedOut = true
		s.cond.Broadcast()
		cc.mu.Unlock()
	})
	for !s.got100 && !s.gotHead && s.err == nil && !s.closed && !timedOut {
		s.cond.Wait()
	}
	timer.Stop()
	s.await100 = false
	if s.err != nil || s.closed || s.stopBody {
		s.up.done = true
	}
}

// release gives back a reserved slot that never became a stream.
func (cc *h2Conn) release() {
	cc.mu.Lock()
	cc.releaseLocked(0)
	cc.mu.Unlock()
}

// openLocked gives s its stream id, queues its HEADERS and publishes it
// in cc.streams, or says why the request cannot be sent here.
func (cc *h2Conn) openLocked(s *h2Stream, req *http.Request, method string, up *h2Upload) error {
	switch {
	case s.err != nil: // the deadline or the context, already
		return s.err
	case cc.ids.GoingAway():
		return &h2RetryError{cause: errH2GoAway}
	case cc.closed:
		return &h2RetryError{cause: cc.err}
	}
	endStream := up == nil
	if max := cc.peer.MaxHeaderListSize; max > 0 {
		if size := requestListSize(req, method); size > uint64(max) {
			return errH2HeaderListSize
		}
	}
	s.id = cc.ids.Open()
	s.startOff = cc.taken + int64(len(cc.wbuf))
	if s.trace != nil && s.trace.WroteHeaderField != nil {
		cc.traced = make([]string, 0, 16)
	}
	block := cc.encodeHeadLocked(req, method, up, s.gzip)
	if s.trace != nil {
		// Before the HEADERS can leave, so that the hooks keep their
		// order with the response's (under cc.mu, as net/http's HTTP/2
		// transport calls them under its write lock).
		s.tracedHead, cc.traced = cc.traced, nil
		s.traceHead(endStream)
	}
	cc.wbuf = h2.AppendHeaderBlock(cc.wbuf, s.id, endStream, block, cc.peer.MaxFrameSize)
	s.sentEnd = endStream
	s.sendWin = h2.StreamWindow(cc.peer.InitialWindowSize)
	s.inflow.Init(h2StreamWindow, true)
	cc.streams[s.id] = s
	if endStream {
		s.headDueLocked()
	}
	return nil
}

// errH2GoAway is the cause of errH2Retry for a request that came after
// the server's GOAWAY.
var errH2GoAway = errorString("client: the server sent GOAWAY")

// errH2HeaderListSize fails a request whose header fields exceed the
// server's SETTINGS_MAX_HEADER_LIST_SIZE: the server would refuse them.
var errH2HeaderListSize = errorString("client: request header fields exceed the server's SETTINGS_MAX_HEADER_LIST_SIZE")

// onCancel fails the request when its context is done, and resets the
// stream.
func (s *h2Stream) onCancel() {
	cc := s.cc
	cc.mu.Lock()
	s.cancelLocked(s.ctx.Err())
	cc.mu.Unlock()
}

// cancelLocked ends a request that is still going with err, resetting
// its stream (CANCEL), and writes the reset. If the request's goroutine
// is in a write, that write gets h2CancelWriteGrace to end.
func (s *h2Stream) cancelLocked(err error) {
	s.expireLocked(err)
	cc := s.cc
	if cc.flushing && cc.flusher == s && !cc.graceWrite {
		cc.graceWrite = true
		cc.nc.SetWriteDeadline(time.Now().Add(h2CancelWriteGrace))
	}
	cc.flushLocked(s)
}

// traceHead reports the HEADERS written: each field, the head's end, and
// the whole request when it has no body.
func (s *h2Stream) traceHead(whole bool) {
	tr := s.trace
	if tr.WroteHeaderField != nil {
		for i := 0; i+1 < len(s.tracedHead); i += 2 {
			tr.WroteHeaderField(s.tracedHead[i], []string{s.tracedHead[i+1]})
		}
	}
	s.tracedHead = nil
	if tr.WroteHeaders != nil {
		tr.WroteHeaders()
	}
	if whole {
		traceWroteRequest(tr, nil)
	}
}

// headDueLocked starts the wait for the response head once the request is
// all sent (END_STREAM queued): ResponseHeaderTimeout, as net/http counts
// it, on the connection's deadline timer.
func (s *h2Stream) headDueLocked() {
	rht := s.cc.t.ResponseHeaderTimeout
	if rht <= 0 || s.gotHead || s.closed {
		return
	}
	s.headDL = time.Now().Add(rht)
	if !s.overall.IsZero() && !s.headDL.Before(s.overall) {
		return // the request's own deadline comes first
	}
	s.cc.removeDeadlineLocked(s)
	s.deadline = s.headDL
	s.cc.addDeadlineLocked(s)
}

// headInLocked ends the wait for the response head: the stream is due
// at the request's deadline again, if it has one.
func (s *h2Stream) headInLocked() {
	if s.headDL.IsZero() || !s.deadline.Equal(s.headDL) {
		return
	}
	s.cc.removeDeadlineLocked(s)
	s.deadline = s.overall
	if !s.deadline.IsZero() {
		s.cc.addDeadlineLocked(s)
	}
}

// expireLocked ends a request that is still going with err, queueing
// RST_STREAM (CANCEL). A finished stream is left alone: its body, all
// received, stays readable.
func (s *h2Stream) expireLocked(err error) {
	if s.closed {
		return
	}
	if s.id == 0 {
		if s.err == nil {
			s.err = err // send sees it before it opens the stream
		}
		s.stopUploadLocked() // a prefetch may be blocked in the body's Read
		return
	}
	if cc := s.cc; cc.flushing && s.startOff >= cc.taken && isTimeout(err) {
		// Its HEADERS never left: they waited behind a write for all
		// of the request's time (a server that stopped reading). The
		// connection takes no new streams, which would wait there too,
		// and closes once those it has end, which breaks the write.
		cc.spent = true
	}
	s.resetLocked(h2.ErrCodeCancel, err)
}

// resetLocked sends RST_STREAM with code and ends the stream. With a nil
// err the stream just closes (the response is whole and stays readable);
// otherwise err fails the request and its body, whose unread bytes are
// given back to the connection's window.
func (s *h2Stream) resetLocked(code h2.ErrCode, err error) {
	if !s.closed && s.id != 0 {
		s.cc.wbuf = h2.AppendRSTStream(s.cc.wbuf, s.id, code)
	}
	if err == nil {
		s.closeLocked()
		s.cond.Broadcast()
		return
	}
	s.abortLocked(err)
}

// abortLocked ends the stream with err, without a frame: the server reset
// it, or the connection is gone, or resetLocked sent the frame.
func (s *h2Stream) abortLocked(err error) {
	if s.err == nil {
		s.err = err
	}
	s.dropBufLocked()
	s.closeLocked()
	s.cond.Broadcast()
}

// stopUploadLocked closes the request body of a stream that ended (failed,
// reset, or whole response and the server's NO_ERROR reset) while its
// upload may be blocked reading it (an io.Pipe, say), as net/http does:
// the Read returns and the upload, inline or on its goroutine, ends.
// The Close runs on a goroutine of its own: it is the caller's code, and
// the connection's lock is held.
func (s *h2Stream) stopUploadLocked() {
	if u := s.up; u != nil && !u.done && u.body != nil && u.began.Load() && !u.closed.Load() {
		go u.closeBody()
	}
}

// closeLocked takes the stream out of the connection's table once
// neither end will send more on it: its slot is free for another request
// and its timers stop.
func (s *h2Stream) closeLocked() {
	if s.closed || s.id == 0 {
		return
	}
	s.closed = true
	delete(s.cc.streams, s.id)
	s.stopTimersLocked()
	s.cc.releaseLocked(s.id)
	s.stopUploadLocked() // nothing more of the body may go
}

// stopTimersLocked takes the stream off the connection's deadlines and
// stops its context watch.
func (s *h2Stream) stopTimersLocked() {
	if s.dlIndex >= 0 {
		s.cc.removeDeadlineLocked(s)
	}
	if s.stopCtx != nil {
		s.stopCtx()
		s.stopCtx = nil
	}
}

// dropBufLocked forgets the unread body bytes and gives their credit back
// to the connection: nobody will read them.
func (s *h2Stream) dropBufLocked() {
	if n := len(s.buf) - s.off; n > 0 {
		cc := s.cc
		if inc := cc.inflow.Release(uint32(n)); inc > 0 {
			cc.wbuf = h2.AppendWindowUpdate(cc.wbuf, 0, inc)
		}
	}
	s.buf, s.off = nil, 0
}
