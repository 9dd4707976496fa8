package client

// 1xx responses: "Expect: 100-continue" on both protocols, heads handed to
// Got1xxResponse, 101 without an upgrade asked.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// "Expect: 100-continue" answered by a final status without
// "Connection: close": the server reads the body next, so it is sent and
// the connection carries the next request (net/http does the same). With
// "Connection: close" the body stays unsent.
func TestExpectContinueFinalAnswerWithoutClose(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("close=%v", closing), func(t *testing.T) {
			got := make(chan string, 2)
			var conns atomic.Int32
			addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
				conns.Add(1)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if req.Header.Get("Expect") == "" {
						io.Copy(io.Discard, req.Body)
						c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
						continue
					}
					hdr := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
					if closing {
						hdr = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
					}
					c.Write([]byte(hdr)) // no 100 Continue: the body is read after
					if closing {
						return
					}
					b, _ := io.ReadAll(req.Body)
					got <- string(b)
				}
			})
			tr := &Transport{ExpectContinueTimeout: time.Hour}
			defer tr.CloseIdleConnections()
			read := 0
			body := readerFunc(func(p []byte) (int, error) {
				if read > 0 {
					return 0, io.EOF
				}
				read++
				return copy(p, "request body"), nil
			})
			req, _ := http.NewRequest("POST", "http://"+addr+"/", io.NopCloser(body))
			req.ContentLength = int64(len("request body"))
			req.Header.Set("Expect", "100-continue")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if closing {
				if read != 0 {
					t.Errorf("the body was read (%d) for a connection that closes", read)
				}
				return
			}
			if b := <-got; b != "request body" {
				t.Errorf("server read %q, want the body", b)
			}
			resp, err = tr.RoundTrip(mustReq(t, "http://"+addr+"/next"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1: the connection was not kept", n)
			}
		})
	}
}

// "Expect: 100-continue" answered by a final status without
// "Connection: close", from a server that reads the request body only once
// its response is written. The response must come back without waiting on
// the body: written first, a response bigger than the socket buffers (4
// MiB) waits for the client to read it, and an 8 MiB body waits for the
// server, both for ever. net/http's transport writes the body on its write
// loop while its read loop returns the response; the same server runs
// against it. A small answer is read at once, the body follows, and the
// connection carries the next request on both.
func TestExpectContinueFinalAnswerBeforeBodyRead(t *testing.T) {
	type size struct{ resp, req int }
	sizes := map[string]size{"big": {4 << 20, 8 << 20}, "small": {6, 1 << 10}}
	bodies := map[string]func(b []byte) io.Reader{
		"getbody": func(b []byte) io.Reader { return bytes.NewReader(b) }, // NewRequest sets GetBody
		"stream":  func(b []byte) io.Reader { return io.NopCloser(struct{ io.Reader }{bytes.NewReader(b)}) },
	}
	// Socket buffers of 64 KiB on both ends (no autotuning), so that the
	// sizes above are far past what they hold on any machine.
	smallBuffers := func(c net.Conn) {
		c.(*net.TCPConn).SetReadBuffer(64 << 10)
		c.(*net.TCPConn).SetWriteBuffer(64 << 10)
	}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := new(net.Dialer).DialContext(ctx, network, addr)
		if err == nil {
			smallBuffers(c)
		}
		return c, err
	}
	transports := map[string]func() http.RoundTripper{
		"hotpath": func() http.RoundTripper { return &Transport{ExpectContinueTimeout: time.Hour, DialContext: dial} },
		"nethttp": func() http.RoundTripper { return &http.Transport{ExpectContinueTimeout: time.Hour, DialContext: dial} },
	}
	for _, trName := range []string{"hotpath", "nethttp"} {
		for _, sz := range []string{"big", "small"} {
			for _, bodyKind := range []string{"getbody", "stream"} {
				t.Run(trName+"/"+sz+"/"+bodyKind, func(t *testing.T) {
					s := sizes[sz]
					got := make(chan int64, 2)
					var conns atomic.Int32
					addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
						conns.Add(1)
						smallBuffers(c)
						for {
							req, err := http.ReadRequest(br)
							if err != nil {
								return
							}
							if req.Header.Get("Expect") == "" {
								io.Copy(io.Discard, req.Body)
								c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
								continue
							}
							// No 100 Continue, no Connection: close; the
							// whole answer before reading the body.
							fmt.Fprintf(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n", s.resp)
							if _, err := c.Write(make([]byte, s.resp)); err != nil {
								return
							}
							n, _ := io.Copy(io.Discard, req.Body)
							got <- n
						}
					})
					rt := transports[trName]()
					defer rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
					req, _ := http.NewRequest("POST", "http://"+addr+"/", bodies[bodyKind](make([]byte, s.req)))
					req.ContentLength = int64(s.req)
					req.Header.Set("Expect", "100-continue")
					done := roundTripAsync(rt, req)
					select {
					case r := <-done:
						if r.err != nil || r.status != 401 || r.n != int64(s.resp) {
							t.Fatalf("got %d with %d body bytes, %v; want the 401 and its %d bytes", r.status, r.n, r.err, s.resp)
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("no response (and its %d-byte body) after 10 s: the client writes its %d-byte body before reading the answer, which the server writes before reading the body", s.resp, s.req)
					}
					if sz == "big" {
						return // the connection may go either way (written whole by the response's end, or not)
					}
					select {
					case n := <-got:
						if n != int64(s.req) {
							t.Fatalf("server read %d body bytes, want %d", n, s.req)
						}
					case <-time.After(10 * time.Second):
						t.Fatal("the server did not get the body in 10 s")
					}
					resp, err := rt.RoundTrip(mustReq(t, "http://"+addr+"/next"))
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if n := conns.Load(); n != 1 {
						t.Errorf("%d connections, want 1: the connection was not kept", n)
					}
				})
			}
		}
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// On HTTP/2 too the body waits for "100 Continue": a final error status
// before it means the body is never read.
func TestH2ExpectContinueWithholdsBody(t *testing.T) {
	for _, status := range []string{"401", "100"} {
		t.Run(status, func(t *testing.T) {
			addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
				switch {
				case f.Type == h2.FrameHeaders && status == "401":
					c.headers(f.StreamID, true, ":status", "401")
				case f.Type == h2.FrameHeaders:
					c.headers(f.StreamID, false, ":status", "100")
				case f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream):
					c.headers(f.StreamID, true, ":status", "204")
				}
			}))
			var reads atomic.Int32
			body := readerFunc(func(p []byte) (int, error) {
				if reads.Add(1) > 1 {
					return 0, io.EOF
				}
				return copy(p, "x"), nil
			})
			req, _ := http.NewRequest("POST", "http://"+addr+"/", io.NopCloser(body))
			req.ContentLength = 1
			req.Header.Set("Expect", "100-continue")
			var waited, got100 atomic.Bool
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				Wait100Continue: func() { waited.Store(true) },
				Got100Continue:  func() { got100.Store(true) },
			}))
			tr := h2cTransport(t)
			tr.ExpectContinueTimeout = time.Hour
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := map[string]string{"401": "401 0 false", "100": "204 2 true"}[status]
			if s := fmt.Sprintf("%d %d %v", resp.StatusCode, reads.Load(), got100.Load()); s != want {
				t.Errorf("status, body reads, Got100Continue = %s; want %s", s, want)
			}
			if !waited.Load() {
				t.Error("Wait100Continue not called")
			}
		})
	}
}

// On HTTP/2 the same server shape: a final answer before 100 Continue,
// with a 4 MiB body written before the handler reads the 8 MiB request
// body. The response comes back (the connection's read loop reads it
// while the body waits for its 100): a 401 declines the body, which is
// never sent (and its handler does not read it); after a 200 the body is
// sent and read.
func TestH2ExpectContinueFinalAnswerBeforeBodyRead(t *testing.T) {
	const respSize, reqSize = 4 << 20, 8 << 20
	for _, status := range []int{401, 200} {
		for _, trName := range []string{"hotpath", "nethttp"} {
			t.Run(fmt.Sprintf("%d/%s", status, trName), func(t *testing.T) {
				got := make(chan int64, 1)
				addr := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Length", fmt.Sprint(respSize))
					w.WriteHeader(status)
					w.Write(make([]byte, respSize))
					if f, ok := w.(http.Flusher); ok {
						f.Flush()
					}
					if status == 200 { // an error status declined the body
						n, _ := io.Copy(io.Discard, r.Body)
						got <- n
					}
				}))
				var rt http.RoundTripper = h2cTransport(t)
				if trName == "nethttp" {
					var p http.Protocols
					p.SetUnencryptedHTTP2(true)
					tr := &http.Transport{Protocols: &p}
					t.Cleanup(tr.CloseIdleConnections)
					rt = tr
				}
				req, _ := http.NewRequest("POST", "http://"+addr+"/", bytes.NewReader(make([]byte, reqSize)))
				req.Header.Set("Expect", "100-continue")
				done := roundTripAsync(rt, req)
				select {
				case r := <-done:
					if r.err != nil || r.status != status || r.n != respSize {
						t.Fatalf("got %d with %d body bytes, %v; want %d and its %d bytes", r.status, r.n, r.err, status, respSize)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("no response (and its %d-byte body) after 10 s", respSize)
				}
				if status != 200 {
					return
				}
				select {
				case n := <-got:
					if n != reqSize {
						t.Errorf("handler read %d body bytes, want %d", n, reqSize)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the handler did not get the body in 10 s")
				}
			})
		}
	}
}

// 1xx heads handed to Got1xxResponse are the caller's to limit, as in
// net/http; without the hook more than 5 fail the request. 101 to a
// request that asked for no upgrade is its final response (HTTP/1.1).
func TestInformationalResponses(t *testing.T) {
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readReq(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/101" {
				c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
				return
			}
			c.Write([]byte(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 10) +
				"HTTP/1.1 204 No Content\r\n\r\n"))
		}
	})
	check1xxLimit(t, func() *Transport {
		tr := &Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		return tr
	}, "http://"+addr+"/")
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/101"))
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("101 without an upgrade asked: %v, %v; want the 101 as the response", resp, err)
	}
	resp.Body.Close()
}

// On HTTP/2, the same rule for 1xx heads.
func TestH2InformationalDelivered(t *testing.T) {
	addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
		if f.Type == h2.FrameHeaders {
			for range 10 {
				c.headers(f.StreamID, false, ":status", "103", "link", "</a>")
			}
			c.headers(f.StreamID, true, ":status", "204")
		}
	}))
	check1xxLimit(t, func() *Transport { return h2cTransport(t) }, "http://"+addr+"/")
}

// check1xxLimit asks url, whose server sends ten 103 heads (about 40
// bytes each) before a 204, on Transports from newTransport: unseen, the
// heads may take MaxResponseHeaderBytes in all, whatever their number, as
// on net/http (since Go 1.24: no cap at five); past it the request fails;
// handed to Got1xxResponse, they are the caller's to limit.
func check1xxLimit(t *testing.T, newTransport func() *Transport, url string) {
	t.Helper()
	resp, err := newTransport().RoundTrip(mustReq(t, url))
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("10 unseen 1xx under MaxResponseHeaderBytes: %v, %v; want the 204", resp, err)
	}
	resp.Body.Close()

	small := newTransport()
	small.MaxResponseHeaderBytes = 200
	if _, err := small.RoundTrip(mustReq(t, url)); !errors.Is(err, errTooMany1xx) {
		t.Errorf("10 unseen 1xx past MaxResponseHeaderBytes 200: %v, want errTooMany1xx", err)
	}
	n := 0
	req := mustReq(t, url)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(int, textproto.MIMEHeader) error { n++; return nil },
	}))
	resp, err = newTransport().RoundTrip(req)
	if err != nil || resp.StatusCode != 204 || n != 10 {
		t.Fatalf("10 delivered 1xx: %v, %v, %d delivered; want 204 and 10", resp, err, n)
	}
	resp.Body.Close()
	small = newTransport()
	small.MaxResponseHeaderBytes = 200
	n = 0
	if resp, err = small.RoundTrip(req); err != nil || resp.StatusCode != 204 || n != 10 {
		t.Fatalf("10 delivered 1xx past MaxResponseHeaderBytes 200: %v, %v, %d delivered; want 204 and 10", resp, err, n)
	}
	resp.Body.Close()
}

// roundTripResult is what roundTripAsync's exchange ended with: the
// status and the body's length read to its end, or the error.
type roundTripResult struct {
	status int
	n      int64
	err    error
}

// roundTripAsync runs req on rt on a goroutine of its own and reads the
// whole body, so that a test can bound the wait (a deadlock fails, not
// hangs).
func roundTripAsync(rt http.RoundTripper, req *http.Request) <-chan roundTripResult {
	done := make(chan roundTripResult, 1)
	go func() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			done <- roundTripResult{err: err}
			return
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		done <- roundTripResult{resp.StatusCode, n, err}
	}()
	return done
}
