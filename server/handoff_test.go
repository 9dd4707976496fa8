package server

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// h2Clients returns an HTTP/1.1 and an HTTP/2 client for a server: over
// TLS (pool set), or cleartext with prior knowledge (h2c).
func h2Clients(t *testing.T, pool *x509.CertPool) (h1, h2 *http.Client) {
	one := &http.Transport{TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	two := &http.Transport{ForceAttemptHTTP2: true}
	if pool != nil {
		one.TLSClientConfig = &tls.Config{RootCAs: pool}
		two.TLSClientConfig = &tls.Config{RootCAs: pool}
	} else {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		two.Protocols = &p
	}
	t.Cleanup(one.CloseIdleConnections)
	t.Cleanup(two.CloseIdleConnections)
	return &http.Client{Transport: one, Timeout: 20 * time.Second}, &http.Client{Transport: two, Timeout: 20 * time.Second}
}

// startH2Both serves s over TLS, or cleartext with UnencryptedHTTP2, and
// returns the base URL and the two clients.
func startH2Both(t *testing.T, s *Server, cleartext bool) (string, *http.Client, *http.Client) {
	if cleartext {
		s.Protocols = h2cProtocols()
		h1, h2 := h2Clients(t, nil)
		return "http://" + startServer(t, s), h1, h2
	}
	cert, pool := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	h1, h2 := h2Clients(t, pool)
	return "https://" + startTLS(t, s), h1, h2
}

// echoSize answers with the protocol and the number of body bytes read.
var echoSize = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		return // over a limit: the server answers 413
	}
	fmt.Fprintf(w, "%d fields=%d", n, len(r.Header))
})

// TestH2SameLimitsAsHTTP1: on one Server, a request gets the same status
// over HTTP/2 (TLS and h2c) as over HTTP/1.1: big bodies with and
// without a limit, a declared or unknown length, many header fields.
//
// Modes: HTTP/1.1, HTTP/2 over TLS and h2c on one Server (startH2Both): it
// compares the protocols' answers to each other.
func TestH2SameLimitsAsHTTP1(t *testing.T) {
	many := func(n int) http.Header {
		h := http.Header{}
		for i := 0; i < n; i++ {
			h.Set(fmt.Sprintf("X-Field-%d", i), "v")
		}
		return h
	}
	cases := []struct {
		name   string
		limit  int64
		body   int
		hidden bool // length not declared
		hdr    http.Header
		want   int
	}{
		{"20MB-no-limit", 0, 20 << 20, false, nil, 200},
		{"20MB-no-limit-unknown-length", 0, 20 << 20, true, nil, 200},
		{"20MB-over-1MB-limit", 1 << 20, 20 << 20, false, nil, 413},
		{"20MB-over-1MB-limit-unknown-length", 1 << 20, 20 << 20, true, nil, 413},
		{"under-limit", 1 << 20, 1000, true, nil, 200},
		{"150-fields", 0, 0, false, many(150), 200},
		{"600-fields", 0, 0, false, many(600), 431},
	}
	for _, native := range []bool{false, true} {
		for _, cleartext := range []bool{false, true} {
			for _, tc := range cases {
				name := tc.name + map[bool]string{false: "/tls", true: "/h2c"}[cleartext] + map[bool]string{false: "", true: "/native"}[native]
				t.Run(name, func(t *testing.T) {
					url, h1, h2 := startH2Both(t, &Server{Handler: echoSize, MaxRequestBodyBytes: tc.limit, ErrorLog: discardLog, HTTP2HandOff: !native}, cleartext)
					var got []string
					for _, c := range []*http.Client{h1, h2} {
						var body io.Reader = bytes.NewReader(make([]byte, tc.body))
						if tc.hidden {
							body = io.MultiReader(body)
						}
						req, _ := http.NewRequest("POST", url+"/", body)
						for k, v := range tc.hdr {
							req.Header[k] = v
						}
						resp, err := c.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if resp.StatusCode != tc.want {
							t.Errorf("%s: %d %q, want %d", resp.Proto, resp.StatusCode, b, tc.want)
						}
						if tc.want == 413 && !strings.Contains(string(b), "MaxRequestBodyBytes") {
							t.Errorf("%s: 413 without its reason: %q", resp.Proto, b)
						}
						got = append(got, fmt.Sprintf("%s %d", resp.Proto, resp.StatusCode))
					}
					if got[0] != "HTTP/1.1 "+fmt.Sprint(tc.want) || got[1] != "HTTP/2.0 "+fmt.Sprint(tc.want) {
						t.Errorf("got %q", got)
					}
				})
			}
		}
	}
}
