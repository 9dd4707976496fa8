package server

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// TestNativeAbsoluteFormAndOptionsStar: the native API answers OPTIONS *
// itself (200, no body), as the handler API (and net/http) do, on every
// native mode; and on HTTP/1.1, cleartext and TLS, routes an
// absolute-form target by its path. (Absolute form is HTTP/1.1's: an
// HTTP/2 request carries :authority and an origin-form :path apart.)
func TestNativeAbsoluteFormAndOptionsStar(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, nil, func(c *Ctx) {
			if string(c.Path()) != "/x" {
				c.Error(404, "no route for "+string(c.Path()))
				return
			}
			c.WriteString("routed /x")
		})
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		req := &http.Request{Method: "OPTIONS", URL: &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: "*"},
			Host: u.Host, Header: http.Header{}}
		if resp, body := mustDo(t, c, req); resp.StatusCode != 200 || resp.ContentLength != 0 || len(body) != 0 {
			t.Errorf("OPTIONS *: %d CL=%d %q", resp.StatusCode, resp.ContentLength, body)
		}
		if m.isH2() {
			return
		}
		nc := m.dialRaw(t, base, c)
		br := bufio.NewReader(nc)
		io.WriteString(nc, "GET http://example.com/x?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "routed /x" {
			t.Fatalf("absolute-form: %d %q", resp.StatusCode, body)
		}
		if resp, body := readResponse(t, br, "OPTIONS"); resp.StatusCode != 200 || resp.ContentLength != 0 || body != "" {
			t.Fatalf("OPTIONS * pipelined after it: %d CL=%d %q", resp.StatusCode, resp.ContentLength, body)
		}
	}, nativeModes()...)
}
