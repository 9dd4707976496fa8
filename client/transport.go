package client

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
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
// once it is in use. [NewTransport] returns one with [New]'s tuned
// defaults in its fields (a proxy from the environment, overall and head
// timeouts); [FromHTTPTransport] builds one from an *http.Transport's
// fields, with their net/http meanings (the zero values here mean this
// package's defaults, which differ: see each field).
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
	// doc). Nil means a tuned *http.Transport from [NewHTTPTransport]
	// configured by this Transport's fields, each with its meaning here
	// (dialers, proxy, TLS, protocols, pool sizes, timeouts, compression,
	// keep-alives), its connections counted in Stats and its bodies
	// drained on Close as DrainMaxBytes and DrainTimeout say. A Fallback
	// you set is used as it is: wrap it with [DrainBody] for the drain.
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

	// Stats, if set, records this Transport's requests and connections:
	// requests and failures, connections dialed (so reused), the DNS,
	// connect and TLS time of each new connection and the time to each
	// response head, and the path each request took: this Transport's
	// own, or Fallback by the reason it went there (Snapshot's Fast and
	// Fallback). The connections of a Fallback you set are not counted.
	// On a reused connection a request costs two clock reads and a few
	// atomic adds.
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

	// DrainMaxBytes and DrainTimeout bound the bounded drain: how much of
	// a body closed before its end Close reads, and for how long, to keep
	// the connection, on both paths (0 means [DefaultDrainMaxBytes] and
	// [DefaultDrainTimeout]; a negative DrainMaxBytes never drains, and a
	// body closed early then costs its connection).
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

	// mu guards both engines' pools: each engine declares its own
	// (h1_pool.go, h2_pool.go), and the dispatch (dispatch.go) takes
	// connections from them.
	mu sync.Mutex
	h1Pools
	h2Pools
}

// connKey names a pool of connections: a URL host, over TLS or not.
type connKey struct {
	host string
	tls  bool
}

// DefaultMaxIdleConnsPerHost is the idle cap per host of a [Transport]
// whose MaxIdleConnsPerHost is 0: high enough that a fan-out of hundreds
// of concurrent requests to one host reuses its connections (net/http
// keeps 2). [NewTransport] sets its own, max(2·GOMAXPROCS, 100).
const DefaultMaxIdleConnsPerHost = 256

// DefaultIdleConnTimeout closes idle connections before most servers and
// load balancers do (nginx: 75 s; AWS ALB: 60 s is their usual idle cut,
// so a client keeping them longer meets resets). net/http uses 90 s.
const DefaultIdleConnTimeout = 55 * time.Second

const (
	defaultExpectContinueTimeout  = time.Second
	defaultMaxResponseHeaderBytes = 1 << 20
)

var defaultDialer = &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}

// maxResponseHeaderBytes is MaxResponseHeaderBytes as it applies.
func (t *Transport) maxResponseHeaderBytes() int {
	if t.MaxResponseHeaderBytes > 0 {
		return t.MaxResponseHeaderBytes
	}
	return defaultMaxResponseHeaderBytes
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
