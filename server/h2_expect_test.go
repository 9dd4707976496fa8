package server

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// A request with "Expect: 100-continue" answered without reading its
// body ends its stream at once: the final response with END_STREAM, then
// RST_STREAM (NO_ERROR, RFC 9113 §8.1) telling the client to keep its
// body, without the client sending any of it, whether the body's length
// was declared or not. The stream no longer counts against the
// connection. (A client that waits for 100 Continue sends its body after
// its own timeout if the stream stays open: Go's, after
// ExpectContinueTimeout, which net/http's own
// TestNoSniffExpectRequestBody/h2 caught on hotpath over TLS.)
//
// Modes: h2 and h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (rawH2Mode): the frames that end the stream are what is tested;
// HTTP/1.1 closes or keeps the connection instead
// (TestSemExpectContinue...), and the hand-off's HTTP/2 is net/http's.
func TestH2ExpectContinueUnreadEndsStream(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		for _, length := range []string{"1000", ""} {
			t.Run("content-length="+length, func(t *testing.T) {
				s := &Server{}
				if m.native {
					s.Native = func(c *Ctx) { c.Error(http.StatusUnauthorized, "no") }
				} else {
					s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						http.Error(w, "no", http.StatusUnauthorized)
					})
				}
				c := rawH2Mode(t, s, m)
				var enc h2.Encoder
				for id := uint32(1); id <= 5; id += 2 {
					b := enc.StartBlock(nil)
					b = enc.AppendField(b, ":method", "POST")
					b = enc.AppendField(b, ":scheme", "https")
					b = enc.AppendField(b, ":authority", "example.com")
					b = enc.AppendField(b, ":path", "/")
					b = enc.AppendField(b, "expect", "100-continue")
					if length != "" {
						b = enc.AppendField(b, "content-length", length)
					}
					if _, err := c.Write(h2.AppendHeaders(nil, id, h2.FlagEndHeaders, h2.Priority{}, b, 0)); err != nil {
						t.Fatal(err)
					}
					start := time.Now()
					var ended bool
					f := readFrames(t, c, func(f *h2.Frame) bool {
						if f.StreamID != id {
							return false
						}
						if f.Type == h2.FrameHeaders || f.Type == h2.FrameData {
							ended = ended || f.Flags.Has(h2.FlagEndStream)
						}
						return f.Type == h2.FrameRSTStream
					})
					if !ended {
						t.Fatalf("stream %d: RST_STREAM before the response ended", id)
					}
					if f.ErrCode() != h2.ErrCodeNo {
						t.Fatalf("stream %d: RST_STREAM %v, want NO_ERROR", id, f.ErrCode())
					}
					if d := time.Since(start); d > 5*time.Second {
						t.Fatalf("stream %d: reset %v after the request, want within h2NoErrWait of the response", id, d)
					}
				}
			})
		}
	}, h2EngineModes()...)
}

// rawH2Mode is rawH2 on m: over TLS (ALPN h2) on h2, cleartext with prior
// knowledge on h2c. The client's preface and SETTINGS are sent.
func rawH2Mode(t *testing.T, s *Server, m mode) net.Conn {
	t.Helper()
	if m.cleartext() {
		return rawH2(t, s)
	}
	if s.ErrorLog == nil {
		s.ErrorLog = discardLog
	}
	cert, pool := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := startTLS(t, s)
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN chose %q, want h2", p)
	}
	b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	return c
}

// readCounter is a request body that counts its reads and has nothing.
type readCounter struct{ reads atomic.Int32 }

func (r *readCounter) Read([]byte) (int, error) { r.reads.Add(1); return 0, io.EOF }

// A stream whose response is complete while the client may still send
// its body (Expect: 100-continue, answered 401 unread) keeps the
// connection StateActive until its NO_ERROR reset, as net/http's does: a
// ConnState hook that closes idle connections (httptest.Server.Close's)
// closed it before the reset, and Go's client, its stream ended by the
// response and its connection gone without a reset, read and sent the
// body anyway after ExpectContinueTimeout (net/http's own
// TestNoSniffExpectRequestBody/h2 on hotpath, 10 s after the test).
//
// Modes: h2 and h2c on hotpath's HTTP/2 engine, both APIs (HTTP/1.1
// answers such a request and closes or keeps the connection, tested in
// TestSemExpectContinue...; the hand-off's HTTP/2 is net/http's).
func TestH2ExpectUnreadBodyStaysWithTheClient(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // waits for the client's ExpectContinueTimeout
		var mu sync.Mutex
		states := map[net.Conn]ConnState{}
		closing := false
		s := &Server{ConnState: func(nc net.Conn, st ConnState) {
			mu.Lock()
			defer mu.Unlock()
			states[nc] = st
			if closing && st == StateIdle {
				nc.Close()
			}
		}}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
		nh := func(c *Ctx) { c.SetStatus(http.StatusUnauthorized) }
		base, c := m.serve(t, s, h, nh)
		const expectWait = 300 * time.Millisecond
		c.Transport.(*http.Transport).ExpectContinueTimeout = expectWait
		body := &readCounter{}
		req, err := http.NewRequest("POST", base+"/", body)
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = 0 // unknown: the body is sent only after 100 Continue, or the timeout
		req.Header.Set("Expect", "100-continue")
		// The Transport itself, as net/http's test: a Client with a
		// Timeout cancels the request's context when the body closes,
		// which ends the stream from the client's side.
		resp, err := c.Transport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.ProtoMajor != 2 {
			t.Fatalf("got %s %d, want HTTP/2 401", resp.Proto, resp.StatusCode)
		}
		// What httptest.Server.Close does: close the idle connections,
		// and those that become idle after.
		mu.Lock()
		closing = true
		for nc, st := range states {
			if st == StateIdle || st == StateNew {
				nc.Close()
			}
		}
		mu.Unlock()
		time.Sleep(3 * expectWait)
		if n := body.reads.Load(); n != 0 {
			t.Errorf("the client read the body %d times after a 401 with the connection closed: it was not told to keep it", n)
		}
	}, h2EngineModes()...)
}
