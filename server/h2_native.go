package server

// HTTP/2 engine: the native API (Ctx) on HTTP/2 streams.

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The native API (Server.Native) over HTTP/2.
//
// A native stream carries a Ctx like an HTTP/1.1 request's: the request
// is a wire.Request whose fields point into the stream's own buffer, the
// response is the same response record (status, headers, trailers,
// collected body) the HTTP/1.1 writer uses, encoded as HEADERS and DATA
// frames instead of HTTP/1.1 text. Native streams are recycled by their
// connection (a native handler may not keep its Ctx past its return), so
// a request costs no allocation once the connection has warmed up.

// h2MaxFreeStreams bounds the native streams a busy connection keeps
// for reuse (as many as it may have open at once); a connection idle for
// h2IdleTrim gives them back (trimIdle), with its read buffer.
const (
	h2MaxFreeStreams = h2.DefaultMaxConcurrentStreams
	h2IdleTrim       = 100 * time.Millisecond
)

// h2Proto is the Proto of a native HTTP/2 request.
var h2Proto = []byte("HTTP/2.0")

var contentTypeName = []byte("content-type")

// newNativeStream takes a recycled stream (or makes one) for a native
// handler and fills its Ctx's request from the validated header block.
func (sc *h2Conn) newNativeStream(id uint32, state h2.StreamState, ended bool) *h2Stream {
	var st *h2Stream
	if n := len(sc.free); n > 0 {
		st = sc.free[n-1]
		sc.free = sc.free[:n-1]
	} else {
		st = &h2Stream{nx: new(Ctx)}
	}
	x, hbuf := st.nx, st.hbuf[:0]
	*st = h2Stream{
		sc:       sc,
		id:       id,
		state:    state,
		out:      h2.StreamWindow(sc.peerWindow),
		declared: sc.val.ContentLength,
		nx:       x,
	}
	st.in.Init(sc.srv.cfg.h2StreamWindow, true)
	st.wake.L = &sc.mu
	st.rw.st = st // its deadlines serve ReadTimeout and WriteTimeout

	// The request's bytes, in the stream's buffer: method, path,
	// authority, then each field's name and value.
	v, f := &sc.val, &sc.fields
	hbuf = append(hbuf, v.Method...)
	hbuf = append(hbuf, v.Path...)
	hbuf = append(hbuf, v.Authority...)
	hbuf = append(hbuf, f.names...)
	hbuf = append(hbuf, f.vals...)
	st.hbuf = hbuf
	off := 0
	next := func(n int) []byte {
		b := hbuf[off : off+n : off+n]
		off += n
		return b
	}
	req := &x.req
	headers := req.Headers[:0]
	*req = wire.Request{
		Method: next(len(v.Method)),
		Target: next(len(v.Path)),
		Proto:  h2Proto,
		Host:   next(len(v.Authority)),
	}
	names, vals := next(len(f.names)), next(len(f.vals))
	if len(req.Host) > 0 {
		headers = append(headers, wire.Header{Name: hostName, Value: req.Host})
	}
	ns, vs := 0, 0
	for i := range f.ends {
		headers = append(headers, wire.Header{Name: names[ns:f.nends[i]:f.nends[i]], Value: vals[vs:f.ends[i]:f.ends[i]]})
		ns, vs = f.nends[i], f.ends[i]
	}
	req.Headers = headers
	st.fieldCount = f.count
	st.isHead = string(req.Method) == http.MethodHead
	switch {
	case ended:
		st.bodyEnd = true
	case v.ContentLength >= 0:
		req.ContentLength = v.ContentLength
	default:
		req.ContentLength = -1
	}
	if !ended {
		st.body.st = st
		st.expect100 = equalFoldString(string(req.Header("Expect")), "100-continue")
	}
	x.h2 = st
	x.c = nil
	x.fullDuplex = false
	r := &x.resp
	r.x = x
	r.state = respCollecting
	r.status = 200
	r.contentType = r.contentType[:0]
	r.nhdrs, r.ntrailers = 0, 0
	r.buf = r.buf[:0]
	r.declaredLen = -1
	r.wantClose, r.hasDate, r.forceChunked, r.discard = false, false, false, false
	r.sent = 0
	r.err = nil
	r.collectLimit = h2WriteChunk
	sc.table[id] = st
	return st
}

var hostName = []byte("host")

// recycleLocked keeps a finished native stream for the connection's next
// one.
func (sc *h2Conn) recycleLocked(st *h2Stream) {
	if st.nx == nil || !st.handlerDone || len(sc.free) >= h2MaxFreeStreams {
		return
	}
	if cap(st.nx.resp.buf) > 4*h2WriteChunk {
		st.nx.resp.buf = nil
	}
	sc.free = append(sc.free, st)
}

// runNative runs a native handler on its stream, then completes the
// response. The limits HTTP/1.1 applies before the handler apply here too.
func (st *h2Stream) runNative() {
	x := st.nx
	sc := st.sc
	defer st.done()
	st.armTimeouts()
	lim := &sc.srv.cfg.limits
	switch {
	case st.fieldCount > lim.MaxHeaders:
		x.Error(http.StatusRequestHeaderFieldsTooLarge, tooManyFieldsText(lim.MaxHeaders))
	case lim.MaxBodyBytes >= 0 && x.req.ContentLength > lim.MaxBodyBytes:
		x.Error(http.StatusRequestEntityTooLarge, tooLargeText(lim.MaxBodyBytes))
	case string(x.req.Target) == "*" && string(x.req.Method) == http.MethodOptions && !sc.srv.DisableGeneralOptionsHandler:
		x.SetContentLength(0) // the server's own answer, as on HTTP/1.1
	default:
		if !st.callNative() {
			return // it panicked after its head went out: the stream is reset
		}
		sc.mu.Lock()
		over := st.bodyOver
		sc.mu.Unlock()
		if over {
			x.Error(http.StatusRequestEntityTooLarge, tooLargeText(lim.MaxBodyBytes))
		}
	}
	x.h2Finish()
}

// callNative runs the handler. A panic is logged and answered with a 500
// when nothing was sent yet (ok stays true), else the stream is reset.
func (st *h2Stream) callNative() (ok bool) {
	x := st.nx
	returned := false
	defer func() {
		if !returned { // a panic, panic(nil) under GODEBUG=panicnil=1 included
			if p := recover(); p != nil {
				st.logPanic(p)
			}
			if x.resp.committed() {
				x.resp.state = respAborted
				st.abort(h2.ErrCodeInternal)
				ok = false
				return
			}
			x.resp.clearHeaders()
			x.resp.ntrailers = 0
			x.Error(http.StatusInternalServerError, "handler panicked")
			ok = true
		}
	}()
	st.sc.srv.Native(x)
	returned = true
	return true
}

// h2Write is Ctx.Write on HTTP/2: collected up to 16 KiB, then sent as
// DATA frames behind the head.
func (x *Ctx) h2Write(p []byte) (int, error) {
	r := &x.resp
	if r.err != nil {
		return 0, r.err
	}
	if r.state == respDone || r.state == respAborted {
		return 0, errAborted
	}
	if r.declaredLen >= 0 && r.sent+int64(len(p)) > r.declaredLen {
		return 0, ErrBodyTooLong
	}
	r.sent += int64(len(p))
	if x.h2.isHead || !wire.BodyAllowed(r.status) {
		return len(p), nil // no body to send (RFC 9110 §9.3.2, §15.3.5)
	}
	if r.state == respCollecting {
		if len(r.buf)+len(p) <= r.collectLimit {
			r.buf = append(r.buf, p...)
			return len(p), nil
		}
		if err := x.h2Commit(false); err != nil {
			return 0, err
		}
	}
	if err := x.h2SendBuffered(false); err != nil {
		return 0, err
	}
	if err := x.h2.sendData(p, false); err != nil {
		r.err = err
		return 0, err
	}
	return len(p), nil
}

// h2SendBuffered sends what the response collected.
func (x *Ctx) h2SendBuffered(end bool) error {
	r := &x.resp
	if len(r.buf) == 0 && !end {
		return nil
	}
	err := x.h2.sendData(r.buf, end)
	r.buf = r.buf[:0]
	if err != nil {
		r.err = err
	}
	return err
}

// h2Flush is Ctx.Flush on HTTP/2.
func (x *Ctx) h2Flush() error {
	r := &x.resp
	if r.err != nil {
		return r.err
	}
	if r.state == respCollecting {
		if err := x.h2Commit(false); err != nil {
			return err
		}
	}
	return x.h2SendBuffered(false)
}

// h2Commit queues the response's HEADERS frame. With end, the response
// ends with it (no body, no trailers) and carries the length it knows.
func (x *Ctx) h2Commit(end bool) error {
	r := &x.resp
	st := x.h2
	length := r.declaredLen
	if length < 0 && end && (!st.isHead || len(r.buf) > 0) {
		length = int64(len(r.buf))
	}
	r.state = respFixed
	if end {
		r.state = respDone
	}
	err := st.queueBlock(end, true, func(sc *h2Conn, block []byte) []byte {
		enc := &sc.enc
		block = enc.AppendField(block, ":status", statusString(r.status))
		if !r.hasDate {
			sc.num = appendDate(sc.num[:0], time.Now())
			block = enc.AppendFieldBytes(block, dateName, sc.num)
		}
		if len(r.contentType) > 0 {
			block = enc.AppendFieldBytes(block, contentTypeName, r.contentType)
		}
		block = sc.appendRespFields(block, r.hdrs[:r.nhdrs])
		switch {
		case r.status < 200 || r.status == http.StatusNoContent:
		case r.status == http.StatusNotModified && r.declaredLen < 0:
		case length >= 0:
			sc.num = strconv.AppendInt(sc.num[:0], length, 10)
			block = enc.AppendFieldBytes(block, contentLengthName, sc.num)
		}
		st.headSent = true
		return block
	})
	if err != nil {
		r.err = err
	}
	return err
}

// appendRespFields encodes response fields a native handler set,
// lowercasing their names in the connection's scratch; the fields
// HTTP/2 does not carry (§8.2.2) are left out. Under sc.mu.
func (sc *h2Conn) appendRespFields(block []byte, fields []respHeader) []byte {
	for i := range fields {
		f := &fields[i]
		if h2HopFold(f.name) {
			continue
		}
		sc.lname = appendLower(sc.lname[:0], f.name)
		block = sc.enc.AppendFieldBytes(block, sc.lname, f.value)
	}
	return block
}

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// h2Finish completes the response after the handler returned: the head
// if it was not sent, the collected body, trailers, END_STREAM. A body
// shorter than the declared length resets the stream, since the client
// could not tell it from a complete one.
func (x *Ctx) h2Finish() {
	r := &x.resp
	st := x.h2
	if r.err != nil || r.state == respDone || r.state == respAborted {
		return
	}
	trailers := r.ntrailers > 0 && !st.isHead && wire.BodyAllowed(r.status)
	if r.state == respCollecting {
		if len(r.buf) == 0 && !trailers {
			x.h2Commit(true)
			x.h2QueueNoErr()
			return
		}
		if r.declaredLen < 0 && !trailers {
			r.declaredLen = int64(len(r.buf)) // all of it is here: say how long
		}
		if x.h2Commit(false) != nil {
			return
		}
	}
	if x.h2SendBuffered(!trailers) != nil {
		return
	}
	if trailers {
		st.sendTrailerFields(r.trailers[:r.ntrailers])
	}
	r.state = respDone
	if r.declaredLen >= 0 && r.sent < r.declaredLen && !st.isHead && wire.BodyAllowed(r.status) {
		st.abort(h2.ErrCodeInternal)
		return
	}
	x.h2QueueNoErr()
}

// h2QueueNoErr: if the client is still sending a body nobody will read,
// reset the stream with NO_ERROR once the reader has read again (§8.1).
func (x *Ctx) h2QueueNoErr() {
	st := x.h2
	sc := st.sc
	sc.mu.Lock()
	if st.state == h2.StateHalfClosedLocal {
		sc.queueNoErrLocked(st)
	}
	sc.mu.Unlock()
}

// sendTrailerFields queues a native response's trailers, ending the
// stream.
func (st *h2Stream) sendTrailerFields(fields []respHeader) {
	st.queueBlock(true, true, func(sc *h2Conn, block []byte) []byte {
		return sc.appendRespFields(block, fields)
	})
}

// h2SetWriteDeadline is Ctx.SetWriteDeadline on HTTP/2: past it the
// stream is reset and writes fail.
func (x *Ctx) h2SetWriteDeadline(t time.Time) error { return x.h2.rw.SetWriteDeadline(t) }

func (x *Ctx) h2RemoteAddr() net.Addr { return x.h2.sc.nc.RemoteAddr() }
func (x *Ctx) h2LocalAddr() net.Addr  { return x.h2.sc.nc.LocalAddr() }

// h2Body is the request body of a native stream.
func (x *Ctx) h2Body() io.Reader { return &x.h2.body }

// h2ReadBody is Ctx.ReadBody on HTTP/2.
func (x *Ctx) h2ReadBody(dst []byte) ([]byte, error) {
	body := &x.h2.body
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
