package websocket

// WebSockets over HTTP/2 (RFC 8441): the handshake is an extended
// CONNECT (:protocol websocket) answered 200, and the connection is the
// stream: the request body carries the client's frames, the response the
// server's.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// checkConnect checks an HTTP/2 handshake (RFC 8441 §4, §5) and returns
// the status and reason to refuse it with, or 0.
func checkConnect(r *http.Request) (status int, reason string) {
	switch {
	case r.Method != http.MethodConnect:
		return http.StatusBadRequest, "websocket: over " + r.Proto + " the handshake is an extended CONNECT (RFC 8441), not " + r.Method +
			" with Upgrade (the server must allow it: server.Server.ExtendedConnect, or GODEBUG=http2xconnect=1 for net/http's)"
	case r.Header.Get(":protocol") != "websocket":
		return http.StatusBadRequest, fmt.Sprintf("websocket: the extended CONNECT's :protocol is %q, not \"websocket\" (RFC 8441 §4)", r.Header.Get(":protocol"))
	}
	if v := r.Header.Values("Sec-WebSocket-Version"); len(v) != 1 || strings.TrimSpace(v[0]) != "13" {
		return http.StatusBadRequest, "websocket: unsupported Sec-WebSocket-Version (this server speaks 13, RFC 8441 §5)"
	}
	return 0, ""
}

// streamConn is an HTTP/2 stream as the net.Conn a Conn reads and
// writes: the request body in, the response out, each write flushed. It
// lives while the handler that accepted it runs; Close makes a pending
// read return, so that the handler's read loop (or Start) ends and the
// handler returns, which ends the stream.
type streamConn struct {
	body          io.ReadCloser
	w             io.Writer
	flush         func() error
	setRead       func(time.Time) error
	setWrite      func(time.Time) error
	local, remote net.Addr
	closed        atomic.Bool
	writing       atomic.Int32 // writes in progress, which Close breaks
}

func (s *streamConn) Read(p []byte) (int, error) {
	n, err := s.body.Read(p)
	if err != nil && s.closed.Load() {
		err = net.ErrClosed
	}
	return n, err
}

func (s *streamConn) Write(p []byte) (int, error) {
	s.writing.Add(1)
	defer s.writing.Add(-1)
	if s.closed.Load() {
		return 0, net.ErrClosed
	}
	n, err := s.w.Write(p)
	if err == nil {
		err = s.flush()
	}
	return n, err
}

// Close makes a pending read return, and breaks a write in progress (one
// waiting for flow-control window from a client that stopped reading,
// with the server's write timeouts lifted, would wait for as long as the
// HTTP/2 connection lasts): a past write deadline resets the stream. A
// Close with no write in progress leaves the stream to end with the
// handler.
func (s *streamConn) Close() error {
	if s.closed.Swap(true) {
		return net.ErrClosed
	}
	if s.writing.Load() > 0 {
		s.setWrite(aLongTimeAgo)
	}
	return s.body.Close()
}

func (s *streamConn) LocalAddr() net.Addr                { return s.local }
func (s *streamConn) RemoteAddr() net.Addr               { return s.remote }
func (s *streamConn) SetReadDeadline(t time.Time) error  { return s.setRead(t) }
func (s *streamConn) SetWriteDeadline(t time.Time) error { return s.setWrite(t) }
func (s *streamConn) SetDeadline(t time.Time) error {
	return errors.Join(s.setRead(t), s.setWrite(t))
}

// acceptStream answers an extended CONNECT the checks passed with 200
// and returns the Conn on its stream. The server's read and write
// timeouts are lifted from the stream (a WebSocket idles between
// messages; Options.IdleTimeout is its bound).
func acceptStream(w http.ResponseWriter, r *http.Request, sub string, ext []byte, dfl negotiated, opts Options) (*Conn, error) {
	h := w.Header()
	if sub != "" {
		h.Set("Sec-WebSocket-Protocol", sub)
	}
	if ext != nil {
		h.Set("Sec-WebSocket-Extensions", string(ext))
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return nil, fmt.Errorf("websocket: sending the 200 response: %w", err)
	}
	sc := &streamConn{body: r.Body, w: w, flush: rc.Flush, setRead: rc.SetReadDeadline, setWrite: rc.SetWriteDeadline}
	sc.local, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	sc.remote = addrOf(r.RemoteAddr)
	return newConn(sc, false, sub, opts, nil, dfl), nil
}

// acceptNativeStream is acceptStream for the native API.
func acceptNativeStream(x *server.Ctx, sub string, ext []byte, dfl negotiated, opts Options) (*Conn, error) {
	if sub != "" {
		x.SetHeader("Sec-WebSocket-Protocol", sub)
	}
	if ext != nil {
		x.SetHeader("Sec-WebSocket-Extensions", string(ext))
	}
	x.SetReadDeadline(time.Time{})
	x.SetWriteDeadline(time.Time{})
	x.SetStatus(http.StatusOK)
	if err := x.Flush(); err != nil {
		return nil, fmt.Errorf("websocket: sending the 200 response: %w", err)
	}
	body, ok := x.Body().(io.ReadCloser)
	if !ok {
		body = io.NopCloser(x.Body())
	}
	sc := &streamConn{body: body, w: x, flush: x.Flush, setRead: x.SetReadDeadline, setWrite: x.SetWriteDeadline,
		local: x.LocalAddr(), remote: x.RemoteAddr()}
	return newConn(sc, false, sub, opts, nil, dfl), nil
}

// addrOf is a request's RemoteAddr as a net.Addr.
func addrOf(hostport string) net.Addr {
	if ap, err := netip.ParseAddrPort(hostport); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return stringAddr(hostport)
}

type stringAddr string

func (a stringAddr) Network() string { return "tcp" }
func (a stringAddr) String() string  { return string(a) }
