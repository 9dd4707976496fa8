package server

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestNativeAPIOnEveryMode: what a native handler (Server.Native) does
// reaches Go's client alike on every mode of the native API: the
// request's method, path, protocol, host, fields and query; the
// response's fields, a body echoed and one over MaxRequestBodyBytes
// (413 naming it), big bodies with and without a length, a flushed
// body, a trailer, HEAD, Error, a panic's 500, a body short of its
// length never read as complete; and the connection serves on after all
// of it.
func TestNativeAPIOnEveryMode(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16) // 100 KiB
	h := func(c *Ctx) {
		switch string(c.Path()) {
		case "/hello":
			c.SetContentType("text/plain; charset=utf-8")
			c.SetHeader("Cache-Control", "no-store")
			c.AddHeader("Set-Cookie", "a=1")
			c.AddHeader("Set-Cookie", "b=2")
			c.SetHeader("Connection", "keep-alive") // a connection field: HTTP/2 carries none
			fmt.Fprintf(c, "%s %s %s host=%s ua=%s q=%s", c.Method(), c.Path(), c.Proto(), c.Host(), c.RequestHeader("User-Agent"), c.Query())
		case "/echo":
			b, err := c.ReadBody(nil)
			if err != nil {
				return // over the limit: the server answers 413
			}
			c.Write(b)
		case "/big":
			c.Write(big)
		case "/declared":
			c.SetContentLength(int64(len(big)))
			for i := 0; i < len(big); i += 10000 {
				c.Write(big[i:min(i+10000, len(big))])
			}
		case "/flush":
			c.WriteString("first ")
			c.Flush()
			c.WriteString("second")
		case "/trailer":
			c.SetTrailer("Grpc-Status", "0")
			c.WriteString("with trailer")
		case "/missing":
			c.Error(http.StatusNotFound, "no such thing")
		case "/panic":
			panic("boom")
		case "/short":
			c.SetContentLength(10)
			c.WriteString("abc") // fewer than declared: never complete
		}
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{MaxRequestBodyBytes: 1 << 20}, nil, h)
		proto := "HTTP/1.1"
		if m.isH2() {
			proto = "HTTP/2.0"
		}
		do := func(method, path string, body io.Reader) (*http.Response, string, error) {
			req, err := http.NewRequest(method, base+path, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("User-Agent", "native-test")
			resp, err := c.Do(req)
			if err != nil {
				return nil, "", err
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.Proto != proto {
				t.Fatalf("%s %s: %s, want %s", method, path, resp.Proto, proto)
			}
			return resp, string(b), err
		}
		resp, body, err := do("GET", "/hello?x=1", nil)
		if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "GET /hello "+proto+" host=127.0.0.1:") ||
			!strings.HasSuffix(body, " ua=native-test q=x=1") || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
			resp.Header.Get("Cache-Control") != "no-store" || len(resp.Header["Set-Cookie"]) != 2 ||
			resp.ContentLength != int64(len(body)) || resp.Header.Get("Date") == "" {
			t.Errorf("hello: %v %v %q %v", err, resp.StatusCode, body, resp.Header)
		}
		// HTTP/2 has no connection-specific fields (RFC 9113 §8.2.2): the
		// handler's Connection is left out. HTTP/1.1 carries it, and
		// keep-alive keeps the connection, as the client assumes anyway.
		if m.isH2() && resp.Header.Get("Connection") != "" {
			t.Errorf("hello: Connection %q sent over HTTP/2", resp.Header.Get("Connection"))
		}
		payload := strings.Repeat("p", 300<<10)
		if resp, body, err := do("POST", "/echo", strings.NewReader(payload)); err != nil || resp.StatusCode != 200 || body != payload {
			t.Errorf("echo: %v %v %d bytes", err, resp, len(body))
		}
		if resp, body, err := do("POST", "/echo", strings.NewReader(strings.Repeat("p", 2<<20))); err != nil || resp.StatusCode != 413 || !strings.Contains(body, "MaxRequestBodyBytes") {
			t.Errorf("echo over the limit: %v %v %q", err, resp, body)
		}
		for _, path := range []string{"/big", "/declared"} {
			resp, body, err := do("GET", path, nil)
			if err != nil || resp.StatusCode != 200 || sha256.Sum256([]byte(body)) != sha256.Sum256(big) {
				t.Errorf("%s: %v %v %d bytes", path, err, resp, len(body))
			}
			if path == "/declared" && resp.ContentLength != int64(len(big)) {
				t.Errorf("%s: Content-Length %d", path, resp.ContentLength)
			}
		}
		if resp, body, err := do("GET", "/flush", nil); err != nil || body != "first second" || resp.ContentLength != -1 {
			t.Errorf("flush: %v %q %d", err, body, resp.ContentLength)
		}
		if resp, body, err := do("GET", "/trailer", nil); err != nil || body != "with trailer" || resp.Trailer.Get("Grpc-Status") != "0" {
			t.Errorf("trailer: %v %q %v", err, body, resp.Trailer)
		}
		if resp, body, err := do("HEAD", "/big", nil); err != nil || body != "" || resp.StatusCode != 200 {
			t.Errorf("HEAD: %v %q %v", err, body, resp)
		}
		if resp, body, err := do("GET", "/missing", nil); err != nil || resp.StatusCode != 404 || body != "no such thing" {
			t.Errorf("missing: %v %v %q", err, resp, body)
		}
		if resp, body, err := do("GET", "/panic", nil); err != nil || resp.StatusCode != 500 {
			t.Errorf("panic: %v %v %q", err, resp, body)
		}
		if _, _, err := do("GET", "/short", nil); err == nil {
			t.Errorf("a body shorter than its declared length read as complete")
		}
		// The server serves on after all that.
		if resp, _, err := do("GET", "/hello", nil); err != nil || resp.StatusCode != 200 {
			t.Errorf("after: %v %v", err, resp)
		}
	}, nativeModes()...)
}
