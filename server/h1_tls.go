package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// HTTP/1.1 engine: a connection before its first request: its TLS
// handshake, a refusal of what is neither HTTP/1.x nor HTTP/2, and what it
// gives up when it goes to the HTTP/2 engine (dispatch.go decides, by ALPN
// or the h2c preface).

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

// refuseNotHTTP answers a connection that spoke neither HTTP/1.x nor
// HTTP/2 with GOAWAY (PROTOCOL_ERROR) and ends it.
func (c *conn) refuseNotHTTP() {
	c.nc.SetWriteDeadline(time.Now().Add(time.Second))
	c.nc.Write(h2.AppendGoAway(nil, 0, h2.ErrCodeProtocol, []byte("invalid connection preface")))
	c.r = c.w
	c.lingerClose()
}

// baseContext is the context HTTP/2 engine's requests derive from: the
// adapter's (with http.ServerContextKey and LocalAddrContextKey) for a
// Handler, none for the native API.
func (c *conn) baseContext() context.Context {
	if c.handler != nil {
		return c.hc.base
	}
	return context.Background()
}

// reportState returns what hotpath's HTTP/2 engine calls to report the
// connection's state, or nil when nobody listens.
func (c *conn) reportState() func(ConnState) {
	if c.srv.ConnState == nil {
		return nil
	}
	return c.setState
}
