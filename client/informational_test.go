package client

// 1xx responses: "Expect: 100-continue" on both protocols, heads handed to
// Got1xxResponse, 101 without an upgrade asked.

import (
	"bufio"
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
