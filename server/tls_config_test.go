package server

import (
	"crypto/tls"
	"net/http"
	"testing"
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
