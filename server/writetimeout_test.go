package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestWriteTimeoutCutsLateAnswer: WriteTimeout bounds each response, from
// the end of its request head, on every mode and both APIs: an answer a
// handler writes after it never reads as complete, and the server serves
// the next request. On HTTP/2 the late stream alone is reset and the
// next request goes on the same connection; on HTTP/1.1 the failed write
// ends the connection, as on net/http, and the next request takes a new
// one. (A long stream cut by WriteTimeout however it moves:
// TestDropInAbsoluteWriteTimeout.)
func TestWriteTimeoutCutsLateAnswer(t *testing.T) {
	// Long enough for a prompt answer on a loaded machine (-race beside
	// busy loops: 50 ms was not), short enough for ten modes.
	const timeout = 300 * time.Millisecond
	late := func(path string) {
		if path == "/late" {
			time.Sleep(3 * timeout) // past WriteTimeout, counted from before the handler ran
		}
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		late(r.URL.Path)
		io.WriteString(w, "answer")
	})
	nh := func(c *Ctx) {
		late(string(c.Path()))
		c.WriteString("answer")
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{WriteTimeout: timeout}, h, nh)
		// get sends GET path and returns the body, the error that ended
		// it, and the local address of the connection it went out on.
		get := func(path string) ([]byte, string, error) {
			var addr string
			trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { addr = ci.Conn.LocalAddr().String() }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", base+path, nil)
			resp, err := c.Do(req)
			if err != nil {
				return nil, addr, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return b, addr, err
		}
		if b, _, err := get("/"); err != nil || string(b) != "answer" {
			t.Fatalf("a prompt answer: %q, %v", b, err)
		}
		b, lateConn, err := get("/late")
		if err == nil {
			t.Fatalf("an answer written after WriteTimeout read as complete: %q", b)
		}
		b, nextConn, err := get("/")
		if err != nil || string(b) != "answer" {
			t.Fatalf("the request after the late one: %q, %v", b, err)
		}
		switch {
		case m.isH2() && nextConn != lateConn:
			t.Errorf("the next request needed a new HTTP/2 connection; WriteTimeout costs the late stream only")
		case !m.isH2() && nextConn == lateConn:
			t.Errorf("the next request reused the HTTP/1.1 connection whose write failed")
		}
	})
}
