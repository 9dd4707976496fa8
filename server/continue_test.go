package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Expect: 100-continue when the handler reads the body on a goroutine of
// its own (as httputil.ReverseProxy's transport does) while it writes the
// response: the 100 the read asks for races the final head.

// TestContinueFromAnotherGoroutine: the 100 Continue the body read
// triggers must not race the response (the race detector watches what
// they share), and must never follow the final head; the response and the
// body both arrive whole. On every http.Handler mode (the native API's
// Ctx is the handler's goroutine's alone), 50 times each.
//
// The client differs by protocol, each the one that sends the body
// whichever comes first: on HTTP/1.1 raw bytes, the body written once
// the first response is read (Go's client withholds the body for good
// when a final answer comes before the 100), a 100 after the final head
// read off the wire; on HTTP/2 Go's client, which sends the body when the
// 100 comes or its wait ends, and fails the stream on a 1xx HEADERS after
// the final one (it would be a trailer block without END_STREAM).
func TestContinueFromAnotherGoroutine(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // a race test: other modes' load varies its timing, no more
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			done := make(chan int64)
			go func() {
				n, _ := io.Copy(io.Discard, r.Body)
				done <- n
			}()
			w.Header().Set("X-Early", "1")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "early")
			w.(http.Flusher).Flush()
			if n := <-done; n != 5 {
				io.WriteString(w, " but the body was short")
			}
		})
		base, c := m.serve(t, &Server{}, h, nil)
		if m.isH2() {
			c.Transport.(*http.Transport).ExpectContinueTimeout = 5 * time.Millisecond
		}
		for i := range 50 {
			var status int
			var body string
			var early, after100 bool
			if m.isH2() {
				final := false
				trace := &httptrace.ClientTrace{
					Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
						after100 = after100 || final
						return nil
					},
				}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/", strings.NewReader("hello"))
				req.Header.Set("Expect", "100-continue")
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("try %d: %v", i, err)
				}
				final = true
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("try %d: body: %v (a 100 after the final head fails the stream)", i, err)
				}
				status, body, early = resp.StatusCode, string(b), resp.Header.Get("X-Early") == "1"
			} else {
				nc := m.dialRaw(t, base, c)
				io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
				br := bufio.NewReader(nc)
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("try %d: %v", i, err)
				}
				nc.Write([]byte("hello"))
				if resp.StatusCode == http.StatusContinue {
					if resp, err = http.ReadResponse(br, nil); err != nil {
						t.Fatalf("try %d: after 100: %v", i, err)
					}
				}
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("try %d: body: %v", i, err)
				}
				// Nothing may follow the response but its end (a stray
				// 100 Continue after the final head would be read here).
				nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				rest, _ := io.ReadAll(br)
				after100 = strings.Contains(string(rest), "100 Continue")
				status, body, early = resp.StatusCode, string(b), resp.Header.Get("X-Early") == "1"
				nc.Close()
			}
			if status != 200 || body != "early" || !early {
				t.Fatalf("try %d: %d %q X-Early=%v", i, status, body, early)
			}
			if after100 {
				t.Fatalf("try %d: 100 Continue after the final response", i)
			}
		}
	}, handlerModes()...)
}

// TestContinueRaceNeverKeepsAliveWithout100: a body read on another
// goroutine races the handler's final head. Whichever wins, a final
// answer sent without a 100 Continue before it, the body unread, says
// Connection: close (the client may still be holding the body back).
// The 100's attempt marked the body as coming even when the head had
// won and no 100 went out, so the connection stayed open. On HTTP/1.1,
// cleartext and TLS, in raw bytes: Connection: close is HTTP/1.1's (an
// HTTP/2 stream ends alone, and TestContinueFromAnotherGoroutine runs
// the race there); for http.Handlers, whose body a goroutine of theirs
// can read.
func TestContinueRaceNeverKeepsAliveWithout100(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		// Not parallel: the spinning handlers of two modes at once
		// would take turns on a small machine's cores.
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Both sides spin until the other is running, then go at
			// once: the race is decided by a few instructions.
			var ready atomic.Int32
			done := make(chan struct{})
			go func() {
				ready.Add(1)
				for ready.Load() < 2 {
				}
				io.Copy(io.Discard, r.Body)
				close(done)
			}()
			ready.Add(1)
			for ready.Load() < 2 {
			}
			w.WriteHeader(http.StatusUnauthorized)
			w.(http.Flusher).Flush()
			<-done
		})
		base, c := m.serve(t, &Server{}, h, nil)
		// Fewer tries over TLS, where each one's handshake costs ten
		// times the race it runs (the same engine code decides it).
		tries := 1000
		if !m.cleartext() {
			tries = 300
		}
		var first100, closed int
		for i := range tries {
			nc := m.dialRaw(t, base, c)
			io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil {
				t.Fatalf("try %d: %v", i, err)
			}
			switch {
			case resp.StatusCode == http.StatusContinue:
				first100++
			case resp.Close:
				closed++
			default:
				t.Fatalf("try %d: %d with no 100 Continue before it and no Connection: close", i, resp.StatusCode)
			}
			nc.Write([]byte("hello"))
			nc.Close()
		}
		t.Logf("100 first %d times, the final head first (with close) %d times", first100, closed)
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}
