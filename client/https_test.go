package client_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hotpathhq/hotpath/client"
)

// http1Only is Protocols for HTTP/1.1 alone.
func http1Only() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	return p
}

// tlsServer starts an HTTP/1.1 TLS server with cert that records the SNI
// of each handshake and counts its connections.
func tlsServer(t *testing.T, cert tls.Certificate, h http.Handler) (srv *httptest.Server, snis func() []string, conns *atomic.Int64) {
	t.Helper()
	var mu sync.Mutex
	var names []string
	conns = new(atomic.Int64)
	srv = httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			mu.Lock()
			names = append(names, hello.ServerName)
			mu.Unlock()
			return nil, nil
		},
	}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), names...)
	}, conns
}

// https:// requests run on the Transport's own connections: TLS verified
// for the URL's host name (sent as SNI), the connection kept and reused,
// Response.TLS set, sessions resumed after the idle connections closed,
// and every request counted as fast in Stats.
func TestHTTPSOnTheFastPath(t *testing.T) {
	ca := newTestCA(t)
	srv, snis, conns := tlsServer(t, ca.issue(t, "server", true), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		io.WriteString(w, r.Method+" "+string(body)+" resumed="+map[bool]string{true: "yes", false: "no"}[r.TLS.DidResume])
	}))
	var stats client.Stats
	tr := &client.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}, Protocols: http1Only(), Stats: &stats}
	c := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	get := func(method, body, want string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != want {
			t.Fatalf("%s: body %q, %v; want %q", method, b, err, want)
		}
		return resp
	}
	for range 3 {
		resp := get("GET", "", "GET  resumed=no")
		if resp.TLS == nil || !resp.TLS.HandshakeComplete || resp.TLS.ServerName != "localhost" {
			t.Fatalf("Response.TLS = %+v, want a complete handshake with localhost", resp.TLS)
		}
	}
	get("POST", "payload", "POST payload resumed=no")
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 4 sequential requests, want 1", n)
	}
	tr.CloseIdleConnections()
	get("GET", "", "GET  resumed=yes") // a new connection resumes the session
	if got := snis(); len(got) != 2 || got[0] != "localhost" || got[1] != "localhost" {
		t.Errorf("the server saw SNI %q, want localhost twice", got)
	}
	snap := stats.Snapshot()
	if snap.Fast != 5 || len(snap.Fallback) != 0 {
		t.Errorf("fast %d, fallback %v: want 5 fast, none on the fallback", snap.Fast, snap.Fallback)
	}
	if snap.TLS.Count != 2 {
		t.Errorf("%d TLS handshakes timed, want 2", snap.TLS.Count)
	}
}

// A server whose certificate the client cannot verify, or one issued for
// another name, fails the request with crypto/tls's verification error,
// as on net/http's transport.
func TestHTTPSVerifiesTheServer(t *testing.T) {
	ca := newTestCA(t)
	srv, _, _ := tlsServer(t, ca.issue(t, "server", true), http.NotFoundHandler())
	for name, cfg := range map[string]*tls.Config{
		"unknown CA": {},
		"wrong name": {RootCAs: ca.pool, ServerName: "example.org"},
	} {
		tr := &client.Transport{TLSClientConfig: cfg, Protocols: http1Only()}
		_, err := (&http.Client{Transport: tr}).Get(srv.URL)
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			t.Errorf("%s: %v, want a *tls.CertificateVerificationError", name, err)
		}
	}
}
