package client

//lint:file-ignore SA1019 std's deprecated Dial and DialTLS are honoured, as net/http honours them

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
)

// FromHTTPTransport returns a Transport configured as std is, each field
// with net/http's meaning, and std as its Fallback: the one-line swap for
// code that builds its own *http.Transport.
//
//	c := &http.Client{Transport: client.FromHTTPTransport(tr)}
//
// What std's zero values mean in net/http is kept: 2 idle connections per
// host, idle connections kept until the server closes them, no TLS
// handshake bound, no wait for "100 Continue", a 10 MB response head.
// HTTP/2 is offered over TLS as net/http offers it: when
// ForceAttemptHTTP2 is set or std has no custom dialer, TLS
// configuration or TLSNextProto, unless Protocols says otherwise or
// GODEBUG has http2client=0. Requests std would send through a proxy go
// to std, with its ProxyConnectHeader, GetProxyConnectHeader and
// OnProxyConnectResponse. std's fields are read once: changes made to std
// afterwards are not seen. As net/http does on its first use, an HTTP/2
// capable std's TLSClientConfig gets "h2" and "http/1.1" in its
// NextProtos (for a DialTLS that dials with it).
func FromHTTPTransport(std *http.Transport) *Transport {
	t := &Transport{
		DialContext:            std.DialContext,
		DialTLSContext:         std.DialTLSContext,
		Proxy:                  std.Proxy,
		Fallback:               std,
		MaxIdleConnsPerHost:    std.MaxIdleConnsPerHost,
		MaxConnsPerHost:        std.MaxConnsPerHost,
		IdleConnTimeout:        std.IdleConnTimeout,
		TLSClientConfig:        std.TLSClientConfig,
		TLSHandshakeTimeout:    std.TLSHandshakeTimeout,
		ResponseHeaderTimeout:  std.ResponseHeaderTimeout,
		ExpectContinueTimeout:  std.ExpectContinueTimeout,
		MaxResponseHeaderBytes: int(std.MaxResponseHeaderBytes),
		DisableCompression:     std.DisableCompression,
		DisableKeepAlives:      std.DisableKeepAlives,
		Protocols:              stdProtocols(std),
	}
	if t.DialContext == nil && std.Dial != nil {
		dial := std.Dial
		t.DialContext = func(_ context.Context, network, addr string) (net.Conn, error) { return dial(network, addr) }
	}
	if t.DialTLSContext == nil && std.DialTLS != nil {
		dial := std.DialTLS
		t.DialTLSContext = func(_ context.Context, network, addr string) (net.Conn, error) { return dial(network, addr) }
	}
	if t.MaxIdleConnsPerHost == 0 {
		t.MaxIdleConnsPerHost = http.DefaultMaxIdleConnsPerHost
	}
	if t.IdleConnTimeout == 0 {
		t.IdleConnTimeout = -1
	}
	if t.TLSHandshakeTimeout == 0 {
		t.TLSHandshakeTimeout = -1
	}
	if t.ExpectContinueTimeout == 0 {
		t.ExpectContinueTimeout = -1
	}
	if t.MaxResponseHeaderBytes <= 0 {
		t.MaxResponseHeaderBytes = 10 << 20
	}
	if cfg := std.TLSClientConfig; cfg != nil && t.Protocols.HTTP2() {
		// As net/http does on its first use: ALPN in std's configuration
		// offers what std speaks, for a DialTLS that dials with it.
		cfg.NextProtos = alpnFor(cfg.NextProtos, t.Protocols)
	}
	return t
}

// alpnFor is next with "h2" and "http/1.1" as p allows: added when
// missing, removed when not allowed; other protocols stay.
func alpnFor(next []string, p *http.Protocols) []string {
	out := make([]string, 0, len(next)+2)
	var h1, h2 bool
	for _, n := range next {
		switch {
		case n == "http/1.1" && !p.HTTP1(), n == "h2" && !p.HTTP2():
			continue
		case n == "http/1.1":
			h1 = true
		case n == "h2":
			h2 = true
		}
		out = append(out, n)
	}
	if p.HTTP2() && !h2 {
		out = append(out, "h2")
	}
	if p.HTTP1() && !h1 {
		out = append(out, "http/1.1")
	}
	return out
}

// stdProtocols is what std speaks, as net/http decides it (its
// Transport.protocols and onceSetNextProtoDefaults).
func stdProtocols(std *http.Transport) *http.Protocols {
	p := new(http.Protocols)
	custom := std.TLSClientConfig != nil || std.DialContext != nil || std.Dial != nil ||
		std.DialTLS != nil || std.DialTLSContext != nil
	switch {
	case std.Protocols != nil:
		*p = *std.Protocols
	case std.TLSNextProto != nil:
		// An empty, non-nil TLSNextProto is net/http's documented way to
		// turn HTTP/2 off.
		p.SetHTTP1(true)
		p.SetHTTP2(std.TLSNextProto["h2"] != nil)
	default:
		p.SetHTTP1(true)
		p.SetHTTP2(std.ForceAttemptHTTP2 || !custom)
	}
	if godebugHas("http2client=0") {
		p.SetHTTP2(false)
		p.SetUnencryptedHTTP2(false)
		if !p.HTTP1() {
			p.SetHTTP1(true) // net/http then speaks HTTP/1.1 whatever Protocols says
		}
	}
	return p
}

// godebugHas reports whether GODEBUG holds setting (the last of a key wins).
func godebugHas(setting string) bool {
	key, _, _ := strings.Cut(setting, "=")
	found := false
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			found = kv == setting
		}
	}
	return found
}
