package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"reflect"
	"sync"
)

// The http.Handler adapter.
//
// A handler runs inline on the connection's goroutine: no goroutine and no
// channel hand-off per request. What a handler may keep after it returns
// (the *http.Request, its URL, Header and Body, every string in them) is
// its own: those are allocated per request, as handlers routinely hand r
// to goroutines (http.TimeoutHandler's inner handler keeps running after a
// timeout). Strings are copies, never views of the reused read buffer, and
// identical strings are reused from the previous request on the same
// connection (a client sends the same Host and headers again and again).
// What is reused is what net/http also forbids using after the handler
// returns: the ResponseWriter, and the buffers under it; the handler is
// handed a face of it for its request alone (requestWriter), which does
// nothing once the handler returned.
//
// The adapter is split by concept: request.go builds the *http.Request,
// context.go is its context and the disconnect watcher behind it,
// h1_responsewriter.go is the ResponseWriter (a face on the connection's response,
// response.go).

// netHTTPBufferSize is how much body net/http collects before it stops
// computing a Content-Length and starts chunking (bufferBeforeChunkingSize
// in net/http's server.go); the adapter does the same so responses are
// framed alike on both engines.
const netHTTPBufferSize = 2048

// adapter is the working state of the http.Handler adapter: part of a
// connection's connWork, reused with it. What belongs to the connection
// itself (its base context, remote address and TLS state) is on the conn,
// which keeps it while the connection is parked.
type adapter struct {
	c    *conn
	h    http.Handler
	req  *http.Request // the current request
	body *requestBody  // the current request's body, if it has one
	rw   responseWriter

	// stater is a connection that reports a TLS state without being a
	// *tls.Conn (a wrapper around one), asked per request. Such a
	// connection never parks, so it keeps its adapter.
	stater  interface{ ConnectionState() tls.ConnectionState }
	ctx     *requestContext // the current request's
	watchFn func()          // a.watchRequested, bound once

	// The disconnect watcher's state, shared with whichever goroutine
	// first waits on the request context.
	watchMu   sync.Mutex
	wantWatch bool           // someone waits for cancellation
	bodyDone  bool           // the request body is consumed: the socket may be watched
	watchOff  bool           // the handler returned: start no watcher
	watchDone chan struct{}  // non-nil while a watcher runs
	strs      requestStrings // the previous request's strings, reused when the bytes match
}

// handlerConn is what the http.Handler adapter keeps of a connection
// between its requests, parked or not: the base of its requests' contexts
// (BaseContext, ConnContext, LocalAddrContextKey), Request.RemoteAddr,
// Request.TLS. A separate allocation, so that native connections do not
// carry it.
type handlerConn struct {
	base       context.Context
	remoteAddr string
	tlsState   *tls.ConnectionState
}

func newAdapter(h http.Handler) *adapter {
	a := &adapter{h: h}
	a.rw.a = a
	a.rw.hdr = make(http.Header, 8)
	a.watchFn = a.watchRequested
	return a
}

// addrs takes the connection's addresses, on its own goroutine: a
// listener's RemoteAddr may block (a PROXY-protocol listener's waits for
// the header), and the accept loop must not wait for one connection.
func (c *conn) addrs() {
	c.hc.remoteAddr = c.nc.RemoteAddr().String()
	if !c.isTLS {
		c.handler.stater, _ = c.nc.(interface{ ConnectionState() tls.ConnectionState })
	}
	c.hc.base = context.WithValue(c.hc.base, http.LocalAddrContextKey, c.nc.LocalAddr())
}

// serveHTTP builds the request, runs the handler and completes the
// response semantics net/http gives a handler (implicit 200, sniffed
// Content-Type, trailers).
func (a *adapter) serveHTTP() {
	x := &a.c.ctx
	ra := new(requestAlloc)
	ctx := &ra.ctx
	ctx.Context = a.c.hc.base
	if err := a.buildRequest(ra); err != nil {
		ctx.cancel(context.Canceled)
		x.resp.replaceWithError(http.StatusBadRequest, err.Error())
		return
	}
	a.rw.reset()
	if a.req.Method == http.MethodOptions && a.req.RequestURI == "*" && !a.c.srv.DisableGeneralOptionsHandler {
		// net/http answers "OPTIONS *" itself, whatever the handler.
		x.SetContentLength(0)
		ctx.cancel(context.Canceled)
		return
	}
	a.ctx = ctx
	a.watchMu.Lock()
	a.wantWatch, a.watchOff, a.bodyDone = false, false, a.c.ctx.body.done.Load()
	a.watchMu.Unlock()
	ctx.watched = a.watchFn
	// Across the handler this frame keeps c and ctx, not a or x: a
	// handler that hijacks lets go of both (letGo), and the adapter is
	// taken from c again after it returns.
	c := a.c
	ra.w.c.Store(c)
	defer func() {
		// Before anything else: a goroutine that kept w reaches the
		// connection no more (requestWriter), whatever it serves next.
		ra.w.c.Store(nil)
		if c.hijacked {
			ctx.cancel(context.Canceled) // as net/http, when the handler returns
			return
		}
		c.handler.endRequest()
	}()
	a.h.ServeHTTP(&ra.w, a.req)
	if c.hijacked {
		return
	}
	a, x = c.handler, &c.ctx
	a.takeBody()
	if maxBytesHit(a.req) {
		// net/http's MaxBytesReader closes the connection through an
		// unexported hook on net/http's own ResponseWriter; hotpath looks
		// at the reader the handler left in r.Body instead.
		x.resp.wantClose = true
		if x.resp.committed() {
			a.c.closing = true
		}
	}
	a.rw.finish()
}

// maxBytesReaderType is the type http.MaxBytesReader returns.
var maxBytesReaderType = reflect.TypeOf(http.MaxBytesReader(nil, http.NoBody, 0))

// maxBytesHit reports whether r.Body is an http.MaxBytesReader that hit
// its limit: a zero-length Read returns its sticky error and consumes
// nothing.
func maxBytesHit(r *http.Request) bool {
	if r == nil || r.Body == nil || reflect.TypeOf(r.Body) != maxBytesReaderType {
		return false
	}
	_, err := r.Body.Read(nil)
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}

// endRequest cancels the request's context, stops the disconnect watcher
// and takes the body away from the handler (a goroutine it started may
// still hold it) before the connection reads again.
func (a *adapter) endRequest() {
	a.takeBody()
	if r := a.req; r != nil && r.MultipartForm != nil {
		r.MultipartForm.RemoveAll() // its temporary files, as net/http
	}
	a.ctx.cancel(context.Canceled)
	a.req = nil // trailers read while draining the body go nowhere
	a.stopWatch()
}

// takeBody ends the handler's hold on the request body, before the
// response is completed: from here on only the connection reads it.
func (a *adapter) takeBody() {
	if b := a.body; b != nil {
		a.body = nil
		if !b.mu.TryLock() {
			// Another goroutine is in the middle of a Read (an
			// http.TimeoutHandler's inner handler): cut it short. Where
			// that read stopped in the body is unknown, so the
			// connection ends with this response. The read must not
			// take the cut for a stall to wait out (readDirect).
			a.c.ctx.body.cut.Store(true)
			a.c.nc.SetReadDeadline(aLongTimeAgo)
			b.mu.Lock()
			a.c.ctx.body.err = errBodyAfterHandler
			a.c.nc.SetReadDeadline(a.c.readDL)
		}
		b.closed = true
		b.mu.Unlock()
	}
}
