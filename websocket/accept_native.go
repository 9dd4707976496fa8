package websocket

import (
	"fmt"
	"net/http"

	"github.com/hotpathhq/hotpath/server"
)

// AcceptNative is [Accept] for hotpath's native handler API
// (server.Server.Native): the same checks, refusals and options, the
// answer written after the Ctx hands the connection over (Ctx.Hijack).
// The native handler may return as soon as it has the Conn (with
// [Conn.Start], or after handing it to a goroutine of its own): the Ctx
// must not be used after AcceptNative succeeded. Over HTTP/2 (RFC 8441,
// with server.Server.ExtendedConnect) the Conn is the request's stream,
// as with Accept: the handler must not return before it is done with
// the Conn, and the Ctx is the Conn's until then.
func AcceptNative(x *server.Ctx, opts *AcceptOptions) (*Conn, error) {
	if opts == nil {
		opts = &AcceptOptions{}
	}
	r := nativeRequest(x)
	key, status, reason := checkHandshake(r, opts)
	if status != 0 {
		x.Error(status, reason) // clears the headers: set after it, before the head goes out
		h := http.Header{}
		refusalHeaders(h, status, r.ProtoMajor >= 2)
		for k, vs := range h {
			x.SetHeader(k, vs[0])
		}
		return nil, fmt.Errorf("%s (answered %d)", reason, status)
	}
	sub := chooseSubprotocol(r, opts.Subprotocols)
	dfl, ext := acceptDeflate(r.Header, opts.Compression, opts.ClientContextTakeover, opts.ServerContextTakeover)
	if r.ProtoMajor >= 2 {
		return acceptNativeStream(x, sub, ext, dfl, opts.Options)
	}
	nc, pending, err := x.Hijack()
	if err != nil {
		x.Error(http.StatusInternalServerError, errNoHijack)
		return nil, fmt.Errorf("%s: %w", errNoHijack, err)
	}
	if err := write101(nc, key, sub, ext, nil); err != nil {
		return nil, err
	}
	return newConn(nc, false, sub, opts.Options, pending, dfl), nil
}

// nativeRequest is the part of an http.Request the handshake checks look
// at, from a native request.
func nativeRequest(x *server.Ctx) *http.Request {
	req := x.Request()
	r := &http.Request{
		Method: string(req.Method),
		Proto:  string(req.Proto),
		Host:   string(req.Host),
		Header: make(http.Header, len(req.Headers)),
	}
	r.ProtoMajor, r.ProtoMinor = 1, req.ProtoMinor
	if r.Proto == "HTTP/2.0" {
		r.ProtoMajor, r.ProtoMinor = 2, 0
	}
	for _, h := range req.Headers {
		r.Header.Add(string(h.Name), string(h.Value))
	}
	return r
}
