package server

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// testCert makes a self-signed certificate for 127.0.0.1.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "hotpath test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// startTLS serves s over TLS and returns its address.
func startTLS(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveTLSOn(t, s, ln)
	return ln.Addr().String()
}

// serveTLSOn serves s over TLS on ln until the test ends.
func serveTLSOn(t *testing.T, s *Server, ln net.Listener) {
	done := make(chan error, 1)
	go func() { done <- s.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != ErrServerClosed {
			t.Errorf("ServeTLS returned %v", err)
		}
	})
}

// Modes: the choice between engines itself (ALPN, the h2c preface,
// HTTP2HandOff), which the matrix's modes take as given.
func TestTLSHTTP1AndH2HandOff(t *testing.T) {
	cert, pool := testCert(t)
	var engineRequests atomic.Int32 // requests that went through hotpath's engine
	s := &Server{
		TLSConfig:    &tls.Config{Certificates: []tls.Certificate{cert}},
		ErrorLog:     discardLog,
		HTTP2HandOff: true,
		ConnState: func(_ net.Conn, st ConnState) {
			if st == StateActive {
				engineRequests.Add(1)
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s tls=%v", r.Proto, r.TLS != nil && r.TLS.HandshakeComplete)
		}),
	}
	addr := startTLS(t, s)
	get := func(h2 bool) string {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Proto + " " + string(b)
	}
	if got := get(false); got != "HTTP/1.1 HTTP/1.1 tls=true" {
		t.Errorf("HTTP/1.1 over TLS: %q", got)
	}
	if engineRequests.Load() == 0 {
		t.Error("HTTP/1.1 over TLS did not go through hotpath's engine")
	}
	before := engineRequests.Load()
	if got := get(true); got != "HTTP/2.0 HTTP/2.0 tls=true" {
		t.Errorf("HTTP/2 over TLS: %q", got)
	}
	if engineRequests.Load() != before {
		t.Error("an h2 connection was served by the HTTP/1.1 engine")
	}
}

// A Native server over TLS offers h2 (served by the native HTTP/2
// engine) and http/1.1; with HTTP2HandOff, whose net/http server has no
// native API, http/1.1 alone.
//
// Modes: the choice between engines itself (ALPN, the h2c preface,
// HTTP2HandOff), which the matrix's modes take as given.
func TestTLSNativeAPIProtocols(t *testing.T) {
	for _, handOff := range []bool{false, true} {
		cert, pool := testCert(t)
		addr := startTLS(t, &Server{
			TLSConfig:    &tls.Config{Certificates: []tls.Certificate{cert}},
			Native:       func(c *Ctx) { c.WriteString("native over TLS") },
			HTTP2HandOff: handOff,
		})
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		resp, err := (&http.Client{Transport: tr}).Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		want := map[bool]string{false: "HTTP/2.0", true: "HTTP/1.1"}[handOff]
		if resp.Proto != want || string(b) != "native over TLS" {
			t.Errorf("HTTP2HandOff=%v: %s %q, want %s", handOff, resp.Proto, b, want)
		}
	}
}

// Modes: the choice between engines itself (ALPN, the h2c preface,
// HTTP2HandOff), which the matrix's modes take as given.
func TestH2CPriorKnowledge(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	get := func(addr string, h2c bool) (string, error) {
		tr := &http.Transport{}
		if h2c {
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			tr.Protocols = &p
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), nil
	}
	on := startServer(t, &Server{Handler: h, Protocols: h2cProtocols()})
	if got, err := get(on, true); err != nil || got != "HTTP/2.0" {
		t.Errorf("h2c with UnencryptedHTTP2: %q %v", got, err)
	}
	if got, err := get(on, false); err != nil || got != "HTTP/1.1" {
		t.Errorf("HTTP/1.1 with UnencryptedHTTP2: %q %v", got, err)
	}
	off := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	if got, err := get(off, true); err == nil && got == "HTTP/2.0" {
		t.Errorf("h2c served without UnencryptedHTTP2")
	}
}

// TestTLSIdleConnectionsHoldNoBuffers: an idle TLS keep-alive connection
// waits for its next request without holding hotpath's buffers, and the
// next request is served whole.
//
// Modes: HTTP/1.1 over TLS: the HTTP/1.1 engine's buffer sets behind a TLS
// connection.
func TestTLSIdleConnectionsHoldNoBuffers(t *testing.T) {
	cert, pool := testCert(t)
	s := &Server{TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, ErrorLog: discardLog,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok "+r.URL.Path) })}
	addr := startTLS(t, s)
	var conns []*tls.Conn
	for i := 0; i < 10; i++ {
		tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer tc.Close()
		io.WriteString(tc, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, body := readResponse(t, bufio.NewReader(tc), "GET"); body != "ok /first" {
			t.Fatalf("first request: %q", body)
		}
		conns = append(conns, tc)
	}
	waitFor(t, "TLS connections to go idle without buffers", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for c := range s.conns {
			if ConnState(c.state.Load()) != StateIdle || heldBuffers(c) {
				return false
			}
		}
		return len(s.conns) == len(conns)
	})
	for _, tc := range conns {
		br := bufio.NewReader(tc)
		io.WriteString(tc, "GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
		if _, body := readResponse(t, br, "GET"); body != "ok /second" {
			t.Fatalf("after idling: %q", body)
		}
	}
}
