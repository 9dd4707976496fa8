package websocket

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/internal/rawhijack"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// AcceptOptions configure [Accept]. The zero value (or nil) accepts a
// same-origin (or Origin-less) handshake with no subprotocol, under the
// default [Options].
type AcceptOptions struct {
	// Subprotocols are the subprotocols the server speaks, in its order
	// of preference: the first one the client offered is chosen. None
	// offered in common: the handshake succeeds with no subprotocol, as
	// RFC 6455 §4.2.2 has it, and the application decides.
	Subprotocols []string
	// OriginPatterns are hosts, besides the request's own Host, whose
	// pages may open a WebSocket here: patterns of path.Match matched
	// against the Origin's host (with its port, if any), in lower case,
	// such as "example.com" or "*.example.com".
	OriginPatterns []string
	// SkipOriginCheck accepts any Origin. A browser sends its cookies
	// with a cross-origin WebSocket handshake, so without the check any
	// site can act as a logged-in user here (cross-site WebSocket
	// hijacking): skip it only for an endpoint that authenticates
	// otherwise.
	SkipOriginCheck bool
	// Compression accepts permessage-deflate (RFC 7692) when the client
	// offers it: messages then go compressed both ways (see
	// Options.CompressionThreshold), at a cost in CPU. Off by default.
	Compression bool
	// ClientContextTakeover, with Compression, lets the client keep its
	// compression context between messages (RFC 7692 §7.1.1.2: the
	// answer leaves out client_no_context_takeover, unless the client
	// asked for it): a message may refer back to earlier ones, which
	// shrinks a stream of similar messages (JSON events typed into a
	// page) several times over. The cost is the window this end keeps to
	// inflate them: the last 32 KiB the client sent (less until it has
	// sent that much), per connection, idle or not. Off by default.
	ClientContextTakeover bool
	// ServerContextTakeover, with Compression, compresses this end's
	// messages with the context of those it sent before, when the client
	// allows it (the answer leaves out server_no_context_takeover; a
	// client that asks for a smaller server_max_window_bits gets none):
	// each message may refer back into the last 4 KiB this end sent
	// compressed, which shrinks a stream of similar messages several
	// times over (342-byte JSON events: 248 bytes each compressed on
	// their own, 48 with the context). The cost: those 4 KiB per
	// connection, idle or not, and the CPU of priming a pooled
	// compressor with them for each message (a few µs). Off by default.
	ServerContextTakeover bool
	Options
}

// Accept completes a WebSocket handshake (RFC 6455 §4.2) from an
// http.Handler and returns the connection. It works on net/http's server
// and on hotpath's server.Server: it answers 101 and takes the
// connection with http.ResponseController's Hijack, and reads any bytes
// the server had already buffered after the request first.
//
// Over HTTP/2 the handshake is RFC 8441's extended CONNECT, which the
// server must allow (server.Server.ExtendedConnect on hotpath's engine;
// GODEBUG=http2xconnect=1 on net/http's): Accept answers 200 and the
// Conn reads and writes the stream, which lives while the handler runs.
// The handler must not return before it is done with the Conn (Start
// runs the events on the handler's goroutine then, returning when the
// connection ends). The server's read and write timeouts are lifted from
// the stream; Options.IdleTimeout bounds an idle connection.
//
// A request that is not a valid handshake gets an error response and an
// error: 405 for a method other than GET, 426 (with Upgrade: websocket)
// without the Upgrade and Connection headers of an upgrade, 426 (with
// Sec-WebSocket-Version: 13) for another version, 400 for a request that
// is not HTTP/1.1 or has no valid Sec-WebSocket-Key, 403 for an Origin
// not allowed (a browser page from another site), 500 if the connection
// cannot be hijacked. On HTTP/2: 400 for a request that is not an
// extended CONNECT for "websocket" or names another version.
//
// Headers the handler set on w before Accept (a cookie) go out with the
// 101. With AcceptOptions.Compression, the first permessage-deflate
// offer (RFC 7692) this end can accept is answered with
// server_no_context_takeover and client_no_context_takeover; without it,
// or with no acceptable offer, the answer carries no extension.
func Accept(w http.ResponseWriter, r *http.Request, opts *AcceptOptions) (*Conn, error) {
	if opts == nil {
		opts = &AcceptOptions{}
	}
	key, status, reason := checkHandshake(r, opts)
	if status != 0 {
		refusalHeaders(w.Header(), status, r.ProtoMajor >= 2)
		http.Error(w, reason, status)
		return nil, fmt.Errorf("%s (answered %d)", reason, status)
	}
	sub := chooseSubprotocol(r, opts.Subprotocols)
	dfl, ext := acceptDeflate(r.Header, opts.Compression, opts.ClientContextTakeover, opts.ServerContextTakeover)
	if r.ProtoMajor >= 2 {
		return acceptStream(w, r, sub, ext, dfl, opts.Options)
	}

	nc, pending, err := hijack(w)
	if err != nil {
		http.Error(w, errNoHijack, http.StatusInternalServerError)
		return nil, fmt.Errorf("%s: %w", errNoHijack, err)
	}
	nc.SetDeadline(time.Time{}) // net/http leaves its deadlines on a hijacked conn
	if err := write101(nc, key, sub, ext, w.Header()); err != nil {
		return nil, err
	}
	return newConn(nc, false, sub, opts.Options, pending, dfl), nil
}

// hijack takes w's connection over, returning the bytes the server read
// past the request head: the client's first frames, sent without waiting
// for the 101. On hotpath's server, without the bufio.ReadWriter a
// Hijack makes (8 KB, garbage at once: internal/rawhijack).
func hijack(w http.ResponseWriter) (net.Conn, []byte, error) {
	if take := rawhijack.Take; take != nil {
		if nc, pending, ok, err := take(w); ok {
			return nc, pending, err
		}
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var pending []byte
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		pending = append([]byte(nil), b...)
	}
	return nc, pending, nil
}

const errNoHijack = "websocket: the connection cannot be taken over (Hijack): HTTP/2 and HTTP/3 requests cannot upgrade"

// refusalHeaders sets what a refusal with status says besides its reason
// (on HTTP/2, h2, no Upgrade or Connection: they are HTTP/1.1's).
func refusalHeaders(h http.Header, status int, h2 bool) {
	switch {
	case h2:
		h.Set("Sec-WebSocket-Version", "13")
		return
	}
	switch status {
	case http.StatusMethodNotAllowed:
		h.Set("Allow", http.MethodGet)
	case http.StatusUpgradeRequired:
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", "websocket")
		h.Set("Sec-WebSocket-Version", "13")
	}
}

// write101 answers the handshake on the taken-over connection, with the
// extension accepted (ext, if any) and the headers the handler set
// (extra) but those of the upgrade and framing.
func write101(nc net.Conn, key, sub string, ext []byte, extra http.Header) error {
	b := make([]byte, 0, 256)
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	b = ws.AppendAcceptKey(b, []byte(key))
	b = append(b, "\r\n"...)
	if sub != "" {
		b = append(b, "Sec-WebSocket-Protocol: "...)
		b = append(b, sub...)
		b = append(b, "\r\n"...)
	}
	if ext != nil {
		b = append(b, "Sec-WebSocket-Extensions: "...)
		b = append(b, ext...)
		b = append(b, "\r\n"...)
	}
	for k, vs := range extra {
		switch http.CanonicalHeaderKey(k) {
		case "Upgrade", "Connection", "Sec-Websocket-Accept", "Sec-Websocket-Protocol", "Sec-Websocket-Extensions", "Content-Length", "Transfer-Encoding":
			continue
		}
		for _, v := range vs {
			if validHeaderValue(v) && validHeaderValue(k) {
				b = append(b, k...)
				b = append(b, ": "...)
				b = append(b, v...)
				b = append(b, "\r\n"...)
			}
		}
	}
	b = append(b, "\r\n"...)
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return fmt.Errorf("websocket: writing the 101 response: %w", err)
	}
	return nil
}

// checkHandshake checks a handshake on either protocol, and the Origin:
// the key (HTTP/1.1's), or the status and reason to refuse it with.
func checkHandshake(r *http.Request, opts *AcceptOptions) (key string, status int, reason string) {
	if r.ProtoMajor >= 2 {
		status, reason = checkConnect(r)
	} else {
		key, status, reason = checkUpgrade(r)
	}
	if status == 0 && !opts.SkipOriginCheck {
		status, reason = checkOrigin(r, opts.OriginPatterns)
	}
	return key, status, reason
}

// checkUpgrade checks the handshake's request line and headers (§4.2.1)
// and returns the key, or the status and reason to refuse it with.
func checkUpgrade(r *http.Request) (key string, status int, reason string) {
	switch {
	case r.Method != http.MethodGet:
		return "", http.StatusMethodNotAllowed, "websocket: the handshake must be a GET request (RFC 6455 §4.1), not " + r.Method
	case r.ProtoMajor != 1 || r.ProtoMinor < 1:
		return "", http.StatusBadRequest, "websocket: the handshake needs HTTP/1.1 (RFC 6455 §4.1), not " + r.Proto
	case !headerHasToken(r.Header, "Connection", "upgrade"):
		return "", http.StatusUpgradeRequired, "websocket: the request's Connection header does not list \"upgrade\" (RFC 6455 §4.2.1)"
	case !headerHasToken(r.Header, "Upgrade", "websocket"):
		return "", http.StatusUpgradeRequired, "websocket: the request's Upgrade header does not list \"websocket\" (RFC 6455 §4.2.1)"
	}
	if v := r.Header.Values("Sec-WebSocket-Version"); len(v) != 1 || strings.TrimSpace(v[0]) != "13" {
		return "", http.StatusUpgradeRequired, "websocket: unsupported Sec-WebSocket-Version (this server speaks 13, RFC 6455 §4.4)"
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return "", http.StatusBadRequest, "websocket: the request needs exactly one Sec-WebSocket-Key (RFC 6455 §4.2.1)"
	}
	key = strings.TrimSpace(keys[0])
	if !ws.ValidKey([]byte(key)) {
		return "", http.StatusBadRequest, "websocket: Sec-WebSocket-Key is not the base64 of 16 bytes (RFC 6455 §4.2.1)"
	}
	return key, 0, ""
}

// checkOrigin lets a request through if it has no Origin (not a browser),
// or one whose host is the request's Host or matches a pattern.
func checkOrigin(r *http.Request, patterns []string) (int, string) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return 0, ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return http.StatusForbidden, "websocket: the request's Origin is not a URL with a host: " + origin
	}
	host := strings.ToLower(u.Host)
	if host == strings.ToLower(r.Host) {
		return 0, ""
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(p), host); ok {
			return 0, ""
		}
	}
	return http.StatusForbidden, fmt.Sprintf("websocket: Origin %q is not allowed for host %q (AcceptOptions.OriginPatterns)", origin, r.Host)
}

// chooseSubprotocol returns the first of the server's subprotocols the
// client offered.
func chooseSubprotocol(r *http.Request, server []string) string {
	if len(server) == 0 {
		return ""
	}
	for _, s := range server {
		for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
			for o := range strings.SplitSeq(v, ",") {
				if strings.TrimSpace(o) == s {
					return s
				}
			}
		}
	}
	return ""
}

// headerHasToken reports whether a comma-separated header lists token,
// case-insensitively.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// validHeaderValue keeps a header the handler set from splitting the
// response: no CR, LF or NUL.
func validHeaderValue(v string) bool {
	return !strings.ContainsAny(v, "\r\n\x00")
}
