package websocket

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// TestAcceptRefusals: requests that are not a valid handshake get a 4xx
// naming the problem (and the headers RFC 6455 asks for), on both
// servers, and Accept returns an error.
func TestAcceptRefusals(t *testing.T) {
	good := "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + testKey + "\r\n"
	cases := []struct {
		name, req string
		status    int
		header    string // a header the answer must carry, "Name: value"
		reason    string // in the body
	}{
		{"POST", "POST / HTTP/1.1\r\nContent-Length: 0\r\n" + good, 405, "Allow: GET", "must be a GET"},
		{"HTTP/1.0", "GET / HTTP/1.0\r\n" + good, 400, "", "needs HTTP/1.1"},
		{"no Upgrade", "GET / HTTP/1.1\r\n" + strings.Replace(good, "Upgrade: websocket\r\n", "", 1), 426, "Upgrade: websocket", "Upgrade header"},
		{"no Connection: upgrade", "GET / HTTP/1.1\r\n" + strings.Replace(good, "Connection: Upgrade", "Connection: keep-alive", 1), 426, "Upgrade: websocket", "Connection header"},
		{"version 8", "GET / HTTP/1.1\r\n" + strings.Replace(good, "Version: 13", "Version: 8", 1), 426, "Sec-Websocket-Version: 13", "Sec-WebSocket-Version"},
		{"no key", "GET / HTTP/1.1\r\n" + strings.Replace(good, "Sec-WebSocket-Key: "+testKey+"\r\n", "", 1), 400, "", "exactly one Sec-WebSocket-Key"},
		{"short key", "GET / HTTP/1.1\r\n" + strings.Replace(good, testKey, "dGhlIHNhbXBsZQ==", 1), 400, "", "base64 of 16 bytes"},
		{"foreign origin", "GET / HTTP/1.1\r\nOrigin: https://evil.example\r\n" + good, 403, "", "is not allowed"},
		{"bad origin", "GET / HTTP/1.1\r\nOrigin: null\r\n" + good, 403, "", "not a URL"},
	}
	for _, e := range engines {
		for _, tc := range cases {
			t.Run(e.name+"/"+tc.name, func(t *testing.T) {
				errs := make(chan error, 1)
				addr := e.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					c, err := Accept(w, r, nil)
					if c != nil {
						c.CloseNow()
					}
					errs <- err
				}))
				resp := rawRequest(t, addr, tc.req+"\r\n")
				if resp.StatusCode != tc.status {
					t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
				}
				if tc.header != "" {
					name, value, _ := strings.Cut(tc.header, ": ")
					if !strings.Contains(resp.Header.Get(name), value) {
						t.Errorf("%s: %q, want %q", name, resp.Header.Get(name), value)
					}
				}
				body, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(body), tc.reason) {
					t.Errorf("body %q does not say %q", body, tc.reason)
				}
				if err := <-errs; err == nil || !strings.Contains(err.Error(), tc.reason) {
					t.Errorf("Accept's error: %v", err)
				}
			})
		}
	}
}

func rawRequest(t *testing.T, addr, req string) *http.Response {
	t.Helper()
	nc := dialTest(t, addr, 10*time.Second)
	io.WriteString(nc, req)
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestAcceptOriginAndSubprotocol: same-origin and allowed origins pass,
// the server's preferred subprotocol among the client's is chosen, the
// handler's headers go out with the 101, a deflate offer is ignored.
func TestAcceptOriginAndSubprotocol(t *testing.T) {
	opts := &AcceptOptions{Subprotocols: []string{"v2.chat", "v1.chat"}, OriginPatterns: []string{"*.example.com"}}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			subs := make(chan string, 4)
			addr := e.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Set-Cookie", "s=1")
				c, err := Accept(w, r, opts)
				if err != nil {
					t.Error(err)
					subs <- "error"
					return
				}
				subs <- c.Subprotocol()
				c.CloseNow()
			}))
			for _, origin := range []string{"", "http://" + addr, "https://app.example.com"} {
				extra := []string{"Sec-WebSocket-Protocol: v1.chat, v2.chat\r\n", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"}
				if origin != "" {
					extra = append(extra, "Origin: "+origin+"\r\n")
				}
				req := strings.Replace(handshakeRequest("/", extra...), "Host: x", "Host: "+addr, 1)
				resp := rawRequest(t, addr, req)
				if resp.StatusCode != 101 {
					t.Fatalf("origin %q: %s", origin, resp.Status)
				}
				if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "v2.chat" || <-subs != "v2.chat" {
					t.Errorf("subprotocol %q, want the server's first choice v2.chat", got)
				}
				if resp.Header.Get("Sec-WebSocket-Extensions") != "" || resp.Header.Get("Set-Cookie") != "s=1" {
					t.Errorf("101's headers: %v", resp.Header)
				}
			}
		})
	}
}

// TestAcceptPendingBytes: frames the client sends in the same write as
// its request (the server has read them with the request) are the first
// ones the Conn reads, on both servers, with the ResponseWriter as the
// server made it (on hotpath's, taken over without bufio:
// internal/rawhijack) and behind a middleware's wrapper (through
// http.ResponseController's Hijack).
func TestAcceptPendingBytes(t *testing.T) {
	for _, e := range engines {
		for _, wrapped := range []bool{false, true} {
			name := e.name
			if wrapped {
				name += "/wrapped"
			}
			t.Run(name, func(t *testing.T) {
				early := ws.AppendClientFrame(nil, ws.OpText, true, rawMask, []byte("early"))
				early = ws.AppendClientFrame(early, ws.OpBinary, true, rawMask, make([]byte, 300))
				h := echoHandler(t, nil, nil)
				if wrapped {
					inner := h
					h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						inner.ServeHTTP(unwrapper{w}, r)
					})
				}
				c := dialRaw(t, e.start(t, h), early)
				if h, p := c.read(); h.Opcode != ws.OpText || string(p) != "early" {
					t.Fatalf("first echo: %v %q", h.Opcode, p)
				}
				if h, p := c.read(); h.Opcode != ws.OpBinary || len(p) != 300 {
					t.Fatalf("second echo: %v %d bytes", h.Opcode, len(p))
				}
			})
		}
	}
}

// unwrapper is a middleware's ResponseWriter: no Hijack of its own, the
// server's through Unwrap (http.ResponseController's way).
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }
