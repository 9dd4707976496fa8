package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/hotpathhq/hotpath/wire"
)

// The http.Handler adapter on HTTP/1.1: the *http.Request built from the
// connection's parsed head (with the builder both engines share,
// request.go), its Body, and its trailers.

// requestAlloc gathers what a request needs that the handler may keep, so
// that it costs one allocation instead of four.
type requestAlloc struct {
	ctx  requestContext
	url  url.URL
	vals [16]string    // backing for up to 16 header values
	w    requestWriter // the ResponseWriter the handler is handed
}

// buildRequest makes the handler's *http.Request from the parsed head.
func (a *adapter) buildRequest(ra *requestAlloc) error {
	w := &a.c.ctx.req
	var r http.Request
	if err := a.strs.requestTarget(&r, &ra.url, w.Method, w.Target, w.Host, false); err != nil {
		return err
	}
	r.Proto = "HTTP/1.1"
	r.ProtoMajor, r.ProtoMinor = 1, w.ProtoMinor
	switch {
	case len(w.Proto) == 8 && w.Proto[5] == '2': // "PRI *" (conn.priHandOver)
		r.Proto, r.ProtoMajor = "HTTP/2.0", 2
	case w.ProtoMinor == 0:
		r.Proto = "HTTP/1.0"
	}
	r.Header = a.strs.requestHeader(w.Headers, nil, ra.vals[:], false)
	r.ContentLength = w.ContentLength
	if w.Chunked {
		r.TransferEncoding = []string{"chunked"}
		// As net/http: the framing headers leave the map, declared
		// trailers become the Trailer map's keys.
		delete(r.Header, "Transfer-Encoding")
		r.Trailer = declaredTrailers(r.Header)
	}
	r.Close = w.Close
	r.RemoteAddr = a.c.hc.remoteAddr
	r.TLS = a.c.hc.tlsState
	if r.TLS == nil && a.stater != nil {
		// A connection that is TLS without being a *tls.Conn (a
		// wrapper's): its state, as net/http reports it.
		st := a.stater.ConnectionState()
		r.TLS = &st
	}
	if w.ContentLength == 0 && !w.Chunked {
		r.Body = http.NoBody
	} else {
		a.body = &requestBody{a: a}
		r.Body = a.body
	}
	a.req = r.WithContext(&ra.ctx) // the one allocation of the Request
	return nil
}

// onTrailer puts a request trailer field into Request.Trailer, as
// net/http does once the body is read (undeclared fields included).
func (a *adapter) onTrailer(name, value []byte) {
	r := a.req
	if r == nil {
		return
	}
	if r.Trailer == nil {
		r.Trailer = make(http.Header)
	}
	key := canonicalKey(name)
	r.Trailer[key] = append(r.Trailer[key], string(value))
}

// requestBody is the Request.Body: the connection's body stream, for
// this request only. Its lock is held across each Read and taken when the
// handler returns, as net/http's body.mu is, so a goroutine the handler
// left reading (http.TimeoutHandler's inner handler) never reads at the
// same time as the connection, nor into the next request.
type requestBody struct {
	a      *adapter
	mu     sync.Mutex
	closed bool // the handler returned
}

// discardBeforeHead runs as an http.Handler's response head is about to
// stream: what is left of a small Content-Length body the handler did not
// read is read and discarded now, and the body is closed (a later Read
// gets http.ErrBodyReadAfterClose), as net/http does unless the handler
// enabled full duplex. Clients that send the whole request before they
// read the response then never deadlock with a handler that answers
// without reading. A body still awaiting its 100 Continue, a chunked one
// and one past 256 KiB are left alone (past 256 KiB the connection
// closes after the response, decideClose).
func (a *adapter) discardBeforeHead() {
	x := &a.c.ctx
	b := a.body
	if b == nil || x.fullDuplex || x.body.chunked || x.body.done.Load() ||
		x.body.left.Load() > maxDrainBytes || x.req.Expect100 && !x.body.continueSent.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if !x.body.finish() {
		a.c.closing = true
	}
	b.closed = true
}

// errBodyAfterHandler is what a Read after the handler returned gets, as
// on net/http.
var errBodyAfterHandler = http.ErrBodyReadAfterClose

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyAfterHandler
	}
	body := &b.a.c.ctx.body
	n, err := body.readLarge(p)
	if err == io.EOF || body.done.Load() {
		// The last byte of a Content-Length body counts as its end, EOF
		// read or not, as net/http's: a handler that reads exactly the
		// declared length, then waits on its context, learns that the
		// client left.
		b.a.bodyConsumed()
	}
	if err != nil && err != io.EOF {
		var we *wire.Error
		if errors.As(err, &we) && we.Status == http.StatusRequestEntityTooLarge {
			return n, &http.MaxBytesError{Limit: b.a.c.cfg.limits.MaxBodyBytes}
		}
		if we == nil || err == wire.ErrUnexpectedEOF {
			// The connection failed under the body (the client left, a
			// reset, a stall): the request's context ends, as net/http's
			// does on a read error, so a handler that then waits on it
			// is not left waiting for a watcher that needs the whole
			// body read to start.
			b.a.ctx.cancel(context.Canceled)
		}
	}
	return n, err
}

// WriteTo copies the body to w in 32 KiB pieces (io.Copy finds it): a
// big upload is read straight from the socket in large reads, where
// io.Copy(io.Discard, r.Body) alone would read 8 KiB at a time.
func (b *requestBody) WriteTo(w io.Writer) (int64, error) { return copyOut(w, b) }

// Close ends the body; what is unread is discarded after the handler
// returns (or the connection closes, past 256 KiB).
func (b *requestBody) Close() error { return nil }
