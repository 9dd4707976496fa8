package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"time"
)

// Where what both engines share picks its engine: each function here is
// one branch, HTTP/1.1 (h1_*.go) or HTTP/2 (h2_*.go), and no other shared
// file names an engine's declarations (internal/layout's
// TestEnginesMeetOnlyInDispatch). The response record (response.go) and
// the Ctx (ctx.go) know their engine by one field: response.st and
// Ctx.h2, the HTTP/2 stream, nil on HTTP/1.1.

// stream sends p as body after the head went out.
func (r *response) stream(p []byte) (int, error) {
	if r.st != nil {
		return r.h2Stream(p)
	}
	return r.h1Write(p)
}

// send sends what was written so far.
func (r *response) send() error {
	if r.st != nil {
		return nil // the stream's frames are queued: its writer sends them
	}
	return r.h1Flush()
}

// commitHead sends the head of a body that streams, and the body
// collected so far behind it.
func (r *response) commitHead() error {
	if r.st != nil {
		return r.h2Commit()
	}
	return r.h1Commit()
}

// finish completes the response after the handler returned: a collected
// response is written whole with its exact length; a streamed one gets
// its end.
func (r *response) finish() {
	if r.st != nil {
		r.h2Finish()
		return
	}
	r.h1Finish()
}

// dropOwnWriteDeadline ends the handler's own write deadline with its
// response: the server's timeouts apply again.
func (r *response) dropOwnWriteDeadline() {
	r.ownWriteDeadline = false
	if r.st == nil {
		r.h1DropWriteDeadline()
	}
}

// closeAfter ends the connection (HTTP/1.1) after what is already queued.
func (r *response) closeAfter() {
	if r.st == nil {
		r.h1CloseAfter()
	}
}

// Body returns the request body as a stream. It reads the body from the
// connection as it is consumed and never buffers it whole. A body that
// breaks the framing or exceeds MaxRequestBodyBytes returns a *wire.Error;
// the server then answers with that error's status (413 or 400) unless the
// response was already sent. Unread body bytes are discarded after the
// handler returns.
func (x *Ctx) Body() io.Reader {
	if x.h2 != nil {
		return x.h2Body()
	}
	return x.h1Body()
}

// ReadBody appends the whole body to dst and returns it.
func (x *Ctx) ReadBody(dst []byte) ([]byte, error) {
	if x.h2 != nil {
		return x.h2ReadBody(dst)
	}
	// HTTP/1.1's loop here rather than behind one more call: a handler
	// reading a small body does so on every request.
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := x.body.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// RemoteAddr returns the client's address.
func (x *Ctx) RemoteAddr() net.Addr {
	if x.h2 != nil {
		return x.h2RemoteAddr()
	}
	return x.h1RemoteAddr()
}

// LocalAddr returns the address the request arrived on.
func (x *Ctx) LocalAddr() net.Addr {
	if x.h2 != nil {
		return x.h2LocalAddr()
	}
	return x.h1LocalAddr()
}

// ReadFrom copies src into the body; io.Copy(c, src) finds it. With a
// length declared by SetContentLength, on a TCP connection, a file (or a
// socket) goes to the client inside the kernel: the head is sent, then
// sendfile (splice). Other readers are copied through a pooled buffer.
func (x *Ctx) ReadFrom(src io.Reader) (int64, error) {
	if x.h2 != nil {
		return x.h2ReadFrom(src)
	}
	return x.h1ReadFrom(src)
}

// SetWriteDeadline replaces the server's write timeouts for the rest of
// this response: a long stream (server-sent events, a large download) may
// extend it as it goes; the zero time means no deadline. The next request
// on the connection is back under the server's timeouts.
func (x *Ctx) SetWriteDeadline(t time.Time) error {
	if x.h2 != nil {
		return x.h2SetWriteDeadline(t)
	}
	return x.h1SetWriteDeadline(t)
}

// SetReadDeadline replaces the server's read timeouts
// (ReadStallTimeout, ReadTimeout) for the rest of this request's body: a
// read past the deadline fails with os.ErrDeadlineExceeded; the zero
// time means no deadline. A long upload, or the stream of an extended
// CONNECT (RFC 8441: a WebSocket over HTTP/2), may set it as it goes.
// The next request on the connection is back under the server's
// timeouts.
func (x *Ctx) SetReadDeadline(t time.Time) error {
	if x.h2 != nil {
		return x.h2.setReadDeadline(t)
	}
	return x.h1SetReadDeadline(t)
}

// The protocol a new connection speaks: chosen by ALPN after TLS, or by
// the h2c preface on cleartext.

// afterTLS dispatches a connection whose TLS is established (st) by its
// negotiated protocol: HTTP/2 to the HTTP/2 engine, a protocol of the
// user's to TLSNextProto (only for a *tls.Conn, tc), the rest to
// HTTP/1.1 (true). nc is the connection as accepted: a *tls.Conn, or a
// wrapper of one with a ConnectionState method, which net/http serves
// the same way.
func (c *conn) afterTLS(nc net.Conn, tc *tls.Conn, st tls.ConnectionState) bool {
	if c.handler != nil {
		c.hc.tlsState = &st
	}
	if fn := c.srv.TLSNextProto[st.NegotiatedProtocol]; fn != nil && tc != nil && st.NegotiatedProtocol != "h2" {
		// A protocol of the user's: it owns the connection until fn
		// returns, then the connection closes, as with net/http.
		c.setState(StateActive)
		fn(c.srv.httpServer, tc, c.srv.cfg.handler)
		return false
	}
	if st.NegotiatedProtocol == "h2" && c.srv.cfg.h2TLS && (c.srv.Native == nil || c.srv.ownH2()) {
		c.hijacked = true // the HTTP/2 server owns it now
		c.srv.trackConn(c, false)
		c.untracked = true
		if c.srv.ownH2() {
			base, state := c.baseContext(), c.reportState()
			c.dropWork()
			c.srv.serveH2(nc, nil, &st, base, state)
			return false
		}
		c.setState(StateHijacked)
		if err := c.srv.handoffTLS().handoff(nc); err != nil {
			nc.Close()
		}
		return false
	}
	switch st.NegotiatedProtocol {
	case "", "http/1.1", "http/1.0":
		return true
	}
	// A protocol was negotiated that nothing here serves (advertised in
	// TLSConfig.NextProtos without a TLSNextProto entry): the client
	// will not speak HTTP/1.1, so the connection closes, as net/http's
	// does. A wrapper that is not a *tls.Conn is served as HTTP/1.1, as
	// there (net/http reads ALPN only from a *tls.Conn).
	return tc == nil
}

// maybeH2C hands a connection that opens with the HTTP/2 preface to the
// h2c server, with the bytes already read. It reports whether it did.
// Called before the first request only, and only when Protocols has
// UnencryptedHTTP2.
func (c *conn) maybeH2C() bool {
	for {
		got := c.rbuf[c.r:c.w]
		n := min(len(got), len(h2cPreface))
		if string(got[:n]) != h2cPreface[:n] {
			if notHTTP1(got) {
				c.refuseNotHTTP()
				return true
			}
			return false
		}
		if n == len(h2cPreface) {
			break
		}
		if c.w == len(c.rbuf) || c.fill() != nil {
			return false
		}
	}
	c.hijacked = true
	c.srv.trackConn(c, false)
	c.untracked = true
	c.nc.SetDeadline(time.Time{})
	if c.srv.ownH2() {
		// The HTTP/2 connection has buffers of its own: give the
		// HTTP/1.1 ones back for as long as it lives (dropWork).
		pending := append([]byte(nil), c.rbuf[c.r:c.w]...)
		c.r = c.w
		base, state := c.baseContext(), c.reportState()
		c.dropWork()
		c.srv.serveH2(c.nc, pending, nil, base, state)
		return true
	}
	c.setState(StateHijacked)
	rc := &replayConn{Conn: c.nc, pending: append([]byte(nil), c.rbuf[c.r:c.w]...)}
	c.r = c.w
	if err := c.srv.handoffCleartext().handoff(rc); err != nil {
		c.nc.Close()
	}
	return true
}

// The Server's lifecycle (serve.go, shutdown.go, handoff.go) reaches each
// engine's connections here.

// startConn starts serving an accepted connection: on the HTTP/1.1
// engine, which hands it to HTTP/2 when ALPN or the h2c preface says so
// (afterTLS, maybeH2C). It reports false once the server is shutting
// down. StateNew is reported before Serve accepts again, as net/http
// does: a hook sees every connection before Serve can return.
func (s *Server) startConn(nc net.Conn, ctx context.Context) bool {
	c := newConn(s, nc, ctx)
	if !s.trackConn(c, true) {
		return false
	}
	c.setState(StateNew)
	go c.serve()
	return true
}

// wakeIdle interrupts the idle connections so that they close, and
// returns how many connections Shutdown still waits for (HTTP/2's
// engine's connections are waited for by shutdownH2Engine).
func (s *Server) wakeIdle() int { return s.h1WakeIdle() }

// closeConnsLocked closes every connection now (Close); HTTP/2's are
// closed by shutdownH2Engine. Hold s.mu.
func (s *Server) closeConnsLocked() { s.h1CloseConnsLocked() }

// endIdleConns ends the idle connections of both engines gracefully
// (SetKeepAlivesEnabled(false)).
func (s *Server) endIdleConns() {
	s.mu.Lock()
	s.h1EndIdleLocked()
	conns := s.h2ConnsLocked()
	s.mu.Unlock()
	for _, sc := range conns {
		sc.gracefulShutdown()
	}
}

// shutdownH2Engine shuts down hotpath's HTTP/2 engine's connections:
// gracefully, or at once with now.
func (s *Server) shutdownH2Engine(ctx context.Context, now bool) error {
	return s.shutdownH2Conns(ctx, now)
}

// Hijack takes the connection over from a native handler, as
// http.Hijacker does for an http.Handler: the response head goes out
// first if the handler set a status or a header (SetStatus(101) and the
// upgrade's headers, for a WebSocket), then the server lets the
// connection go: no deadline is left on it, it is no longer tracked
// (Shutdown and Close leave it alone) and the new owner closes it. It
// returns the connection and the bytes already read past the request,
// which the new owner reads first. Afterwards, as on net/http, the Ctx's
// writes answer http.ErrHijacked and its body's reads
// http.ErrBodyReadAfterClose; the slices its methods returned (the
// request's method, target, headers) must not be used. HTTP/1.1 only:
// on HTTP/2 it returns http.ErrNotSupported (a stream cannot be taken
// over; RFC 8441's extended CONNECT is how WebSockets go over HTTP/2).
func (x *Ctx) Hijack() (net.Conn, []byte, error) {
	if x.h2 != nil {
		return nil, nil, http.ErrNotSupported
	}
	pending, err := x.c.hijackNative(x)
	if err != nil {
		return nil, nil, err
	}
	return x.c.nc, pending, nil
}
