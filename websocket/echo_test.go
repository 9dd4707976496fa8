package websocket

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// echoSizes are the payload lengths around the header's length encodings
// (§5.2: 7 bits up to 125, 16 up to 65535, 64 beyond) and a large one.
var echoSizes = []int{0, 1, 125, 126, 65535, 65536, 1 << 20}

// TestDialEcho: Dial against Accept on both servers, each size as text
// and binary, whole (Write/Read) and streamed (Writer/Reader).
func TestDialEcho(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			addr := e.start(t, echoHandler(t, nil, nil))
			ctx := testCtx(t)
			c, resp, err := Dial(ctx, "ws://"+addr+"/echo", nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 101 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			for _, n := range echoSizes {
				for _, typ := range []MessageType{MessageText, MessageBinary} {
					msg := echoWhole(t, ctx, c, typ, n)
					// Streamed, in pieces of 1000 bytes.
					w, err := c.Writer(ctx, typ)
					if err != nil {
						t.Fatal(err)
					}
					for p := msg; len(p) > 0; {
						k := min(len(p), 1000)
						if _, err := w.Write(p[:k]); err != nil {
							t.Fatal(err)
						}
						p = p[k:]
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
					gt, r, err := c.Reader(ctx)
					if err != nil {
						t.Fatal(err)
					}
					got, err := io.ReadAll(r)
					if err != nil || gt != typ || !bytes.Equal(got, msg) {
						t.Fatalf("streamed %s of %d bytes: got %s of %d bytes, %v", typ, n, gt, len(got), err)
					}
				}
			}
			if err := c.Close(ws.CloseNormal, "done"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestAcceptEchoRaw: a hand-written client against Accept on both
// servers: each size, the server's frames unmasked and whole.
func TestAcceptEchoRaw(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			c := dialRaw(t, e.start(t, echoHandler(t, nil, nil)), nil)
			for _, n := range echoSizes {
				for _, op := range []ws.Opcode{ws.OpText, ws.OpBinary} {
					msg := pattern(1, n, n)[:n]
					c.frame(op, true, true, msg)
					h, p := c.read()
					if h.Opcode != op || !h.Fin || h.Masked || !bytes.Equal(p, msg) {
						t.Fatalf("%s of %d: got %+v with %d bytes", op, n, h, len(p))
					}
				}
			}
			c.frame(ws.OpClose, true, true, closePayload(ws.CloseNormal, ""))
			c.expectClose(ws.CloseNormal)
		})
	}
}

// TestFragmentedWithPings: a text message in five fragments with a ping
// between each: every ping is answered with a pong carrying its payload,
// before the message (whole) is echoed.
func TestFragmentedWithPings(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			c := dialRaw(t, e.start(t, echoHandler(t, nil, nil)), nil)
			parts := []string{"Hel", "lo, ", "", "wörl", "d"}
			for i, p := range parts {
				op := ws.OpContinuation
				if i == 0 {
					op = ws.OpText
				}
				c.frame(op, i == len(parts)-1, true, []byte(p))
				if i < len(parts)-1 {
					c.frame(ws.OpPing, true, true, []byte{'p', byte('0' + i)})
				}
			}
			for i := range len(parts) - 1 {
				h, p := c.read()
				if h.Opcode != ws.OpPong || string(p) != string([]byte{'p', byte('0' + i)}) {
					t.Fatalf("frame %d: %v %q, want the pong of ping %d", i, h.Opcode, p, i)
				}
			}
			h, p := c.read()
			if h.Opcode != ws.OpText || string(p) != strings.Join(parts, "") {
				t.Fatalf("echo: %v %q", h.Opcode, p)
			}
		})
	}
}

// TestViolations: rules the client breaks fail the connection with the
// right code, and the server's Read (or, with the event API, OnClose)
// reports it. Both read APIs: the event loop reads a single-frame message
// in place (reader.whole), apart from Read's path.
func TestViolations(t *testing.T) {
	big := make([]byte, 2000)
	cases := []struct {
		name string
		opts *AcceptOptions
		send func(c *rawClient)
		code ws.CloseCode
	}{
		{"bad UTF-8 text", nil, func(c *rawClient) { c.frame(ws.OpText, true, true, []byte("ok \xc3\x28")) }, ws.CloseInvalidPayload},
		{"bad UTF-8 across fragments", nil, func(c *rawClient) {
			c.frame(ws.OpText, false, true, []byte("\xce\xba\xe1"))
			c.frame(ws.OpContinuation, true, true, []byte("\x28"))
		}, ws.CloseInvalidPayload},
		{"text ending inside a sequence", nil, func(c *rawClient) { c.frame(ws.OpText, true, true, []byte("ok \xe2\x82")) }, ws.CloseInvalidPayload},
		{"bad UTF-8 close reason", nil, func(c *rawClient) {
			c.frame(ws.OpClose, true, true, append([]byte{0x03, 0xe8}, 0xff, 0xfe))
		}, ws.CloseInvalidPayload},
		{"oversize message", &AcceptOptions{Options: Options{ReadLimit: 1000}}, func(c *rawClient) {
			c.frame(ws.OpBinary, false, true, big[:600])
			c.frame(ws.OpContinuation, true, true, big[:600])
		}, ws.CloseMessageTooBig},
		{"oversize frame", &AcceptOptions{Options: Options{MaxFrame: 1000}}, func(c *rawClient) {
			c.frame(ws.OpBinary, true, true, big)
		}, ws.CloseMessageTooBig},
		{"unmasked client frame", nil, func(c *rawClient) { c.frame(ws.OpText, true, false, []byte("hi")) }, ws.CloseProtocolError},
		{"continuation without a message", nil, func(c *rawClient) { c.frame(ws.OpContinuation, true, true, []byte("hi")) }, ws.CloseProtocolError},
		{"reserved opcode", nil, func(c *rawClient) { c.frame(ws.Opcode(3), true, true, nil) }, ws.CloseProtocolError},
		{"invalid close code", nil, func(c *rawClient) { c.frame(ws.OpClose, true, true, []byte{0x03, 0xed}) }, ws.CloseProtocolError},
		{"fragmented ping", nil, func(c *rawClient) { c.frame(ws.OpPing, false, true, nil) }, ws.CloseProtocolError},
	}
	apis := []struct {
		name    string
		handler func(opts *AcceptOptions, done chan error) http.Handler
	}{
		{"read", func(opts *AcceptOptions, done chan error) http.Handler { return echoHandler(t, opts, done) }},
		{"events", func(opts *AcceptOptions, done chan error) http.Handler {
			return eventHandler(t, opts, func() EventHandler { return &echoEvents{closed: done} })
		}},
	}
	for _, e := range engines {
		for _, api := range apis {
			for _, tc := range cases {
				t.Run(e.name+"/"+api.name+"/"+tc.name, func(t *testing.T) {
					done := make(chan error, 1)
					c := dialRaw(t, e.start(t, api.handler(tc.opts, done)), nil)
					tc.send(c)
					c.expectClose(tc.code)
					err := <-done
					if got := CloseStatus(err); got != tc.code {
						t.Fatalf("server's %s: %v (CloseStatus %d), want %d", api.name, err, got, tc.code)
					}
					var we *ws.Error
					if !errors.As(err, &we) {
						t.Fatalf("server's %s: %v, want a *ws.Error inside", api.name, err)
					}
				})
			}
		}
	}
}
