package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"slices"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// TLS, and which engine a connection goes to.
//
// HTTP/1.1 over TLS runs on hotpath's engine like plain HTTP/1.1 (without
// the buffer-less idle wait, which needs the raw socket). A connection that
// negotiates "h2" through ALPN is served, after the handshake, on the
// connection's goroutine by hotpath's own HTTP/2 connection (h2_conn.go);
// or, with Server.HTTP2HandOff, handed to a net/http server running the
// same Handler, whose bundled HTTP/2 implementation serves it (a Native
// server then offers http/1.1 alone; see handoff.go).

// ListenAndServeTLS listens on s.Addr (":https" if empty) and serves TLS
// with the certificate and key in the given files (or s.TLSConfig's
// certificates when both are empty).
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	if s.shutting.Load() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":https"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

// ServeTLS is Serve over TLS. Connections negotiating HTTP/2 are served by
// net/http's HTTP/2 server with s.Handler.
func (s *Server) ServeTLS(ln net.Listener, certFile, keyFile string) error {
	cfg := &tls.Config{}
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	}
	if certFile != "" || keyFile != "" || len(cfg.Certificates) == 0 && cfg.GetCertificate == nil {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			ln.Close()
			return err
		}
		cfg.Certificates = append(cfg.Certificates, cert)
	}
	s.resolve()
	if len(cfg.NextProtos) == 0 {
		if s.cfg.h2TLS && (s.Native == nil || s.nativeH2()) {
			cfg.NextProtos = append(cfg.NextProtos, "h2")
		}
		if s.cfg.http1 {
			cfg.NextProtos = append(cfg.NextProtos, "http/1.1")
		}
		for proto := range s.TLSNextProto {
			if proto != "h2" && !slices.Contains(cfg.NextProtos, proto) {
				cfg.NextProtos = append(cfg.NextProtos, proto)
			}
		}
	}
	s.mu.Lock()
	s.tlsConfig = cfg
	s.mu.Unlock()
	return s.Serve(ln)
}

// handshake runs the TLS handshake of a new connection under
// ReadHeaderTimeout. It reports false when the connection was handed to
// HTTP/2 or failed; the engine then lets go of it.
func (c *conn) handshake(tc *tls.Conn) bool {
	if d := c.cfg.readHeaderTimeout; d > 0 {
		tc.SetDeadline(time.Now().Add(d))
	}
	if err := tc.Handshake(); err != nil {
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			// A plain-HTTP client on the TLS port: tell it, as net/http
			// does, rather than close without a word.
			re.Conn.SetWriteDeadline(time.Now().Add(time.Second))
			io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
			re.Conn.Close()
			return false
		}
		if re.Conn == nil {
			c.srv.logf("server: TLS handshake error from %s: %v", tc.RemoteAddr(), err)
		}
		return false
	}
	tc.SetDeadline(time.Time{})
	return c.afterTLS(tc, tc, tc.ConnectionState())
}

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
	if st.NegotiatedProtocol == "h2" && c.srv.cfg.h2TLS && (c.srv.Native == nil || c.srv.nativeH2()) {
		c.hijacked = true // the HTTP/2 server owns it now
		c.srv.trackConn(c, false)
		c.untracked = true
		if c.srv.nativeH2() {
			base, state := c.baseContext(), c.reportState()
			c.dropWork()
			c.srv.serveNativeH2(nc, nil, &st, base, state)
			return false
		}
		c.setState(StateHijacked)
		if err := c.srv.handoffTLS().handoff(nc); err != nil {
			nc.Close()
		}
		return false
	}
	return true
}

// dropWork lets the connection's buffers and working state (the Ctx, the
// http.Handler adapter) go for good: it leaves the HTTP/1.1 engine for
// the HTTP/2 one, which has its own, and finish needs none. The buffers
// go back to their pool, and the working state, made new but for its
// fields' slice, to the Server's: it served no request, and a working
// state per HTTP/2 connection would be garbage as soon as made.
func (c *conn) dropWork() {
	c.release()
	cw := c.connWork
	c.connWork = nil
	cw.detach()
	hdrs := cw.ctx.req.Headers[:0]
	*cw = connWork{}
	cw.init(c.srv, hdrs)
	c.srv.works.Put(cw)
}

// looksLikeHTTP reports whether the first bytes of a would-be TLS record
// are an HTTP/1.x request's.
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}

// h2cPreface starts every cleartext HTTP/2 connection (RFC 9113 §3.4).
const h2cPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// maybeH2C hands a connection that opens with the HTTP/2 preface to the
// h2c server, with the bytes already read. It reports whether it did.
// Called before the first request only, and only with EnableH2C.
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
	if c.srv.nativeH2() {
		// The HTTP/2 connection has buffers of its own: give the
		// HTTP/1.1 ones back for as long as it lives (dropWork).
		pending := append([]byte(nil), c.rbuf[c.r:c.w]...)
		c.r = c.w
		base, state := c.baseContext(), c.reportState()
		c.dropWork()
		c.srv.serveNativeH2(c.nc, pending, nil, base, state)
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

// notHTTP1 reports whether buffered bytes hold a first line that is not
// an HTTP/1.x request line: its last word is not an HTTP version. On an
// h2c listener such a client may be an HTTP/2 client with a broken
// preface, which must see a connection error (RFC 9113 §3.4), not an
// HTTP/1.1 response it would read as a frame.
func notHTTP1(got []byte) bool {
	i := bytes.IndexByte(got, '\n')
	if i < 0 {
		return false // not a whole line yet: the HTTP/1.1 parser decides
	}
	line := bytes.TrimRight(got[:i], "\r")
	return !bytes.HasPrefix(line[bytes.LastIndexByte(line, ' ')+1:], []byte("HTTP/"))
}

// refuseNotHTTP answers a connection that spoke neither HTTP/1.x nor
// HTTP/2 with GOAWAY (PROTOCOL_ERROR) and ends it.
func (c *conn) refuseNotHTTP() {
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.nc.Write(h2.AppendGoAway(nil, 0, h2.ErrCodeProtocol, []byte("invalid connection preface")))
	c.r = c.w
	c.lingerClose()
}

// baseContext is the context native HTTP/2 requests derive from: the
// adapter's (with http.ServerContextKey and LocalAddrContextKey) for a
// Handler, none for the native API.
func (c *conn) baseContext() context.Context {
	if c.handler != nil {
		return c.hc.base
	}
	return context.Background()
}

// reportState returns what the native HTTP/2 engine calls to report the
// connection's state, or nil when nobody listens.
func (c *conn) reportState() func(ConnState) {
	if c.srv.ConnState == nil {
		return nil
	}
	return c.setState
}

// replayConn is a net.Conn whose first reads return bytes the engine
// already took off the socket.
type replayConn struct {
	net.Conn
	pending []byte
}

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.Conn.Read(p)
}
