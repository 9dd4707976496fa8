package server

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"
)

// ServeTLS with no certificate files and a TLSConfig whose only source
// of certificates is GetConfigForClient starts and serves, as net/http's
// does (it failed to start, looking for files "" and "").
//
// Modes: the TLS modes (HTTP/1.1 and HTTP/2, both APIs), each started by
// ServeTLS itself with the configuration under test: mode.serve installs
// a certificate of its own, which is what this test must not have.
func TestServeTLSCertificatesFromGetConfigForClient(t *testing.T) {
	for _, m := range allModes {
		if m.cleartext() || m.proto == "handoff" {
			continue
		}
		t.Run(m.String(), func(t *testing.T) {
			cert, pool := testCert(t)
			asked := make(chan string, 16)
			s := &Server{ErrorLog: discardLog, TLSConfig: &tls.Config{
				GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
					select {
					case asked <- hello.ServerName:
					default:
					}
					return &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: hello.SupportedProtos}, nil
				},
			}}
			if m.native {
				s.Native = func(c *Ctx) { c.Write(c.Proto()) }
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) })
			}
			base := "https://" + startTLS(t, s)
			one, two := h2Clients(t, pool)
			c, want := one, "HTTP/1.1"
			if m.isH2() {
				c, want = two, "HTTP/2.0"
			}
			_, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
			if string(body) != want {
				t.Errorf("served over %q, want %s", body, want)
			}
			if len(asked) == 0 {
				t.Error("GetConfigForClient was not called: the certificate came from elsewhere")
			}
		})
	}
}

// A protocol negotiated by ALPN that nothing serves (advertised in
// TLSConfig.NextProtos, with no TLSNextProto entry) closes the
// connection after the handshake, as net/http's server does: the client
// expects that protocol, not HTTP/1.1. One that offers nothing, or
// http/1.1, is served.
//
// Modes: HTTP/1.1 over TLS, both APIs, with raw TLS connections: ALPN's
// outcome is what is tested, and each case offers its own protocols.
func TestUnservedALPNProtocolCloses(t *testing.T) {
	for _, native := range []bool{false, true} {
		t.Run(mode{"https1", native}.String(), func(t *testing.T) {
			cert, pool := testCert(t)
			s := &Server{ErrorLog: discardLog, TLSConfig: &tls.Config{
				Certificates: []tls.Certificate{cert},
				NextProtos:   []string{"unhandled-proto", "http/1.1"},
			}}
			if native {
				s.Native = func(c *Ctx) { c.Write([]byte("served")) }
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) })
			}
			addr := startTLS(t, s)
			for _, offer := range [][]string{{"unhandled-proto"}, {"http/1.1"}, nil} {
				tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: offer})
				if err != nil {
					t.Fatalf("offering %q: %v", offer, err)
				}
				tc.SetDeadline(time.Now().Add(10 * time.Second))
				io.WriteString(tc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
				switch {
				case len(offer) == 1 && offer[0] == "unhandled-proto":
					if err == nil {
						t.Errorf("negotiated %q, nothing serves it: got %s, want the connection closed", tc.ConnectionState().NegotiatedProtocol, resp.Status)
					}
				case err != nil:
					t.Errorf("offering %q: %v, want a response", offer, err)
				case resp.StatusCode != 200:
					t.Errorf("offering %q: %s, want 200", offer, resp.Status)
				}
				tc.Close()
			}
		})
	}
}
