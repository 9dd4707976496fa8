package server

// HTTP/2 engine: the native API (Ctx) on HTTP/2 streams.

import (
	"io"
	"net"
	"net/http"
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
// h2IdleTrim gives them back (trimIdle), with its read buffer, its write
// buffers and its writer goroutine.
const (
	h2MaxFreeStreams = h2.DefaultMaxConcurrentStreams
	h2IdleTrim       = 100 * time.Millisecond
)

// h2Proto is the Proto of a request on hotpath's HTTP/2 engine.
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
	hbuf = append(hbuf, v.Protocol...)
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
	if v.Protocol != nil { // RFC 8441's extended CONNECT, as the http.Handler API shows it
		headers = append(headers, wire.Header{Name: protocolName, Value: next(len(v.Protocol))})
		st.tunnel = true
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
	st.body.st = st // a request without a body reads EOF from it
	if !ended {
		st.expect100 = equalFoldString(string(req.Header("Expect")), "100-continue")
	}
	x.h2 = st
	x.c = nil
	x.fullDuplex = false
	r := &x.resp
	r.x, r.st = x, st
	r.reset()
	r.collectLimit = h2WriteChunk
	sc.table[id] = st
	return st
}

var hostName, protocolName = []byte("host"), []byte(":protocol")

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
// A handler that ends its goroutine (runtime.Goexit, as t.Fatal in a
// test's handler does) has its stream reset, as an http.Handler's is: the
// response would otherwise never end.
func (st *h2Stream) runNative() {
	x := st.nx
	sc := st.sc
	defer st.done()
	ended := false
	defer func() {
		if !ended {
			st.abort(h2.ErrCodeInternal)
		}
	}()
	st.armTimeouts()
	lim := &sc.srv.cfg.limits
	switch {
	case st.fieldCount > lim.MaxHeaders:
		st.handlerReturned()
		x.Error(http.StatusRequestHeaderFieldsTooLarge, tooManyFieldsText(lim.MaxHeaders))
	case lim.MaxBodyBytes >= 0 && x.req.ContentLength > lim.MaxBodyBytes:
		st.handlerReturned()
		x.Error(http.StatusRequestEntityTooLarge, tooLargeText(lim.MaxBodyBytes))
	case string(x.req.Target) == "*" && string(x.req.Method) == http.MethodOptions && !sc.srv.DisableGeneralOptionsHandler:
		st.handlerReturned()
		x.SetContentLength(0) // the server's own answer, as on HTTP/1.1
	default:
		if !st.callNative() {
			ended = true
			return // it panicked after its head went out: the stream is reset
		}
		if over := st.handlerReturned(); over {
			x.Error(http.StatusRequestEntityTooLarge, tooLargeText(lim.MaxBodyBytes))
		}
	}
	x.resp.h2Finish()
	ended = true
}

// callNative runs the handler. A panic is logged and answered with a 500
// when nothing was sent yet (ok stays true), else the stream is reset.
func (st *h2Stream) callNative() (ok bool) {
	x := st.nx
	returned := false
	defer func() {
		if !returned { // a panic, panic(nil) under GODEBUG=panicnil=1 included
			if p := recover(); p != nil && p != http.ErrAbortHandler {
				st.logPanic(p) // as on HTTP/1.1 (h1_native.go) and net/http
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
