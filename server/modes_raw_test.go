package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Raw connections to a server on the mode matrix, for the tests that
// need a connection short of a request (one that opened its protocol and
// says nothing more, or sends part of its first bytes), on every mode.

// dialRaw opens a connection to base (a URL from mode.serve) as m's
// client would, short of any request: plain TCP on a cleartext mode; on
// a TLS mode, the handshake done with the client's roots and ALPN h2 on
// an HTTP/2 mode, http/1.1 on https1. The HTTP/2 preface is the
// caller's to send (h2ClientStart). The connection, with a 10 s deadline,
// closes with the test.
func (m mode) dialRaw(t *testing.T, base string, c *http.Client) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	nc := dial(t, u.Host)
	if m.cleartext() {
		return nc
	}
	proto := "http/1.1"
	if m.isH2() {
		proto = "h2"
	}
	cfg := c.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{proto}
	cfg.ServerName = u.Hostname()
	tc := tls.Client(nc, cfg)
	if err := tc.Handshake(); err != nil {
		t.Fatalf("%v: TLS handshake: %v", m, err)
	}
	if got := tc.ConnectionState().NegotiatedProtocol; got != proto {
		t.Fatalf("%v: negotiated %q, want %q", m, got, proto)
	}
	t.Cleanup(func() { tc.Close() })
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	return tc
}

// h2ClientStart is what an HTTP/2 client sends first: the connection
// preface and an empty SETTINGS frame.
func h2ClientStart() []byte {
	return h2.AppendSettings([]byte(h2.ClientPreface))
}

// modesWhere is allModes filtered by keep, in the order they run.
func modesWhere(keep func(m mode) bool) []mode {
	var ms []mode
	for _, m := range allModes {
		if keep(m) {
			ms = append(ms, m)
		}
	}
	return ms
}
