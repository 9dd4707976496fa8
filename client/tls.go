package client

// TLS on the Transport's own connections, for both engines: the
// handshake, verified as net/http's, and what ALPN chose.

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http/httptrace"
	"strings"
	"time"
)

// offersHTTP2 reports whether Protocols allows HTTP/2 over TLS.
func (t *Transport) offersHTTP2() bool {
	return (t.Protocols == nil || t.Protocols.HTTP2()) && !t.http2Off()
}

// http2Off reports whether GODEBUG has http2client=0, as it was when the
// Transport was first used: HTTP/2 is then never spoken, as in net/http.
func (t *Transport) http2Off() bool {
	t.godebugOnce.Do(func() { t.h2off = godebugHas("http2client=0") })
	return t.h2off
}

// handshake runs TLS on nc for host, under TLSHandshakeTimeout and ctx,
// as net/http's transport does: the server's certificate verified for
// the host name (or the config's ServerName), ALPN offering what
// Protocols allows, sessions resumed from the Transport's cache. h2
// reports that ALPN chose HTTP/2.
func (t *Transport) handshake(ctx context.Context, host string, nc net.Conn) (_ net.Conn, h2 bool, err error) {
	cfg := t.tlsConfig().Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = hostName(host)
	}
	http1 := t.Protocols == nil || t.Protocols.HTTP1() || t.http2Off()
	if len(cfg.NextProtos) == 0 {
		if t.offersHTTP2() {
			cfg.NextProtos = append(cfg.NextProtos, "h2")
		}
		if http1 {
			cfg.NextProtos = append(cfg.NextProtos, "http/1.1")
		}
	}
	if timeout := t.TLSHandshakeTimeout; timeout >= 0 {
		if timeout == 0 {
			timeout = DefaultTLSHandshakeTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	start := time.Now()
	tc, h2, err := t.finishTLS(ctx, host, tls.Client(nc, cfg))
	if err == nil && t.Stats != nil {
		t.Stats.TLS.Observe(time.Since(start))
	}
	return tc, h2, err
}

// finishTLS runs tc's handshake, if it has not run, under ctx, with
// httptrace's TLSHandshakeStart and TLSHandshakeDone, and reports whether
// ALPN chose HTTP/2 (or that it chose what Protocols does not allow: tc
// is then closed, as it is on a failed handshake).
func (t *Transport) finishTLS(ctx context.Context, host string, tc tlsConn) (_ net.Conn, h2 bool, err error) {
	trace := httptrace.ContextClientTrace(ctx)
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	if hs, ok := tc.(interface{ HandshakeContext(context.Context) error }); ok {
		if err := hs.HandshakeContext(ctx); err != nil {
			if trace != nil && trace.TLSHandshakeDone != nil {
				trace.TLSHandshakeDone(tls.ConnectionState{}, err)
			}
			tc.Close()
			return nil, false, err
		}
	}
	cs := tc.ConnectionState()
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(cs, nil)
	}
	if h2, err = t.alpnChose(host, cs.NegotiatedProtocol); err != nil {
		tc.Close()
		return nil, false, err
	}
	return tc, h2, nil
}

// tlsConn is a TLS connection: a *tls.Conn, or a connection of
// DialTLSContext's own that reports its handshake's outcome.
type tlsConn interface {
	net.Conn
	ConnectionState() tls.ConnectionState
}

// alpnChose reports whether the protocol ALPN chose is HTTP/2, or that it
// is one Protocols does not allow.
func (t *Transport) alpnChose(host, p string) (h2 bool, err error) {
	switch {
	case p == "h2" && t.offersHTTP2():
		return true, nil
	case (p == "" || p == "http/1.1") && (t.Protocols == nil || t.Protocols.HTTP1() || t.http2Off()):
		return false, nil
	}
	return false, fmt.Errorf("client: %s negotiated ALPN protocol %q, which Transport.Protocols does not allow", host, p)
}

// dialedTLS takes a connection DialTLSContext made, as net/http's
// transport does: a *tls.Conn (or any connection with ConnectionState,
// as Go 1.27's) completes its handshake if the dialer did not (traced),
// and its ALPN choice says HTTP/2 or HTTP/1.1; any other connection
// speaks HTTP/1.1.
func (t *Transport) dialedTLS(ctx context.Context, host string, nc net.Conn) (_ net.Conn, h2 bool, err error) {
	tc, ok := nc.(tlsConn)
	if !ok {
		return nc, false, nil
	}
	return t.finishTLS(ctx, host, tc)
}

// tlsConfig is TLSClientConfig as this Transport uses it: cloned once,
// with a session cache of its own when it brings none.
func (t *Transport) tlsConfig() *tls.Config {
	t.tlsOnce.Do(func() {
		cfg := t.TLSClientConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ClientSessionCache == nil {
			cfg.ClientSessionCache = newSessionCache()
		}
		t.tlsBase = cfg
	})
	return t.tlsBase
}

// hostName is a URL host without its port and brackets: the name a
// server certificate is checked against.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}
