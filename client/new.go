package client

import (
	"crypto/tls"
	"net"
	"net/http"
	"runtime"
	"time"
)

// The defaults of [NewTransport] (and so of [New]) and of
// [NewHTTPTransport], each with the reason.
const (
	// DefaultTimeout bounds a whole request, body included. An
	// http.Client without one waits forever on a stuck server.
	DefaultTimeout = 30 * time.Second
	// DefaultDialTimeout bounds the TCP connect.
	DefaultDialTimeout = 10 * time.Second
	// DefaultTLSHandshakeTimeout bounds the handshake (net/http: 10 s).
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout bounds the wait for the response head
	// after the request is written, apart from the body's transfer, so a
	// hung backend fails fast while a long download still can run.
	DefaultResponseHeaderTimeout = 15 * time.Second
	// DefaultTLSSessionCacheSize is the size of the TLS session cache
	// that each [Transport] (each transport of [NewHTTPTransport]) gets
	// when its TLS configuration has none: resumed sessions skip the
	// full handshake.
	DefaultTLSSessionCacheSize = 256
)

// An Option changes the [Transport] that [New] builds, before its first
// use: it sets the Transport's fields, which are the one place each
// setting lives.
//
//	c := client.New(func(t *client.Transport) {
//		t.Timeout = 5 * time.Second
//		t.Stats = &stats
//	})
type Option func(*Transport)

// New returns an *http.Client tuned for a service that talks to a few
// hosts at high concurrency: it is
//
//	&http.Client{Transport: t}
//
// where t is [NewTransport]'s Transport with each of opts applied to it.
// Build one and share it: a client, and so a connection pool, per
// request costs a TCP and TLS handshake per request. The defaults, each a
// field of t that an Option may change:
//
//   - http:// and https:// requests on the fast [Transport] (HTTP/1.1,
//     and HTTP/2 by ALPN over TLS); proxied and upgrade requests on a
//     tuned http.Transport built from the same fields;
//   - idle connections per host: max(2·GOMAXPROCS, 100), not net/http's
//     2, so concurrent requests to one host reuse their connections;
//   - idle connections closed after [DefaultIdleConnTimeout];
//   - timeouts: [DefaultTimeout] per request, body included, enforced
//     by the transport at no cost per request (see [Transport.Timeout]),
//     [DefaultDialTimeout], [DefaultTLSHandshakeTimeout],
//     [DefaultResponseHeaderTimeout];
//   - a TLS session cache of the client's own
//     ([DefaultTLSSessionCacheSize] entries) for resumption, unless
//     TLSClientConfig brings one;
//   - HTTP/2 attempted over TLS (ALPN); set Protocols to keep HTTP/1.1;
//   - proxies from the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY);
//   - a bounded drain on Close, [DefaultDrainMaxBytes] and
//     [DefaultDrainTimeout], so a body closed before its end keeps its
//     connection (DrainMaxBytes -1 turns it off).
//
// Set t.Stats to count the client's requests and connections.
// http.DefaultTransport and http.DefaultClient are never modified.
func New(opts ...Option) *http.Client {
	t := NewTransport()
	for _, o := range opts {
		o(t)
	}
	return &http.Client{Transport: t} //nolint:client-timeout // bounded by the Transport: Timeout (DefaultTimeout) and ResponseHeaderTimeout
}

// NewTransport returns a [Transport] with [New]'s defaults set in its
// fields, for code that builds its own http.Client, or hands a
// RoundTripper on (to otelhttp, say):
//
//	&Transport{
//		Proxy:                 http.ProxyFromEnvironment,
//		DialContext:           (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
//		MaxIdleConnsPerHost:   max(2*runtime.GOMAXPROCS(0), 100),
//		ResponseHeaderTimeout: DefaultResponseHeaderTimeout,
//		Timeout:               DefaultTimeout,
//	}
//
// The fields left zero mean the Transport's own defaults (idle and TLS
// handshake timeouts, the drain's caps). Change any field before the
// Transport's first use. A zero Transport differs in what net/http's
// zero values mean: no proxy, and no overall or head timeout.
func NewTransport() *Transport {
	return &Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   tunedMaxIdleConnsPerHost(),
		ResponseHeaderTimeout: DefaultResponseHeaderTimeout,
		Timeout:               DefaultTimeout,
	}
}

// tunedMaxIdleConnsPerHost is the idle cap per host of NewTransport and
// NewHTTPTransport.
func tunedMaxIdleConnsPerHost() int { return max(2*runtime.GOMAXPROCS(0), 100) }

// NewHTTPTransport returns a net/http *http.Transport with the defaults
// of [NewTransport], for code that stays on net/http's transport (for
// what only it offers: HTTP/2 PING health checks, 100-continue over
// HTTP/2). It has no drain and no overall timeout of its own: add them
// as the client around it, with [DrainBody] and http.Client.Timeout:
//
//	c := &http.Client{Transport: client.DrainBody(client.NewHTTPTransport(), 0, 0), Timeout: client.DefaultTimeout}
//
// A [Transport] builds its Fallback from it.
func NewHTTPTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{ClientSessionCache: newSessionCache()},
		TLSHandshakeTimeout:   DefaultTLSHandshakeTimeout,
		ResponseHeaderTimeout: DefaultResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       DefaultIdleConnTimeout,
		MaxIdleConns:          0, // no global cap: the per-host one bounds each pool
		MaxIdleConnsPerHost:   tunedMaxIdleConnsPerHost(),
		ForceAttemptHTTP2:     true,
	}
}

// newSessionCache returns the session cache of one transport. It is never
// shared between transports: crypto/tls keys a session by server name
// alone (or address), and a resumed connection takes its identity from the
// session, not from the config that resumes it. The server sees the client
// certificate of the handshake that made the session, whatever
// certificate, or none, the resuming config carries; and the resuming
// config's VerifyPeerCertificate is not called (crypto/tls re-checks only
// expiry, host name and RootCAs). A cache per transport keeps each session
// with the identity and the checks that made it, and still gives
// resumption where it pays: a client reconnecting to a server after its
// idle connections closed.
func newSessionCache() tls.ClientSessionCache {
	return tls.NewLRUClientSessionCache(DefaultTLSSessionCacheSize)
}
