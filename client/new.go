package client

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"time"
)

// The defaults of [New] and [NewTunedTransport], each with the reason.
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
	// that each client of [New] (each transport of [NewTunedTransport])
	// gets when its TLS configuration has none: resumed sessions skip the
	// full handshake.
	DefaultTLSSessionCacheSize = 256
)

// config is what the Options set.
type config struct {
	timeout             time.Duration
	maxIdlePerHost      int
	stats               *Stats
	drain               bool
	drainMax            int64
	drainTimeout        time.Duration
	std                 bool
	tlsConfig           *tls.Config
	disableHTTP2        bool
	responseHeaderLimit time.Duration
	proxy               func(*http.Request) (*url.URL, error)
	proxySet            bool
	dial                DialFunc
}

// Option configures [New].
type Option func(*config)

// WithTimeout sets the overall timeout of a request, body included; 0
// means none. It is enforced by the transport ([Transport.Timeout]), not
// by http.Client.Timeout, whose machinery costs a timer and a goroutine
// per request around a transport it does not know; so it bounds each
// request of a redirect chain rather than the chain. With
// [WithNetHTTPTransport] it is http.Client.Timeout.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxIdleConnsPerHost sets the idle connections kept per host. Set it
// to at least the number of concurrent requests to one host.
func WithMaxIdleConnsPerHost(n int) Option { return func(c *config) { c.maxIdlePerHost = n } }

// WithResponseHeaderTimeout sets the wait for response heads; 0 means
// none.
func WithResponseHeaderTimeout(d time.Duration) Option {
	return func(c *config) { c.responseHeaderLimit = d }
}

// WithStats records the client's requests and connections in s.
func WithStats(s *Stats) Option { return func(c *config) { c.stats = s } }

// WithDrain sets the caps of the bounded drain on Close (see [DrainBody]).
func WithDrain(maxBytes int64, timeout time.Duration) Option {
	return func(c *config) { c.drain, c.drainMax, c.drainTimeout = true, maxBytes, timeout }
}

// WithoutDrain turns the bounded drain off: a body closed early costs its
// connection, as with plain net/http before Go 1.27 (Go 1.27 drains it
// after Close returns, in time for some of the next requests only).
func WithoutDrain() Option { return func(c *config) { c.drain = false } }

// WithNetHTTPTransport serves every request with the tuned
// http.Transport, for code that needs what only it offers (HTTP/2 PING
// health checks, 100-continue over HTTP/2, say; httptrace hooks fire on
// both). By
// default [New] serves http:// and https:// requests with the fast
// [Transport] and hands it the rest.
func WithNetHTTPTransport() Option { return func(c *config) { c.std = true } }

// WithTLSConfig sets the TLS configuration. cfg is cloned here, and the
// clone cloned again by each client built with the option, so cfg is
// never modified and later changes to it are not seen. If cfg has no
// ClientSessionCache, each client gets a cache of its own
// ([DefaultTLSSessionCacheSize] entries); if it has one, that cache is
// used, and every client given the same cache resumes the others'
// sessions, with the client certificate (Certificates,
// GetClientCertificate) of the handshake that made each, and without
// calling VerifyPeerCertificate again; share a cache only between configs
// that agree on those.
func WithTLSConfig(cfg *tls.Config) Option {
	cfg = cfg.Clone()
	return func(c *config) { c.tlsConfig = cfg }
}

// WithProxy sets how a request picks its proxy, as http.Transport.Proxy
// does; nil means none. The default is http.ProxyFromEnvironment. A
// proxied request takes the fallback http.Transport (Snapshot's
// Fallback["proxy"]).
func WithProxy(proxy func(*http.Request) (*url.URL, error)) Option {
	return func(c *config) { c.proxy, c.proxySet = proxy, true }
}

// WithDialContext sets how connections are dialed, on both paths; the
// default is a net.Dialer with [DefaultDialTimeout] and 30 s TCP
// keep-alive.
func WithDialContext(dial DialFunc) Option { return func(c *config) { c.dial = dial } }

// WithoutHTTP2 keeps every connection on HTTP/1.1.
func WithoutHTTP2() Option { return func(c *config) { c.disableHTTP2 = true } }

// New returns an *http.Client tuned for a service that talks to a few
// hosts at high concurrency. Build one and share it: a client, and so a
// connection pool, per request costs a TCP and TLS handshake per request.
// The defaults:
//
//   - http:// and https:// requests on the fast [Transport] (HTTP/1.1,
//     and HTTP/2 by ALPN over TLS); proxied and upgrade requests on a
//     tuned http.Transport. [WithStats] counts which path each request
//     took (Snapshot's Fast and Fallback);
//   - idle connections per host: max(2·GOMAXPROCS, 100), not net/http's
//     2, so concurrent requests to one host reuse their connections;
//   - idle connections closed after [DefaultIdleConnTimeout];
//   - timeouts: [DefaultTimeout] per request, body included, enforced
//     by the transport at no cost per request (see [WithTimeout]),
//     [DefaultDialTimeout], [DefaultTLSHandshakeTimeout],
//     [DefaultResponseHeaderTimeout];
//   - a TLS session cache of the client's own
//     ([DefaultTLSSessionCacheSize] entries) for resumption, unless
//     [WithTLSConfig] brings one;
//   - HTTP/2 attempted over TLS (ALPN), [WithoutHTTP2] to keep HTTP/1.1;
//   - proxies from the environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY);
//   - a bounded drain on Close ([DrainBody]), 64 KiB and 50 ms, so a
//     body closed before its end keeps its connection.
//
// http.DefaultTransport and http.DefaultClient are never modified.
func New(opts ...Option) *http.Client {
	cfg := config{
		timeout:             DefaultTimeout,
		maxIdlePerHost:      max(2*runtime.GOMAXPROCS(0), 100),
		drain:               true,
		responseHeaderLimit: DefaultResponseHeaderTimeout,
	}
	for _, o := range opts {
		o(&cfg)
	}
	tr := newTunedTransport(&cfg)
	var std http.RoundTripper = tr
	if cfg.drain {
		std = DrainBody(tr, cfg.drainMax, cfg.drainTimeout)
	}
	rt, clientTimeout := std, cfg.timeout
	if !cfg.std {
		rt = &Transport{
			DialContext:           tr.DialContext,
			Proxy:                 tr.Proxy,
			TLSClientConfig:       tr.TLSClientConfig, // one session cache for both paths
			TLSHandshakeTimeout:   tr.TLSHandshakeTimeout,
			Protocols:             protocols(&cfg),
			Fallback:              std,
			MaxIdleConnsPerHost:   cfg.maxIdlePerHost,
			IdleConnTimeout:       tr.IdleConnTimeout,
			ResponseHeaderTimeout: tr.ResponseHeaderTimeout,
			ExpectContinueTimeout: tr.ExpectContinueTimeout,
			Timeout:               cfg.timeout,
			Stats:                 cfg.stats,
			DrainMaxBytes:         drainBytes(&cfg),
			DrainTimeout:          cfg.drainTimeout,
		}
		clientTimeout = 0
	}
	if cfg.stats != nil {
		rt = cfg.stats.RoundTripper(rt)
	}
	return &http.Client{Transport: rt, Timeout: clientTimeout}
}

// protocols is the fast Transport's Protocols for cfg: nil (HTTP/1.1,
// and HTTP/2 over TLS) unless [WithoutHTTP2].
func protocols(cfg *config) *http.Protocols {
	if !cfg.disableHTTP2 {
		return nil
	}
	p := new(http.Protocols)
	p.SetHTTP1(true)
	return p
}

func drainBytes(cfg *config) int64 {
	if !cfg.drain {
		return -1
	}
	return cfg.drainMax
}

// NewTunedTransport returns the *http.Transport that [New] uses, with its
// defaults, for code that needs a Transport rather than a Client.
func NewTunedTransport() *http.Transport {
	cfg := config{maxIdlePerHost: max(2*runtime.GOMAXPROCS(0), 100), responseHeaderLimit: DefaultResponseHeaderTimeout}
	return newTunedTransport(&cfg)
}

func newTunedTransport(cfg *config) *http.Transport {
	dial := DialFunc((&net.Dialer{Timeout: DefaultDialTimeout, KeepAlive: 30 * time.Second}).DialContext)
	if cfg.dial != nil {
		dial = cfg.dial
	}
	// Clone again: an Option value may build several clients, and each
	// must get its own config and, below, its own session cache.
	tlsCfg := cfg.tlsConfig.Clone()
	if tlsCfg == nil {
		tlsCfg = &tls.Config{}
	}
	if tlsCfg.ClientSessionCache == nil {
		tlsCfg.ClientSessionCache = newSessionCache()
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   DefaultTLSHandshakeTimeout,
		ResponseHeaderTimeout: cfg.responseHeaderLimit,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       DefaultIdleConnTimeout,
		MaxIdleConns:          0, // no global cap: the per-host one bounds each pool
		MaxIdleConnsPerHost:   cfg.maxIdlePerHost,
		ForceAttemptHTTP2:     !cfg.disableHTTP2,
	}
	if cfg.proxySet {
		tr.Proxy = cfg.proxy
	}
	if cfg.disableHTTP2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	if s := cfg.stats; s != nil {
		tr.DialContext = s.DialContext(dial)
		tr.DialTLSContext = s.tlsDialer(tr.DialContext, tlsCfg, !cfg.disableHTTP2)
	}
	return tr
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
