package server

import (
	"net/http"
	"strings"
	"testing"
)

var helloBody = []byte("Hello, World!")

func helloNative(c *Ctx) {
	c.SetContentType("text/plain; charset=utf-8")
	c.SetHeader("Cache-Control", "public, max-age=30")
	c.Write(helloBody)
}

const wrkGET = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

const browserGET = "GET /api/v1/users/42?fields=name,email HTTP/1.1\r\n" +
	"Host: api.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Cookie: session=0123456789abcdef; theme=dark\r\n" +
	"Referer: https://example.com/\r\n" +
	"Cache-Control: no-cache\r\n" +
	"Connection: keep-alive\r\n\r\n"

const postJSON = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"message\":\"Hello, World!\"}"

// allocsPerRequest returns the allocations one extra request costs on a
// connection, excluding the connection's own setup: the difference between
// a connection serving 2n and n requests, divided by n.
func allocsPerRequest(t *testing.T, h func(*Ctx), req string, pipelined bool) float64 {
	skipUnderRace(t)
	run := func(n int) float64 {
		return testing.AllocsPerRun(5, func() {
			f := &fakeConn{input: []byte(req), repeat: n}
			if !pipelined {
				f.readSize = len(req)
			}
			serveFake(&Server{Native: h}, f)
		})
	}
	const n = 1000
	return (run(2*n) - run(n)) / n
}

func TestNativeZeroAllocsPerRequest(t *testing.T) {
	echo := func(c *Ctx) {
		var buf [64]byte
		b, _ := c.ReadBody(buf[:0])
		c.SetContentType("application/json")
		c.Write(b)
	}
	cases := []struct {
		name string
		h    func(*Ctx)
		req  string
	}{
		{"hello/wrk", helloNative, wrkGET},
		{"hello/browser", helloNative, browserGET},
		{"post-echo", echo, postJSON},
		{"chunked-echo", echo, "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
		{"http10-keepalive", helloNative, "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
	}
	for _, tc := range cases {
		for _, pipelined := range []bool{false, true} {
			name := tc.name
			if pipelined {
				name += "/pipelined"
			}
			t.Run(name, func(t *testing.T) {
				if got := allocsPerRequest(t, tc.h, tc.req, pipelined); got > 0 {
					t.Errorf("%.3f allocs per request, want 0", got)
				}
			})
		}
	}
}

// BenchmarkServerNative measures the engine's CPU per request with the
// network taken out: a fake connection replays requests from memory, as
// fasthttp's own server benchmarks do. One op is one request.
func BenchmarkServerNative(b *testing.B) {
	for _, bc := range []struct {
		name      string
		req       string
		pipelined bool
	}{
		{"wrk-GET", wrkGET, false},
		{"wrk-GET-pipelined", wrkGET, true},
		{"browser-GET", browserGET, false},
		{"POST-JSON", postJSON, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := helloNative
			if strings.HasPrefix(bc.req, "POST") {
				h = func(c *Ctx) {
					var buf [64]byte
					body, _ := c.ReadBody(buf[:0])
					c.Write(body)
				}
			}
			f := &fakeConn{input: []byte(bc.req), repeat: b.N}
			if !bc.pipelined {
				f.readSize = len(bc.req)
			}
			b.ReportAllocs()
			b.ResetTimer()
			serveFake(&Server{Native: h}, f)
		})
	}
}

// allocsPerHandlerRequest is allocsPerRequest for an http.Handler served
// through the adapter.
func allocsPerHandlerRequest(t *testing.T, h http.Handler, req string) float64 {
	skipUnderRace(t)
	run := func(n int) float64 {
		return testing.AllocsPerRun(5, func() {
			f := &fakeConn{input: []byte(req), repeat: n, readSize: len(req)}
			serveFake(&Server{Handler: h}, f)
		})
	}
	const n = 1000
	return (run(2*n) - run(n)) / n
}

func helloHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write(helloBody)
}

// TestHandlerAllocsPerRequest pins the allocations per request through
// the adapter (net/http: 21-36; the budget is 5). Three are the adapter's:
// the *http.Request, its Header map, and one block holding the context, the
// URL and the header values. helloHandler's Header().Set is a fourth, and
// a ServeMux wildcard adds ServeMux's own.
func TestHandlerAllocsPerRequest(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", helloHandler)
	mux.HandleFunc("GET /api/v1/users/{id}", helloHandler)
	cases := []struct {
		name string
		h    http.Handler
		req  string
		max  float64
	}{
		{"HandlerFunc/wrk", http.HandlerFunc(helloHandler), wrkGET, 4},
		{"HandlerFunc/browser", http.HandlerFunc(helloHandler), browserGET, 5},
		{"ServeMux/wrk", mux, wrkGET, 4},
		{"ServeMux/path-value", mux, browserGET, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := allocsPerHandlerRequest(t, tc.h, tc.req)
			t.Logf("%.2f allocs per request", got)
			if got > tc.max+0.01 {
				t.Errorf("%.2f allocs per request, want ≤ %v", got, tc.max)
			}
		})
	}
}

// BenchmarkServerHandler is BenchmarkServerNative through the
// http.Handler adapter.
func BenchmarkServerHandler(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", helloHandler)
	mux.HandleFunc("GET /api/v1/users/{id}", helloHandler)
	for _, bc := range []struct {
		name string
		h    http.Handler
		req  string
	}{
		{"HandlerFunc/wrk-GET", http.HandlerFunc(helloHandler), wrkGET},
		{"ServeMux/wrk-GET", mux, wrkGET},
		{"ServeMux/browser-GET", mux, browserGET},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := &fakeConn{input: []byte(bc.req), repeat: b.N, readSize: len(bc.req)}
			b.ReportAllocs()
			b.ResetTimer()
			serveFake(&Server{Handler: bc.h}, f)
		})
	}
}

func skipUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not exact under the race detector (sync.Pool drops items at random)")
	}
}
