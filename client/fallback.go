package client

// The requests the Transport does not send itself: those of a registered
// protocol, and those that go to Fallback (proxies, CONNECT, upgrades,
// other schemes), under Timeout.

import (
	"context"
	"io"
	"net/http"
)

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
			t.fallback = t.builtFallback()
		}
	})
	return t.fallback
}

// builtFallback is the Fallback of a Transport that sets none: a tuned
// http.Transport ([NewHTTPTransport]) with this Transport's fields, each
// with its meaning here, its connections counted in Stats, and the
// bounded drain on Close.
func (t *Transport) builtFallback() http.RoundTripper {
	tr := NewHTTPTransport()
	if t.DialContext != nil {
		tr.DialContext = t.DialContext
	}
	tr.DialTLSContext = t.DialTLSContext
	if s := t.Stats; s != nil {
		tr.DialContext = s.DialContext(tr.DialContext)
		if tr.DialTLSContext != nil {
			tr.DialTLSContext = s.DialContext(tr.DialTLSContext)
		}
	}
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
	switch {
	case t.MaxIdleConnsPerHost > 0:
		tr.MaxIdleConnsPerHost = t.MaxIdleConnsPerHost
	case t.MaxIdleConnsPerHost < 0:
		tr.MaxIdleConnsPerHost = -1 // keeps none, as here
	default:
		tr.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	tr.MaxConnsPerHost = max(t.MaxConnsPerHost, 0)
	switch {
	case t.IdleConnTimeout > 0:
		tr.IdleConnTimeout = t.IdleConnTimeout
	case t.IdleConnTimeout < 0:
		tr.IdleConnTimeout = 0 // net/http's "kept until the server closes them"
	}
	tr.ResponseHeaderTimeout = max(t.ResponseHeaderTimeout, 0)
	switch {
	case t.ExpectContinueTimeout > 0:
		tr.ExpectContinueTimeout = t.ExpectContinueTimeout
	case t.ExpectContinueTimeout < 0:
		tr.ExpectContinueTimeout = 0 // net/http's "send at once"
	}
	tr.MaxResponseHeaderBytes = int64(t.maxResponseHeaderBytes())
	tr.DisableCompression = t.DisableCompression
	tr.DisableKeepAlives = t.DisableKeepAlives
	if t.DrainMaxBytes < 0 {
		return tr
	}
	return DrainBody(tr, t.DrainMaxBytes, t.DrainTimeout)
}
