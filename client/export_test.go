package client

import (
	"crypto/tls"
	"net/http"
)

// The internal test helpers the external tests (package client_test) use.
var (
	ScriptServer = scriptServer
	ReadReq      = readReq
	MustReq      = mustReq
)

// TLSConfigOf is the TLS configuration t uses, on both paths.
func TLSConfigOf(t *Transport) *tls.Config { return t.tlsConfig() }

// BuiltFallback is the *http.Transport t built as its Fallback, under the
// drain.
func BuiltFallback(t *Transport) *http.Transport {
	rt := t.fallbackRT()
	if d, ok := rt.(*drainTransport); ok {
		rt = d.rt
	}
	return rt.(*http.Transport)
}
