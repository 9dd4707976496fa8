package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Transport is a fast [http.RoundTripper] for http:// and https:// URLs,
// on hotpath's own codecs: HTTP/1.1, and HTTP/2 over TLS when ALPN
// chooses it (or with prior knowledge on cleartext, see Protocols). Use
// it as an http.Client's Transport:
//
//	c := &http.Client{Transport: &client.Transport{}}
//
// An HTTP/1.1 request is written and its response read on the caller's
// goroutine: there is no goroutine per connection and no channel
// hand-off, and an idle connection holds only its socket and buffers.
// Connections are pooled per host and scheme, last in first out, and
// closed after IdleConnTimeout. The request's context is honoured while
// dialing, writing, waiting for the head and reading the body, with a
// deadline set on the socket when it is canceled (context.AfterFunc), not
// a goroutine per request.
//
// HTTP/2 connections (one read goroutine each) carry many requests at
// once; a host gets another connection when every one it has is at the
// server's stream limit, and concurrent first requests to a host wait
// for one dial. Frames are written by the requests' own goroutines,
// batched; flow-control credit goes back as bodies are read; GOAWAY and
// REFUSED_STREAM retry the requests the server did not process on
// another connection.
//
// TLS runs on the Transport's own connections, verified as net/http
// verifies it (the URL's host name, sent as SNI), with a session cache of
// the Transport's own (see TLSClientConfig).
//
// Supported on HTTP/1.1: request bodies with a Content-Length or chunked
// (trailers included; a declared body of 64 KiB or more is written
// straight to the socket, by sendfile for an *os.File and in 32 KiB
// pieces otherwise, and a big chunked one in 32 KiB chunks, as net/http's
// transport does), GetBody to replay a body, response bodies framed by
// length, chunks or the connection's end, HEAD, 1xx and 204/304
// responses, "Expect: 100-continue", response trailers, and transparent
// gzip as http.Transport does it. A request that fails on a reused
// connection before any byte of the response arrived is retried on a new
// one when it is replayable: idempotent, or carrying an Idempotency-Key,
// with no body or a GetBody.
//
// Everything else goes to Fallback: requests a Proxy routes through a
// proxy, CONNECT, protocol upgrades ("Connection: upgrade") and other
// schemes. A zero Transport is ready to use; its fields must not change
// once it is in use. [FromHTTPTransport] builds one from an
// *http.Transport's fields, with their net/http meanings (the zero values
// here mean this package's defaults, which differ: see each field).
//
// Unlike http.Transport it has no CancelRequest (deprecated since Go 1.6,
// and unable to cancel HTTP/2 requests there): the request's context, or
// Request.Cancel, cancels.
type Transport struct {
	// DialContext opens connections; nil means a net.Dialer with a 30 s
	// timeout and 30 s TCP keep-alive.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Proxy picks a proxy for a request, as http.Transport.Proxy does. A
	// request with a proxy goes to Fallback. Nil means no proxy.
	Proxy func(*http.Request) (*url.URL, error)

	// ProxyConnectHeader, GetProxyConnectHeader and OnProxyConnectResponse
	// are http.Transport's, for the CONNECT to an HTTPS proxy: proxied
	// requests go to Fallback, and a Fallback built from these fields
	// (Fallback nil) gets them.
	ProxyConnectHeader     http.Header
	GetProxyConnectHeader  func(ctx context.Context, proxyURL *url.URL, target string) (http.Header, error)
	OnProxyConnectResponse func(ctx context.Context, proxyURL *url.URL, connectReq *http.Request, connectRes *http.Response) error

	// Fallback serves the requests Transport does not (see the type's
	// doc). Nil means a tuned *http.Transport from [NewTunedTransport] with
	// this Transport's DialContext and Proxy.
	Fallback http.RoundTripper

	// MaxIdleConnsPerHost caps the idle connections kept per host; 0 means
	// [DefaultMaxIdleConnsPerHost], negative keeps none.
	MaxIdleConnsPerHost int

	// MaxConnsPerHost, if positive, caps the HTTP/1.1 connections per
	// host (dialing, in use and idle), as net/http's does: a request
	// past it waits, in order of arrival, for a connection to come back
	// to the pool or to close, or for its context to end. HTTP/2
	// requests share their connections and count one per connection.
	MaxConnsPerHost int

	// IdleConnTimeout closes a connection idle this long; 0 means
	// [DefaultIdleConnTimeout], negative keeps idle connections until
	// the server closes them (net/http's 0).
	IdleConnTimeout time.Duration

	// DialTLSContext, if set, makes the connections of https://
	// requests, as net/http's: it returns a connection past its TLS
	// handshake, and TLSClientConfig and TLSHandshakeTimeout are not used
	// for them. A *tls.Conn whose ALPN chose h2 speaks HTTP/2; any other
	// connection HTTP/1.1. It is handed to the fallback built from these
	// fields.
	DialTLSContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// TLSClientConfig configures TLS for https:// requests, on this
	// Transport's connections and on a Fallback built from it. It is
	// cloned on first use and never modified; ServerName, when empty, is
	// the request's host, and NextProtos, when empty, the ALPN
	// protocols Protocols allows. Without a ClientSessionCache the
	// Transport uses one of its own ([DefaultTLSSessionCacheSize]
	// entries), never shared with another Transport: a resumed session
	// keeps the client certificate of the handshake that made it, so
	// sharing one cache between clients of different identities would
	// let one resume as the other. Nil means the defaults (the system's
	// roots).
	TLSClientConfig *tls.Config

	// TLSHandshakeTimeout bounds a TLS handshake; 0 means
	// [DefaultTLSHandshakeTimeout], negative no bound but the request's
	// context (net/http's 0).
	TLSHandshakeTimeout time.Duration

	// Protocols are the protocols this Transport may speak, as in
	// http.Transport: nil means HTTP/1.1 for http://, and HTTP/2 or
	// HTTP/1.1 by ALPN for https://. With UnencryptedHTTP2 set and HTTP1
	// not, http:// requests use HTTP/2 with prior knowledge (h2c).
	Protocols *http.Protocols

	// ResponseHeaderTimeout, if positive, bounds the wait for the response
	// head once the request is written. Like Timeout it is a socket
	// deadline that a busy connection moves at most once per 1/64 of it,
	// so the wait may last that much longer.
	ResponseHeaderTimeout time.Duration

	// Timeout, if positive, bounds each request from RoundTrip to the end
	// of its response body, as http.Client.Timeout does, and fails it
	// with an error that is a timeout (net.Error) and
	// context.DeadlineExceeded. It costs nothing per request: on the fast
	// path it is the socket's deadline (an earlier deadline of the
	// request's context is taken too), which a kept connection moves at
	// most once per Timeout/64, so a request may run up to that much past
	// Timeout before it fails (a context's deadline is kept exactly); on
	// Fallback, a deadline on the
	// request's context, released when the body is closed or read to its
	// end. Set it here rather than on the http.Client: http.Client.Timeout
	// around a RoundTripper it does not know runs a timer and a goroutine
	// per request.
	Timeout time.Duration

	// Stats, if set, counts the requests each path serves: this
	// Transport's own, and Fallback's by the reason they went there
	// (Snapshot's Fast and Fallback).
	Stats *Stats

	// ExpectContinueTimeout bounds the wait for "100 Continue" before a
	// body is sent anyway; 0 means 1 s, negative sends at once.
	ExpectContinueTimeout time.Duration

	// MaxResponseHeaderBytes caps a response head; 0 means 1 MiB.
	MaxResponseHeaderBytes int

	// DisableCompression turns off the transparent gzip.
	DisableCompression bool

	// DisableKeepAlives closes every connection after one request.
	DisableKeepAlives bool

	// DrainMaxBytes and DrainTimeout bound how much of an unread body Close
	// reads to keep the connection (0 means [DefaultDrainMaxBytes] and
	// [DefaultDrainTimeout]; a negative DrainMaxBytes never drains).
	DrainMaxBytes int64
	DrainTimeout  time.Duration

	fallbackOnce sync.Once
	fallback     http.RoundTripper

	tlsOnce sync.Once
	tlsBase *tls.Config // TLSClientConfig's clone, with a session cache

	altMu    sync.Mutex // serializes RegisterProtocol
	altProto atomic.Pointer[map[string]http.RoundTripper]

	godebugOnce sync.Once
	h2off       bool // GODEBUG=http2client=0

	mu   sync.Mutex
	idle map[connKey][]*conn // the top of each stack is the newest
	// h1_pool.go: the HTTP/1.1 connections per host under MaxConnsPerHost
	// (dialing included), and the requests waiting for one, oldest first.
	conns   map[connKey]int
	waiting map[connKey][]*connWaiter
	// HTTP/2 (h2_pool.go): the connections by pool, the dial in
	// progress per pool, what each TLS host chose by ALPN, the sweep of
	// idle connections and what it saw idle last time.
	h2conns    map[connKey][]*h2Conn
	h2dials    map[connKey]chan struct{}
	h2hosts    map[connKey]bool
	h2sweep    *time.Timer
	h2idleSeen map[*h2Conn]bool
}

// connKey names a pool of connections: a URL host, over TLS or not.
type connKey struct {
	host string
	tls  bool
}

// DefaultMaxIdleConnsPerHost is the idle cap per host of a [Transport]
// whose MaxIdleConnsPerHost is 0: high enough that a fan-out of hundreds
// of concurrent requests to one host reuses its connections (net/http
// keeps 2). [New] sets its own, max(2·GOMAXPROCS, 100), unless
// [WithMaxIdleConnsPerHost] says otherwise.
const DefaultMaxIdleConnsPerHost = 256

// DefaultIdleConnTimeout closes idle connections before most servers and
// load balancers do (nginx: 75 s; AWS ALB: 60 s is their usual idle cut,
// so a client keeping them longer meets resets). net/http uses 90 s.
const DefaultIdleConnTimeout = 55 * time.Second

const (
	defaultExpectContinueTimeout  = time.Second
	defaultMaxResponseHeaderBytes = 1 << 20
)

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeRequestBody(req)
		return nil, errors.New("client: nil Request.URL")
	}
	if alt := t.altProto.Load(); alt != nil {
		if rt := (*alt)[req.URL.Scheme]; rt != nil {
			resp, err := rt.RoundTrip(req)
			if err != http.ErrSkipAltProtocol {
				return resp, err
			}
			if req, err = rewindBody(req); err != nil {
				return nil, err
			}
		}
	}
	if why := t.fallbackReason(req); why != fastPath {
		if t.Stats != nil {
			t.Stats.paths[why].Add(1)
		}
		return t.roundTripFallback(req)
	}
	if t.Stats != nil {
		t.Stats.paths[fastPath].Add(1)
	}
	if req.URL.Host == "" {
		closeRequestBody(req)
		return nil, errors.New("http: no Host in request URL") // net/http's words, which callers match
	}
	if err := validateRequest(req); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
	if req.Cancel != nil {
		return bodyErrorAsIs(t.roundTripLegacyCancel(req))
	}
	return bodyErrorAsIs(t.roundTrip(req, req.Context()))
}

// roundTrip sends a valid request on the Transport's own path, under ctx.
func (t *Transport) roundTrip(req *http.Request, ctx context.Context) (*http.Response, error) {
	var deadline time.Time
	if t.Timeout > 0 {
		deadline = time.Now().Add(t.Timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
	}
	check := !replayable(req)
	key := connKey{req.URL.Host, req.URL.Scheme == "https"}
	trace := httptrace.ContextClientTrace(ctx) // nil unless the caller traces (trace.go)
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(hostPort(key))
		}
		var cc *h2Conn
		var dialTok chan struct{}
		var err error
		reusedH2 := false
		if t.mayUseH2(key) {
			cc, dialTok, err = t.takeH2(ctx, key, deadline)
			if err != nil {
				closeRequestBody(req)
				return nil, err
			}
			reusedH2 = cc != nil
		}
		var c *conn
		if cc == nil {
			c, cc, err = t.getConn(ctx, key, check, deadline)
		}
		if dialTok != nil {
			t.endH2Dial(key, dialTok)
		}
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		if trace != nil {
			traceGotConn(trace, c, cc, reusedH2)
			if c != nil {
				c.trace = trace
			}
		}
		if cc != nil {
			resp, bodyClosed, err := cc.send(req, ctx, deadline)
			if err == nil {
				return resp, nil
			}
			if errors.Is(err, errH2Retry) && attempt < 3 && ctx.Err() == nil {
				// The server did not process it: on another connection
				// (what rewind allows for a request none of whose bytes
				// were taken).
				if next, ok := rewind(req, true, !bodyClosed); ok {
					req = next
					continue
				}
			}
			if !bodyClosed {
				closeRequestBody(req)
			}
			return nil, err
		}
		resp, err := c.roundTrip(req, ctx, deadline)
		if err == nil {
			return resp, nil
		}
		c.close()
		if c.reused && !c.gotBytes && attempt < 3 && ctx.Err() == nil && connWasDead(err) && !errors.Is(err, errRequestBody) {
			if next, ok := rewind(req, !c.wrote, true); ok {
				req = next
				continue
			}
		}
		closeRequestBody(req)
		return nil, err
	}
}

// A path is where a request goes: this Transport's own, or Fallback for a
// reason.
type path uint8

const (
	fastPath        path = iota
	fallbackProxy        // Proxy routes it through a proxy
	fallbackConnect      // CONNECT
	fallbackUpgrade      // "Connection: upgrade" (WebSocket, h2c upgrade)
	fallbackScheme       // another scheme
	numPaths
)

// pathNames name the paths in Snapshot.Fallback.
var pathNames = [numPaths]string{"fast", "proxy", "connect", "upgrade", "scheme"}

// RegisterProtocol registers rt for URLs of scheme, as
// http.Transport.RegisterProtocol does: such requests go to rt before
// anything else (http and https included), and one rt answers with
// [http.ErrSkipAltProtocol] goes on as if none was registered, its body
// rewound by GetBody. Registering a scheme twice panics. Other schemes
// reach Fallback; rt can be [http.NewFileTransport], for one.
func (t *Transport) RegisterProtocol(scheme string, rt http.RoundTripper) {
	t.altMu.Lock()
	defer t.altMu.Unlock()
	m := map[string]http.RoundTripper{}
	if old := t.altProto.Load(); old != nil {
		if _, dup := (*old)[scheme]; dup {
			panic("protocol " + scheme + " already registered")
		}
		for k, v := range *old {
			m[k] = v
		}
	}
	m[scheme] = rt
	t.altProto.Store(&m)
}

// rewindBody gives req a fresh body from GetBody, for a request a
// registered protocol skipped after it may have read the body.
func rewindBody(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return &r, nil
}

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

// fallbackReason returns the path req takes.
func (t *Transport) fallbackReason(req *http.Request) path {
	switch {

	case req.URL.Scheme != "http" && req.URL.Scheme != "https":
		return fallbackScheme
	case req.Method == http.MethodConnect:
		return fallbackConnect
	}
	if c := req.Header["Connection"]; c != nil && headerHasToken(c, "upgrade") {
		return fallbackUpgrade
	}
	if t.Proxy != nil {
		if u, err := t.Proxy(req); err != nil || u != nil {
			return fallbackProxy
		}
	}
	return fastPath
}

// roundTripFallback sends req through Fallback, under Timeout: a deadline
// on the request's context, released when the response body is closed,
// as http.Client.Timeout's is (canceling at the body's end instead races
// the HTTP/2 transport's own end of the stream, and can keep its
// connection from going idle).
func (t *Transport) roundTripFallback(req *http.Request) (*http.Response, error) {
	if t.Timeout <= 0 {
		return t.fallbackRT().RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.Timeout)
	resp, err := t.fallbackRT().RoundTrip(req.WithContext(ctx))
	timedOut := ctx.Err() == context.DeadlineExceeded && req.Context().Err() == nil
	if err != nil || timedOut {
		// A response can race the deadline: net/http's transport, canceled,
		// closes a TLS connection by sending close_notify first, and a
		// server that answers the close gets its answer read. Past the
		// deadline the request has timed out, whatever came back.
		if err == nil {
			resp.Body.Close()
		}
		cancel()
		if timedOut {
			return nil, errRequestTimeout
		}
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel, ctx: ctx, parent: req.Context()}
	return resp, nil
}

// cancelBody releases a fallback request's deadline once its body is done.
type cancelBody struct {
	io.ReadCloser
	cancel      context.CancelFunc
	ctx, parent context.Context
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() == context.DeadlineExceeded && b.parent.Err() == nil {
		err = errRequestTimeout
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (t *Transport) fallbackRT() http.RoundTripper {
	t.fallbackOnce.Do(func() {
		t.fallback = t.Fallback
		if t.fallback == nil {
			tr := NewTunedTransport()
			if t.DialContext != nil {
				tr.DialContext = t.DialContext
			}
			tr.DialTLSContext = t.DialTLSContext
			tr.Proxy = t.Proxy
			tr.ProxyConnectHeader = t.ProxyConnectHeader
			tr.GetProxyConnectHeader = t.GetProxyConnectHeader
			tr.OnProxyConnectResponse = t.OnProxyConnectResponse
			tr.TLSClientConfig = t.tlsConfig() // one identity, one session cache
			if t.TLSHandshakeTimeout != 0 {
				tr.TLSHandshakeTimeout = max(t.TLSHandshakeTimeout, 0)
			}
			if t.Protocols != nil {
				tr.Protocols = t.Protocols
			}
			tr.DisableCompression = t.DisableCompression
			tr.DisableKeepAlives = t.DisableKeepAlives
			t.fallback = tr
		}
	})
	return t.fallback
}

// CloseIdleConnections closes every idle connection, the fallback's too.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, stack := range idle {
		for _, c := range stack {
			c.idleTimer.Stop()
			c.close()
		}
	}
	t.closeIdleH2()
	if f, ok := t.fallbackRT().(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// staleCheckAfter: a connection idle longer than this is checked before it
// is used, for a close by the server or bytes it sent unasked (a late
// extra body, a 408): net/http's reader goroutine sees both while the
// connection is idle; this Transport has none and looks once, with one
// non-blocking peek. Connections reused within it (the steady state under
// load) skip the syscall, which costs about 9% of a request's CPU; there
// the window is the same race net/http has between a late byte and the
// next request.
const staleCheckAfter = time.Millisecond

// getConn pops the newest idle connection to host, or dials one. With
// check (a request that could not be retried), or when the connection has
// been idle over staleCheckAfter, it first makes sure the server has
// neither closed it nor written to it. A dial that ends in HTTP/2 (ALPN
// chose h2, or h2c) returns the new HTTP/2 connection instead, with a
// stream reserved for the request.
func (t *Transport) getConn(ctx context.Context, key connKey, check bool, deadline time.Time) (*conn, *h2Conn, error) {
	t.mu.Lock()
	stack := t.idle[key]
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
		t.idle[key] = stack
		idle := time.Since(c.idleSince)
		t.mu.Unlock()
		if idle >= t.idleTimeout() {
			c.close() // its timer is about to close it anyway
		} else if (check || idle > staleCheckAfter) && !c.clearDeadline().alive() {
			c.close()
		} else {
			c.reused = true
			return c, nil, nil
		}
		t.mu.Lock()
		stack = t.idle[key]
	}
	// None idle: a place to dial under MaxConnsPerHost, or wait for one.
	counted := t.MaxConnsPerHost > 0
	var w *connWaiter
	if counted && t.conns[key] >= t.MaxConnsPerHost {
		w = t.enqueueLocked(key)
		t.mu.Unlock()
		c, err := t.await(ctx, key, w, deadline)
		if err != nil || c != nil {
			return c, nil, err
		}
		// A place was given: dial.
	} else {
		if counted {
			if t.conns == nil {
				t.conns = make(map[connKey]int)
			}
			t.conns[key]++
		}
		t.mu.Unlock()
	}
	if err := ctx.Err(); err != nil {
		if counted {
			t.releasePlace(key)
		}
		return nil, nil, err
	}
	return t.dialOrTake(ctx, key, deadline, counted, t.lateBinding(key))
}

// dial makes a new connection to key, under deadline: HTTP/1.1, or
// HTTP/2 (ALPN chose h2, or h2c).
func (t *Transport) dial(ctx context.Context, key connKey, deadline time.Time) (*conn, *h2Conn, error) {
	dial := t.DialContext
	if dial == nil {
		dial = defaultDialer.DialContext
	}
	if !deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
			// The dial is part of the request: it ends by the deadline.
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
	}
	var nc net.Conn
	var err error
	h2 := false
	if key.tls && t.DialTLSContext != nil {
		nc, err = t.DialTLSContext(ctx, "tcp", hostPort(key))
		if err == nil {
			nc, h2, err = t.dialedTLS(ctx, key.host, nc)
		}
	} else {
		nc, err = dial(ctx, "tcp", hostPort(key))
		h2 = err == nil && !key.tls && t.h2Cleartext()
		if err == nil && key.tls {
			nc, h2, err = t.handshake(ctx, key.host, nc)
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(deadline) && !deadline.IsZero() {
			return nil, nil, errRequestTimeout
		}
		return nil, nil, err
	}
	if h2 {
		cc, err := t.startH2(key, nc)
		return nil, cc, err
	}
	if key.tls {
		t.mu.Lock()
		t.noteProtocolLocked(key, false)
		t.mu.Unlock()
	}
	return newConn(t, key, nc), nil, nil
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

var defaultDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// putIdle returns c to the pool, or closes it when the pool is full
// (errIdlePoolFull) or keep-alives are off (errKeepAlivesOff).
func (t *Transport) putIdle(c *conn) error {
	max := t.MaxIdleConnsPerHost
	if max == 0 {
		max = DefaultMaxIdleConnsPerHost
	}
	t.mu.Lock()
	if !t.DisableKeepAlives && len(t.waiting) > 0 && t.handOffLocked(c) {
		t.mu.Unlock()
		return nil
	}
	if t.DisableKeepAlives || len(t.idle[c.key]) >= max {
		t.mu.Unlock()
		c.close()
		if t.DisableKeepAlives {
			return errKeepAlivesOff
		}
		return errIdlePoolFull
	}
	if t.idle == nil {
		t.idle = make(map[connKey][]*conn)
	}
	c.reused, c.wrote, c.gotBytes, c.trace = false, false, false, nil
	c.idleSince = time.Now()
	t.idle[c.key] = append(t.idle[c.key], c)
	// One timer per connection, armed at most once per IdleConnTimeout:
	// a connection back in the pool before its timer fires keeps it, and
	// idleExpired re-arms it for what remains of the new idle spell.
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(t.idleTimeout(), c.idleExpired)
	} else if !c.idleArmed {
		c.idleTimer.Reset(t.idleTimeout())
	}
	c.idleArmed = true
	t.mu.Unlock()
	return nil
}

// Why putIdle did not pool a connection (httptrace's PutIdleConn).
var (
	errIdlePoolFull  = errorString("client: idle pool full (MaxIdleConnsPerHost)")
	errKeepAlivesOff = errorString("client: keep-alives disabled")
)

// idleExpired runs when c's idle timer fires: c closes if it is still in
// the pool and has been idle for IdleConnTimeout; a connection that was
// used since waits for the rest of its current idle spell.
func (c *conn) idleExpired() {
	t := c.t
	t.mu.Lock()
	c.idleArmed = false
	if !t.inPoolLocked(c) {
		t.mu.Unlock() // in use, or closed: putIdle arms the timer again
		return
	}
	if rest := t.idleTimeout() - time.Since(c.idleSince); rest > 0 {
		c.idleArmed = true
		c.idleTimer.Reset(rest)
		t.mu.Unlock()
		return
	}
	t.removeIdleLocked(c)
	t.mu.Unlock()
	c.close()
}

// inPoolLocked reports whether c is in the pool; t.mu is held.
func (t *Transport) inPoolLocked(c *conn) bool {
	for _, x := range t.idle[c.key] {
		if x == c {
			return true
		}
	}
	return false
}

// removeIdleLocked takes c out of the pool, t.mu held; it reports false
// when c was not in it (a request has taken it).
func (t *Transport) removeIdleLocked(c *conn) bool {
	stack := t.idle[c.key]
	for i, x := range stack {
		if x == c {
			copy(stack[i:], stack[i+1:])
			stack[len(stack)-1] = nil
			t.idle[c.key] = stack[:len(stack)-1]
			return true
		}
	}
	return false
}

func (t *Transport) idleTimeout() time.Duration {
	switch {
	case t.IdleConnTimeout > 0:
		return t.IdleConnTimeout
	case t.IdleConnTimeout < 0:
		return neverIdleOut
	}
	return DefaultIdleConnTimeout
}

// neverIdleOut is the idle timeout of a negative IdleConnTimeout: about
// 146 years, so no timer fires.
const neverIdleOut = time.Duration(1<<63 - 1)

// hostPort is the address to dial for a pool: its host, with the
// scheme's default port when it has none.
func hostPort(key connKey) string {
	host := key.host
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		return host
	}
	port := "80"
	if key.tls {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// connWasDead reports an error that shows a reused connection had been
// closed by the server before this request: end of stream or a reset on
// the write or the first read. Timeouts, malformed responses and errors of
// the request body say nothing of the sort and are never retried.
func connWasDead(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

// replayable reports net/http's rule for retrying a request whose bytes may
// have reached the server: an idempotent method or an idempotency key, and
// a body that can be produced again.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header["Idempotency-Key"] != nil || req.Header["X-Idempotency-Key"] != nil
}

// rewind returns a request to retry req with: req itself when it has no
// body, a copy with a fresh body from GetBody, or false when req may not be
// sent again. nothingWritten relaxes the rule as net/http does: a request
// none of whose bytes left may be retried whatever its method. closeOld
// closes the first attempt's body when there is a fresh one (false when
// the attempt closed it).
func rewind(req *http.Request, nothingWritten, closeOld bool) (*http.Request, bool) {
	if !nothingWritten && !replayable(req) {
		return nil, false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	if closeOld {
		req.Body.Close() // the first attempt's, whatever it had read of it
	}
	next := *req
	next.Body = body
	return &next, true
}
