package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"
)

// http.TimeoutHandler: its inner handler runs on a goroutine of its own
// and may still be reading the request body after the timeout answered
// and the server went on.

// TestTimeoutHandlerBodyRace: http.TimeoutHandler's inner handler keeps
// reading the body after the timeout answered 503, while the server
// finishes the request (HTTP/1.1 discards the rest of the body, HTTP/2
// ends the stream): under -race this was a data race. The inner read
// ends, and the client's next request is served. On every http.Handler
// mode (the native API has no TimeoutHandler).
func TestTimeoutHandlerBodyRace(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // no timing but the 20 ms timeout's, which a slow machine only makes likelier
		innerDone := make(chan struct{})
		h := http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != "POST" {
				io.WriteString(w, "next")
				return
			}
			defer close(innerDone)
			buf := make([]byte, 100)
			for {
				if _, err := r.Body.Read(buf); err != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}), 20*time.Millisecond, "slow")
		base, c := m.serve(t, &Server{}, h, nil)
		req, _ := http.NewRequest("POST", base+"/", bytes.NewReader(bytes.Repeat([]byte("a"), 20000)))
		if resp, body := mustDo(t, c, req); resp.StatusCode != 503 || string(body) != "slow" {
			t.Fatalf("%d %q, want 503 slow", resp.StatusCode, body)
		}
		select {
		case <-innerDone:
		case <-time.After(10 * time.Second):
			t.Fatal("the inner handler's body read did not end")
		}
		if resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/")); resp.StatusCode != 200 || string(body) != "next" {
			t.Fatalf("next request: %d %q", resp.StatusCode, body)
		}
	}, handlerModes()...)
}

// TestTimeoutHandlerPausedBody: http.TimeoutHandler's inner handler is
// blocked in a large body read when the timeout answers, and the client
// has paused mid-body: the 503 goes out at once, as on net/http, not
// after the read's stall timeout (30 s here: the cut that ends the inner
// read was taken for a stall to wait out once more). Then HTTP/1.1 ends
// the connection (Connection: close), as where the body stopped is
// unknown; HTTP/2 ends the stream alone, and the connection serves the
// next request. On every http.Handler mode (the native API has no
// TimeoutHandler).
func TestTimeoutHandlerPausedBody(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // bounded waits only
		h := http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != "POST" {
				io.WriteString(w, "next")
				return
			}
			buf := make([]byte, 64<<10)
			for {
				if _, err := r.Body.Read(buf); err != nil {
					return
				}
			}
		}), 20*time.Millisecond, "slow")
		base, c := m.serve(t, &Server{ReadStallTimeout: 30 * time.Second}, h, nil)
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.Close() })
		go pw.Write(make([]byte, 10000)) // then the client pauses
		var first, next string
		trace := func(local *string) context.Context {
			return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) { *local = ci.Conn.LocalAddr().String() },
			})
		}
		ctx, cancel := context.WithTimeout(trace(&first), 10*time.Second) // well before the stall timeout
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/", pr)
		req.ContentLength = 1000000
		resp, body := mustDo(t, c, req)
		if resp.StatusCode != 503 || string(body) != "slow" {
			t.Fatalf("%d %q, want 503 slow", resp.StatusCode, body)
		}
		if resp.Close == m.isH2() {
			t.Errorf("Connection: close %v on %s; want it on HTTP/1.1 alone", resp.Close, resp.Proto)
		}
		req, _ = http.NewRequestWithContext(trace(&next), "GET", base+"/", nil)
		if resp, body := mustDo(t, c, req); resp.StatusCode != 200 || string(body) != "next" {
			t.Fatalf("next request: %d %q", resp.StatusCode, body)
		}
		if m.isH2() && next != first {
			t.Errorf("HTTP/2: the next request needed a new connection; the 503 ends its stream alone")
		}
	}, handlerModes()...)
}
