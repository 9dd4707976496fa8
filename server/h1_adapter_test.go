package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
)

// startBoth serves h on hotpath's adapter and on net/http, returning both
// addresses: every behaviour test runs against both and compares.
func startBoth(t *testing.T, h http.Handler) (hotpath, nethttp string) {
	t.Helper()
	hotpath = startServer(t, &Server{Handler: h})
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = discardLog
	ts.Start()
	t.Cleanup(ts.Close)
	return hotpath, ts.Listener.Addr().String()
}

// exchangeRaw sends raw on a new connection and returns up to n
// responses, described, read until the server closes or stops answering.
func exchangeRaw(t *testing.T, addr, raw string, method string, n int) []string {
	t.Helper()
	return exchangeWith(t, addr, raw, method, n, describe)
}

// exchangeWith is exchangeRaw with its own description of a response.
func exchangeWith(t *testing.T, addr, raw, method string, n int, desc func(*http.Response, []byte, error) string) []string {
	t.Helper()
	nc := dial(t, addr)
	io.WriteString(nc, raw)
	br := bufio.NewReader(nc)
	var out []string
	for len(out) < n {
		nc.SetReadDeadline(time.Now().Add(2 * time.Second))
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return out
		}
		body, err := io.ReadAll(resp.Body)
		out = append(out, desc(resp, body, err))
		if resp.Close {
			return out
		}
	}
	return out
}

// describe renders what a client can observe of a response, minus Date.
func describe(resp *http.Response, body []byte, err error) string {
	var keys []string
	for k := range resp.Header {
		if k != "Date" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d", resp.StatusCode)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, resp.Header[k])
	}
	fmt.Fprintf(&b, " CL=%d TE=%v trailer=%v body=%q err=%v", resp.ContentLength, resp.TransferEncoding, resp.Trailer, body, err)
	return b.String()
}

func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Hello, World!") })
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "user %s pattern %s", r.PathValue("id"), r.Pattern)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k+"="+strings.Join(r.Header[k], ","))
		}
		sort.Strings(keys)
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "uri": r.RequestURI, "path": r.URL.Path, "query": r.URL.RawQuery,
			"proto": r.Proto, "host": r.Host, "headers": keys, "body": string(body), "err": fmt.Sprint(err),
			"cl": r.ContentLength, "te": r.TransferEncoding, "close": r.Close,
		})
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<!DOCTYPE html><p>hi") })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 5000))) })
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Custom", "v")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "short")
	})
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "data")
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusForbidden) })
	mux.HandleFunc("/nodate", func(w http.ResponseWriter, r *http.Request) { w.Header()["Date"] = nil; io.WriteString(w, "x") })
	mux.HandleFunc("/setlength", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		w.Write([]byte(strings.Repeat("y", 5000)))
	})
	mux.HandleFunc("/limit", func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "too big", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "ok")
	})
	return mux
}

// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterMatchesNetHTTP(t *testing.T) {
	hp, nh := startBoth(t, testMux())
	requests := []struct{ name, raw, method string }{
		{"hello", "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"path value", "GET /users/42 HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"method mismatch", "POST /users/42 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "POST"},
		{"not found", "GET /missing HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"echo", "POST /echo?a=1&b=%20 HTTP/1.1\r\nHost: example.com\r\nX-Multi: 1\r\nX-Multi: 2\r\nx-lower: v\r\nContent-Length: 5\r\n\r\nhello", "POST"},
		{"echo chunked", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", "POST"},
		{"echo escaped path", "GET /echo%2Fx HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"echo absolute-form", "GET http://other.example/echo?q HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"echo HTTP/1.0", "GET /echo HTTP/1.0\r\n\r\n", "GET"},
		{"sniff html", "GET /html HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"big chunked", "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"big HTTP/1.0", "GET /big HTTP/1.0\r\n\r\n", "GET"},
		{"status", "GET /status HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"no content", "GET /nocontent HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"empty", "GET /empty HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"HEAD hello", "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD"},
		{"HEAD big", "HEAD /big HTTP/1.1\r\nHost: x\r\n\r\n", "HEAD"},
		{"trailers", "GET /trailers HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"http.Error", "GET /error HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"no Date", "GET /nodate HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"set Content-Length", "GET /setlength HTTP/1.1\r\nHost: x\r\n\r\n", "GET"},
		{"MaxBytesReader", "POST /limit HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n01234567890123456789", "POST"},
		{"pipelined", "GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /users/7 HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "GET"},
	}
	for _, rq := range requests {
		t.Run(rq.name, func(t *testing.T) {
			n := strings.Count(rq.raw, " HTTP/1.")
			got := exchangeRaw(t, hp, rq.raw, rq.method, n)
			want := exchangeRaw(t, nh, rq.raw, rq.method, n)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("hotpath:\n%s\nnet/http:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestAdapterHijackWebSocketHandshake: a handler hijacks the connection
// for a WebSocket handshake and reads, through the hijacked buffers, the
// bytes the client sent with its request. On both HTTP/1.1 modes of the
// http.Handler API: Hijack and the Upgrade handshake exist only on
// HTTP/1.1 (Go's HTTP/2 client refuses to send Upgrade, and HTTP/2's
// ResponseWriter has no Hijack).
func TestAdapterHijackWebSocketHandshake(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "want an upgrade", 400)
			return
		}
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		// As on net/http, the bytes already read are in the buffer: an
		// upgrader that reads them first and then the socket (package
		// websocket does) loses none. The client sent them in the
		// request's write.
		if n := brw.Reader.Buffered(); n != len("early bytes\n") {
			t.Errorf("Buffered after Hijack = %d, want %d", n, len("early bytes\n"))
		}
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
		brw.Flush()
		// Echo one line, including bytes the client sent with the request.
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, h, nil)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nearly bytes\n")
		br := bufio.NewReader(nc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("handshake: %v %v", resp, err)
		}
		line, _ := br.ReadString('\n')
		if line != "echo: early bytes\n" {
			t.Fatalf("after hijack: %q", line)
		}
	}, mode{proto: "h1"}, mode{proto: "https1"})
}

var discardLog = newDiscardLogger()

// TestAdapterWatcherStopsForNextRequest: a handler that waits on its
// context and returns normally leaves the connection usable.
//
// Modes: HTTP/1.1, raw bytes: the disconnect watcher is HTTP/1.1's
// (h1_watch.go); HTTP/2 ends a stream by its frames.
func TestAdapterWatcherStopsForNextRequest(t *testing.T) {
	addr := startServer(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(20 * time.Millisecond):
		}
		io.WriteString(w, "ok "+r.URL.Path)
	})})
	nc := dial(t, addr)
	br := bufio.NewReader(nc)
	for i := 0; i < 3; i++ {
		fmt.Fprintf(nc, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		if _, body := readResponse(t, br, "GET"); body != fmt.Sprintf("ok /%d", i) {
			t.Fatalf("request %d: %q", i, body)
		}
	}
}

// TestAdapterHijackAfterWriteHeader101: the upgrade style that writes
// the 101 through the ResponseWriter and then hijacks, as
// coder/websocket does; the same test runs on net/http.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterHijackAfterWriteHeader101(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		w.WriteHeader(http.StatusSwitchingProtocols)
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		line, _ := brw.ReadString('\n')
		brw.WriteString("echo: " + line)
		brw.Flush()
	})
	hp, nh := startBoth(t, h)
	for _, addr := range []string{hp, nh} {
		nc := dial(t, addr)
		io.WriteString(nc, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(nc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "websocket" || resp.Header.Get("Connection") != "Upgrade" {
			t.Fatalf("%s: %v %v", addr, resp, err)
		}
		io.WriteString(nc, "ping\n")
		if line, _ := br.ReadString('\n'); line != "echo: ping\n" {
			t.Fatalf("%s: after upgrade %q", addr, line)
		}
	}
}
