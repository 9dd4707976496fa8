package client

// FromHTTPTransport and the http.Transport members a user sets: what they
// mean, checked against net/http where it decides the same thing.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// FromHTTPTransport reads an *http.Transport as net/http would: zero
// values with net/http's meaning, HTTP/2 offered when net/http's own
// transport wires it (checked against it, on the same configurations).
func TestFromHTTPTransport(t *testing.T) {
	dial := func(ctx context.Context, n, a string) (net.Conn, error) { return nil, errors.New("unused") }
	h2Only := new(http.Protocols)
	h2Only.SetHTTP2(true)
	for name, std := range map[string]*http.Transport{
		"zero":                   {},
		"tls config":             {TLSClientConfig: &tls.Config{}},
		"tls config, forced":     {TLSClientConfig: &tls.Config{}, ForceAttemptHTTP2: true},
		"dialer":                 {DialContext: dial},
		"dialer, forced":         {DialContext: dial, ForceAttemptHTTP2: true},
		"empty TLSNextProto":     {TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}},
		"protocols, http2 only":  {Protocols: h2Only, TLSClientConfig: &tls.Config{}},
		"protocols, with dialer": {Protocols: h2Only, DialContext: dial},
	} {
		ours := FromHTTPTransport(std)
		std.CloseIdleConnections() // net/http wires its HTTP/2 on first use
		_, wired := std.TLSNextProto["h2"]
		if got := ours.Protocols.HTTP2(); got != wired {
			t.Errorf("%s: HTTP/2 offered = %v, net/http wired it: %v", name, got, wired)
		}
		if ours.Fallback != std || ours.MaxIdleConnsPerHost != http.DefaultMaxIdleConnsPerHost ||
			ours.IdleConnTimeout >= 0 || ours.TLSHandshakeTimeout >= 0 || ours.ExpectContinueTimeout >= 0 ||
			ours.MaxResponseHeaderBytes != 10<<20 {
			t.Errorf("%s: zero values read as %+v", name, ours)
		}
	}
}

// GODEBUG=http2client=0 keeps this Transport on HTTP/1.1, as it keeps
// net/http's.
func TestGODEBUGHTTP2ClientOff(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for debug, want := range map[string]string{"": "HTTP/2.0", "http2client=0": "HTTP/1.1"} {
		t.Setenv("GODEBUG", debug)
		tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		resp, err := tr.RoundTrip(mustReq(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.Proto != want {
			t.Errorf("GODEBUG=%q: %s, want %s", debug, resp.Proto, want)
		}
	}
}

// RegisterProtocol, as http.Transport's: a scheme's requests go to its
// RoundTripper first (http included); ErrSkipAltProtocol sends them on,
// with the body rewound.
func TestRegisterProtocol(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	tr.RegisterProtocol("foo", readerRT("from foo"))
	tr.RegisterProtocol("http", rtFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body) // read it: the body must be rewound
		return nil, http.ErrSkipAltProtocol
	}))
	c := &http.Client{Transport: tr}
	resp, err := c.Get("foo://x/")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "from foo" {
		t.Errorf("foo:// = %q", b)
	}
	resp, err = c.Post(srv.URL, "text/plain", strings.NewReader("data"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "data" {
		t.Errorf("http:// after ErrSkipAltProtocol: %q, want the whole body", b)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	tr.RegisterProtocol("foo", readerRT(""))
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func readerRT(s string) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(s)), Request: r}, nil
	})
}

// A request through an HTTPS proxy goes to the Fallback built from the
// Transport's fields, with the CONNECT's headers and its response hook,
// and Stats counts it as proxied.
func TestProxyConnectFieldsReachFallback(t *testing.T) {
	sawHeader := make(chan string, 1)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "CONNECT" {
			sawHeader <- r.Header.Get("X-Proxy-Token") + "," + r.Header.Get("X-Dynamic")
		}
		http.Error(w, "no tunnels today", http.StatusForbidden)
	}))
	defer proxy.Close()
	var stats Stats
	var hookStatus atomic.Int32
	tr := &Transport{
		Proxy:              http.ProxyURL(mustURL(t, proxy.URL)),
		ProxyConnectHeader: http.Header{"X-Proxy-Token": {"secret"}},
		GetProxyConnectHeader: func(ctx context.Context, u *url.URL, target string) (http.Header, error) {
			return http.Header{"X-Dynamic": {target}}, nil
		},
		OnProxyConnectResponse: func(ctx context.Context, u *url.URL, req *http.Request, resp *http.Response) error {
			hookStatus.Store(int32(resp.StatusCode))
			return nil
		},
		Stats: &stats,
	}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(mustReq(t, "https://example.test/")); err == nil {
		t.Fatal("a refused tunnel succeeded")
	}
	// GetProxyConnectHeader's headers replace ProxyConnectHeader's, as in net/http.
	if got := <-sawHeader; got != ",example.test:443" {
		t.Errorf("CONNECT headers %q, want GetProxyConnectHeader's", got)
	}
	static := &Transport{Proxy: tr.Proxy, ProxyConnectHeader: tr.ProxyConnectHeader}
	defer static.CloseIdleConnections()
	static.RoundTrip(mustReq(t, "https://example.test/"))
	if got := <-sawHeader; got != "secret," {
		t.Errorf("CONNECT headers %q, want ProxyConnectHeader's", got)
	}
	if s := hookStatus.Load(); s != http.StatusForbidden {
		t.Errorf("OnProxyConnectResponse saw %d, want 403", s)
	}
	if n := stats.Snapshot().Fallback["proxy"]; n != 1 {
		t.Errorf("Stats: %d proxied requests, want 1", n)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
