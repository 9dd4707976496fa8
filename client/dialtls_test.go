package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// DialTLSContext makes the https:// connections, as net/http's: its
// connection is used as it comes (TLSClientConfig unused: here one that
// trusts nothing), HTTP/2 when its ALPN chose h2, HTTP/1.1 otherwise,
// and reused.
func TestDialTLSContext(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	_, srv, _, pool := testServers(t, h)
	for _, tc := range []struct {
		alpn  []string
		proto string
	}{{[]string{"h2", "http/1.1"}, "HTTP/2.0"}, {[]string{"http/1.1"}, "HTTP/1.1"}, {nil, "HTTP/1.1"}} {
		t.Run(fmt.Sprintf("alpn=%v", tc.alpn), func(t *testing.T) {
			var dials atomic.Int32
			tr := &Transport{
				TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}, // trusts nothing: unused
				DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					dials.Add(1)
					d := tls.Dialer{Config: &tls.Config{RootCAs: pool, NextProtos: tc.alpn}}
					return d.DialContext(ctx, network, addr)
				},
			}
			t.Cleanup(tr.CloseIdleConnections)
			c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			for range 3 {
				resp, err := c.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != tc.proto || resp.TLS == nil {
					t.Fatalf("served over %q (TLS state %v), want %s", b, resp.TLS != nil, tc.proto)
				}
			}
			if n := dials.Load(); n != 1 {
				t.Errorf("DialTLSContext called %d times for 3 requests, want 1", n)
			}
		})
	}
}

// A connection of DialTLSContext's own that reports its TLS state (not a
// *tls.Conn) is taken at its word: ALPN's h2 means HTTP/2 (Go 1.27's
// net/http does the same).
func TestDialTLSConnectionState(t *testing.T) {
	_, tlsSrv, _, pool := testServers(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tr := &Transport{DialTLSContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		tc, err := tls.Dial(n, a, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}, ServerName: "example.com"})
		if err != nil {
			return nil, err
		}
		return stateConn{tc}, nil
	}}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(mustReq(t, tlsSrv.URL))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("proto %s, TLS %v; want HTTP/2 with the connection's state", resp.Proto, resp.TLS)
	}
}

// stateConn hides *tls.Conn behind a type of its own.
type stateConn struct{ *tls.Conn }
