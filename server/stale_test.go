package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// A ResponseWriter (and *http.Request) that a handler's goroutine keeps
// past the handler's return, which net/http forbids, is a common bug:
// a late log line written into w, a late Header().Set, Flush, Hijack, a
// late r.Body.Read. On net/http each request has its own response, so
// late use only touches that finished request. hotpath reuses its
// HTTP/1.1 writer for the connection's next request: late use must
// still reach only the finished request (fail, or do nothing), never the
// response the connection serves next, nor race with it.

// staleUse makes every call a goroutine that kept w and r might make
// after the handler returned, while another request runs on the same
// connection, and returns what went wrong: a panic, or a call that
// reported success. Deadlines may also be no-ops (HTTP/2's stream ended:
// the next request's checks show they reached nothing else). On the
// hand-off (netHTTP) the calls are net/http's HTTP/2 server's, which
// panics on a late Write or Header, in the goroutine that kept w: only
// what reaches the next response is checked there.
func staleUse(w http.ResponseWriter, r *http.Request, netHTTP, deadlinesNoOp bool) []string {
	var bad []string
	try := func(what string, f func() error) {
		defer func() {
			if p := recover(); p != nil && !netHTTP {
				bad = append(bad, fmt.Sprintf("%s panicked: %v", what, p))
			}
		}()
		if err := f(); err == nil && !netHTTP {
			bad = append(bad, what+" succeeded")
		}
	}
	done := func(f func()) func() error { // a call with no error to return
		return func() error { f(); return fmt.Errorf("no-op") }
	}
	deadline := func(set func(time.Time) error) func() error {
		if !deadlinesNoOp {
			return func() error { return set(time.Now().Add(-time.Second)) }
		}
		return done(func() { set(time.Now().Add(-time.Second)) })
	}
	rc := http.NewResponseController(w)
	try("Header().Set", done(func() { w.Header().Set("X-Leak", "1") }))
	try("WriteHeader", done(func() { w.WriteHeader(http.StatusInternalServerError) }))
	try("Write", func() error { _, err := w.Write([]byte("LEAK")); return err })
	try("WriteString", func() error { _, err := io.WriteString(w, "LEAK"); return err })
	try("ReadFrom", func() error { _, err := io.Copy(w, strings.NewReader("LEAK")); return err })
	try("Flush", rc.Flush)
	try("SetReadDeadline", deadline(rc.SetReadDeadline))
	try("SetWriteDeadline", deadline(rc.SetWriteDeadline))
	try("EnableFullDuplex", done(func() { rc.EnableFullDuplex() }))
	try("Body.Read", func() error { _, err := r.Body.Read(make([]byte, 4)); return err })
	try("Context", func() error { return r.Context().Err() })
	try("Hijack", func() error {
		nc, _, err := rc.Hijack()
		if err == nil {
			nc.Close()
		}
		return err
	})
	return bad
}

// staleHandler answers "/1" at once, keeping w and r (sent on kept),
// "/2" only once proceed is closed, after it signalled started (201, an
// X-Two field and its body echoed), and any other path with the path.
func staleHandler(kept chan<- [2]any, started chan<- struct{}, proceed <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/1":
			kept <- [2]any{w, r}
			io.WriteString(w, "one")
			return
		case "/2":
		default:
			io.WriteString(w, r.URL.Path)
			return
		}
		started <- struct{}{}
		<-proceed
		b, err := io.ReadAll(r.Body)
		w.Header().Set("X-Two", "2")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "two:%s:%v", b, err)
	})
}

// checkSecond checks the second response: handler 2's alone.
func checkSecond(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Two") != "2" {
		t.Errorf("second response: %d, X-Two %q; want 201 and 2", resp.StatusCode, resp.Header.Get("X-Two"))
	}
	if resp.Header.Get("X-Leak") != "" || strings.Contains(string(body), "LEAK") {
		t.Errorf("the first request's writer reached the second response: %v %q", resp.Header, body)
	}
	if string(body) != "two:second-body:<nil>" {
		t.Errorf("second body %q, want %q", body, "two:second-body:<nil>")
	}
}

// TestStaleResponseWriter: a ResponseWriter and Request kept past their
// handler's return, used while the connection's next request runs
// (keep-alive on HTTP/1.1, another stream of the connection on HTTP/2),
// fail or do nothing, and the next response is its handler's alone.
func TestStaleResponseWriter(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		kept := make(chan [2]any, 1)
		started, proceed := make(chan struct{}), make(chan struct{})
		s := &Server{noIdlePark: true} // the same adapter serves the next request
		base, client := m.serve(t, s, staleHandler(kept, started, proceed), nil)

		resp, body := mustDo(t, client, mustBodyRequest(t, base+"/1", "first-body"))
		if resp.StatusCode != 200 || string(body) != "one" {
			t.Fatalf("first response: %d %q", resp.StatusCode, body)
		}
		k := <-kept
		w, r := k[0].(http.ResponseWriter), k[1].(*http.Request)

		type result struct {
			resp   *http.Response
			body   []byte
			reused bool
			err    error
		}
		res := make(chan result, 1)
		go func() {
			var got result
			trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got.reused = i.Reused }}
			req := mustBodyRequest(t, base+"/2", "second-body")
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			got.resp, got.err = client.Do(req)
			if got.err == nil {
				got.body, got.err = io.ReadAll(got.resp.Body)
				got.resp.Body.Close()
			}
			res <- got
		}()
		select {
		case <-started:
		case got := <-res:
			t.Fatalf("second request ended before its handler ran: %v", got.err)
		}
		for _, b := range staleUse(w, r, m.isHandoff(), m.isH2()) {
			t.Error(b)
		}
		close(proceed)
		got := <-res
		if got.err != nil {
			t.Fatalf("second request: %v", got.err)
		}
		if !got.reused {
			t.Errorf("the second request came on a new connection: the test proves nothing")
		}
		checkSecond(t, got.resp, got.body)
	}, handlerModes()...)
}

// mustBodyRequest is a POST of body to url.
func mustBodyRequest(t *testing.T, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// The requestWriter a handler is handed lives in its requestAlloc, the
// request's one block: keep that block within its size class (480 bytes
// on 64-bit platforms), so that the writer costs no memory either.
func TestRequestAllocSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("64-bit layout")
	}
	if n := unsafe.Sizeof(requestAlloc{}); n > 480 {
		t.Errorf("requestAlloc is %d bytes, want at most 480", n)
	}
}
