package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawDialMode opens a raw connection to the server m.serve started at base,
// for an HTTP/1.1 mode's tests that write request bytes and read the
// response off the wire (framing, pipelining, hijacks): a TCP connection
// on h1, a TLS one negotiating http/1.1 on https1, trusting the
// certificate c (the client m.serve returned) trusts. It closes with the
// test, and has a 10 s deadline.
func rawDialMode(t *testing.T, m mode, base string, c *http.Client) net.Conn {
	t.Helper()
	if m.isH2() {
		t.Fatalf("%v: rawDialMode is for HTTP/1.1 modes", m)
	}
	addr := strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://")
	var nc net.Conn
	var err error
	if m.cleartext() {
		nc, err = net.Dial("tcp", addr)
	} else {
		cfg := c.Transport.(*http.Transport).TLSClientConfig.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		nc, err = tls.Dial("tcp", addr, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { nc.Close() })
	return nc
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
