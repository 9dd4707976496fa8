package websocket

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// DialOptions configure [Dial]. The zero value (or nil) dials with no
// subprotocol and no extra headers, under the default [Options].
type DialOptions struct {
	// HTTPHeader are extra headers of the handshake request (Origin,
	// Authorization, cookies). The handshake's own headers are set by
	// Dial and may not be given here.
	HTTPHeader http.Header
	// Subprotocols are offered in Sec-WebSocket-Protocol, in order:
	// distinct tokens (RFC 6455 §4.1), or Dial fails.
	Subprotocols []string
	// TLSConfig is the TLS configuration for wss:// URLs; nil means the
	// defaults, with ServerName from the URL. Dial speaks HTTP/1.1: it
	// offers NextProtos without h2 (http/1.1 if that leaves none), and
	// fails if the server chooses another protocol.
	TLSConfig *tls.Config
	// NetDialContext dials the TCP connection (to the proxy, with one);
	// nil means a net.Dialer.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Proxy picks an HTTP proxy for the connection, as
	// http.Transport.Proxy does (http.ProxyFromEnvironment reads
	// HTTPS_PROXY for wss:// and HTTP_PROXY for ws://, and NO_PROXY): it
	// gets a GET request for the URL with http or https in place of ws or
	// wss. Dial tunnels through it with CONNECT (an https:// proxy is
	// reached over TLS), with the proxy URL's user as Basic
	// Proxy-Authorization. Nil, or a nil URL: no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// ProxyConnectHeader are extra headers of the CONNECT request.
	ProxyConnectHeader http.Header
	// Compression offers permessage-deflate (RFC 7692), each message
	// compressed on its own, with any window the server asks for
	// (client_max_window_bits): if the server accepts, messages go
	// compressed both ways (see Options.CompressionThreshold), at a cost
	// in CPU. Off by default.
	Compression bool
	// ContextTakeover, with Compression, offers context takeover both
	// ways, as browsers do (no *_no_context_takeover in the offer): this
	// end then compresses each message after the last 4 KiB it sent
	// compressed, when the server allows it and asks for no smaller
	// window, and inflates the server's with the last 32 KiB it
	// inflated, when the server keeps its context. Those windows are
	// kept per connection. Off by default.
	ContextTakeover bool
	Options
}

// Dial opens a WebSocket connection (RFC 6455 §4.1) to a ws:// or wss://
// URL (http:// and https:// are taken as their equivalents). ctx covers
// the dial, the TLS handshake and the WebSocket handshake, not the
// connection's life: with no deadline, a server that never answers holds
// Dial until ctx is canceled. The URL's user and password, if any, go as
// Basic Authorization, as net/http's client sends them, unless
// DialOptions.HTTPHeader has an Authorization; errors show the URL
// without the password. With DialOptions.Proxy, the connection is
// tunneled through an HTTP proxy.
//
// It returns the server's response too: on success the 101 (its body
// empty); when the server refuses, its response with up to 1 KiB of the
// body, and an error. Redirects are not followed (as in gorilla/websocket;
// coder/websocket, dialing with net/http's client, follows them): a 3xx
// is a refusal, its Location in the response.
// The 101 is checked: its Upgrade and Connection headers;
// Sec-WebSocket-Accept, once, against the key Dial drew (16 bytes from
// crypto/rand); at most one subprotocol, one offered; no extension but
// permessage-deflate, valid for the offer, when DialOptions.Compression
// offered it. A response head (status line and headers) over 1 MiB fails
// Dial. Frames the server sent right after the 101 are the Conn's first.
func Dial(ctx context.Context, rawURL string, opts *DialOptions) (*Conn, *http.Response, error) {
	if opts == nil {
		opts = &DialOptions{}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: Dial: %w", err)
	}
	secure := false
	switch u.Scheme {
	case "ws", "http":
	case "wss", "https":
		secure = true
	default:
		return nil, nil, fmt.Errorf("websocket: Dial %q: the scheme must be ws or wss", u.Redacted())
	}
	if u.Host == "" {
		return nil, nil, fmt.Errorf("websocket: Dial %q: no host", u.Redacted())
	}
	for k, vs := range opts.HTTPHeader {
		// Written as they are: a name that is not a token ("Upgrade ",
		// "X: y") would slip a field past the check below, or break
		// the head, and a CR or LF in a value split it.
		if !wire.ValidHeaderName(k) {
			return nil, nil, fmt.Errorf("websocket: Dial: DialOptions.HTTPHeader has an invalid name %q", k)
		}
		for _, v := range vs {
			if !wire.ValidHeaderValue(v) {
				return nil, nil, fmt.Errorf("websocket: Dial: DialOptions.HTTPHeader %s has a control byte", k)
			}
		}
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Protocol", "Sec-Websocket-Extensions":
			return nil, nil, fmt.Errorf("websocket: Dial: DialOptions.HTTPHeader may not set %s, which Dial sets", k)
		}
	}
	for i, p := range opts.Subprotocols {
		// Joined into the request as they are: a CR LF would add a
		// field, a comma or space offer other names (§4.1: tokens, each
		// once).
		if !wire.ValidHeaderName(p) || slices.Contains(opts.Subprotocols[:i], p) {
			return nil, nil, fmt.Errorf("websocket: Dial: DialOptions.Subprotocols: %q is not a token, or comes twice (RFC 6455 §4.1)", p)
		}
	}
	addr := u.Host
	if u.Port() == "" {
		if secure {
			addr = net.JoinHostPort(u.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	dial := opts.NetDialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var proxy *url.URL
	if opts.Proxy != nil {
		hu := *u
		hu.Scheme = "http"
		if secure {
			hu.Scheme = "https"
		}
		if proxy, err = opts.Proxy(&http.Request{Method: http.MethodGet, URL: &hu, Header: http.Header{}, Host: u.Host}); err != nil {
			return nil, nil, fmt.Errorf("websocket: Dial %s: choosing a proxy: %w", u.Redacted(), err)
		}
	}
	var nc net.Conn
	if proxy != nil {
		nc, err = dialProxy(ctx, dial, proxy, addr, opts)
	} else {
		nc, err = dial(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: Dial %s: %w", u.Redacted(), err)
	}
	c, resp, err := handshake(ctx, nc, u, secure, opts)
	if err != nil {
		nc.Close()
		return nil, resp, err
	}
	return c, resp, nil
}

func handshake(ctx context.Context, nc net.Conn, u *url.URL, secure bool, opts *DialOptions) (*Conn, *http.Response, error) {
	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	if secure {
		cfg := opts.TLSConfig
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName = u.Hostname()
		}
		if slices.Contains(cfg.NextProtos, "h2") {
			// A config shared with an HTTP/2 client: this handshake is
			// HTTP/1.1's, which a server that chose h2 would not read.
			var protos []string // a new slice: Clone shares the caller's
			for _, p := range cfg.NextProtos {
				if p != "h2" {
					protos = append(protos, p)
				}
			}
			cfg = cfg.Clone()
			cfg.NextProtos = protos
		}
		if len(cfg.NextProtos) == 0 {
			cfg = cfg.Clone()
			cfg.NextProtos = []string{"http/1.1"}
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, nil, fmt.Errorf("websocket: TLS handshake with %s: %w", u.Host, err)
		}
		if p := tc.ConnectionState().NegotiatedProtocol; p != "" && p != "http/1.1" {
			return nil, nil, fmt.Errorf("websocket: TLS handshake with %s: the server chose protocol %q by ALPN, not http/1.1 (TLSConfig.NextProtos)", u.Host, p)
		}
		nc = tc
	}
	var raw [16]byte
	crand.Read(raw[:])
	key := base64.StdEncoding.EncodeToString(raw[:])

	var b bytes.Buffer
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", u.RequestURI(), u.Host, key)
	if len(opts.Subprotocols) > 0 {
		fmt.Fprintf(&b, "Sec-WebSocket-Protocol: %s\r\n", strings.Join(opts.Subprotocols, ", "))
	}
	if opts.Compression {
		offer := deflateOffer
		if opts.ContextTakeover {
			offer = deflateTakeoverOffer
		}
		fmt.Fprintf(&b, "Sec-WebSocket-Extensions: %s\r\n", offer)
	}
	auth := u.User != nil // the URL's user goes as Basic, unless HTTPHeader has an Authorization
	for k, vs := range opts.HTTPHeader {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			auth = false
		}
		for _, v := range vs { // checked by Dial
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if auth {
		pw, _ := u.User.Password()
		fmt.Fprintf(&b, "Authorization: Basic %s\r\n", base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	b.WriteString("\r\n")
	if _, err := nc.Write(b.Bytes()); err != nil {
		return nil, nil, fmt.Errorf("websocket: sending the handshake to %s: %w", u.Host, err)
	}
	head := &headReader{r: nc, n: maxResponseHead}
	br := bufio.NewReader(head)
	req := &http.Request{Method: http.MethodGet, URL: u}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, nil, fmt.Errorf("websocket: reading the handshake's response from %s: %w", u.Host, err)
	}
	head.n = math.MaxInt64 // the head is read: a refusal's body has its own bound
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return nil, resp, fmt.Errorf("websocket: %s answered the handshake with %s, not 101", u.Host, resp.Status)
	}
	resp.Body = http.NoBody
	if err := checkAnswer(resp, key, opts.Subprotocols); err != nil {
		return nil, resp, err
	}
	dfl, err := checkDeflateAnswer(resp.Header, opts.Compression, opts.Compression && opts.ContextTakeover)
	if err != nil {
		return nil, resp, err
	}
	var pending []byte
	if n := br.Buffered(); n > 0 {
		p, _ := br.Peek(n)
		pending = append([]byte(nil), p...)
	}
	if !stop() { // ctx ended: the deadline was moved into the past
		return nil, resp, fmt.Errorf("websocket: Dial: %w", context.Cause(ctx))
	}
	nc.SetDeadline(time.Time{})
	return newConn(nc, true, resp.Header.Get("Sec-WebSocket-Protocol"), opts.Options, pending, dfl), resp, nil
}

// maxResponseHead bounds the head (status line and headers) of the
// handshake's response, and of a proxy's answer to CONNECT: 1 MiB, what
// net/http's server allows a request's (http.DefaultMaxHeaderBytes).
// http.ReadResponse has no bound of its own: a server that never ended
// its head would take memory until ctx ended.
const maxResponseHead = 1 << 20

var errHeadTooLarge = errors.New("response head too large (over 1 MiB)")

// headReader reads from r, n bytes at most, then fails with
// errHeadTooLarge: under the bufio.Reader that http.ReadResponse reads,
// it bounds the head.
type headReader struct {
	r io.Reader
	n int64
}

func (h *headReader) Read(p []byte) (int, error) {
	if h.n <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	n, err := h.r.Read(p)
	h.n -= int64(n)
	return n, err
}

// checkAnswer checks a 101 against the request (§4.1, the client's
// checks 1 to 6).
func checkAnswer(resp *http.Response, key string, offered []string) error {
	switch {
	case !headerHasToken(resp.Header, "Upgrade", "websocket"):
		return errors.New("websocket: the server's 101 has no \"Upgrade: websocket\" (RFC 6455 §4.1)")
	case !headerHasToken(resp.Header, "Connection", "upgrade"):
		return errors.New("websocket: the server's 101 has no \"Connection: upgrade\" (RFC 6455 §4.1)")
	case len(resp.Header.Values("Sec-WebSocket-Accept")) != 1 || strings.TrimSpace(resp.Header.Get("Sec-WebSocket-Accept")) != ws.AcceptKey(key):
		return errors.New("websocket: the server's Sec-WebSocket-Accept does not match the key sent (RFC 6455 §4.1)")
	case len(resp.Header.Values("Sec-WebSocket-Protocol")) > 1:
		// Get would take the first: the server chose more than one.
		return fmt.Errorf("websocket: the server chose more than one subprotocol: %q (RFC 6455 §4.1)", resp.Header.Values("Sec-WebSocket-Protocol"))
	}
	if sub := resp.Header.Get("Sec-WebSocket-Protocol"); sub != "" {
		for _, o := range offered {
			if o == sub {
				return nil
			}
		}
		return fmt.Errorf("websocket: the server chose subprotocol %q, which was not offered (RFC 6455 §4.1)", sub)
	}
	return nil
}
