package websocket

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// startNative serves native on hotpath's server.
func startNative(t *testing.T, native func(*server.Ctx)) string {
	ln := listen(t)
	s := &server.Server{Native: native}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

// TestAcceptNative: the native API's handshake, with the event API (the
// handler returns at once) and with a blocking Read loop on the
// handler's goroutine; the client's first frame sent with the handshake
// is read; a request that is not a handshake is refused as Accept
// refuses it.
func TestAcceptNative(t *testing.T) {
	for _, events := range []bool{true, false} {
		name := "blocking"
		if events {
			name = "events"
		}
		t.Run(name, func(t *testing.T) {
			addr := startNative(t, func(x *server.Ctx) {
				c, err := AcceptNative(x, &AcceptOptions{Subprotocols: []string{"chat"}})
				if err != nil {
					return
				}
				if events {
					c.Start(&echoEvents{})
					return
				}
				defer c.CloseNow()
				ctx := context.Background()
				for {
					typ, msg, err := c.Read(ctx)
					if err != nil || c.Write(ctx, typ, msg) != nil {
						return
					}
				}
			})
			early := ws.AppendClientFrame(nil, ws.OpText, true, rawMask, []byte("early"))
			rc := dialRaw(t, addr, early)
			if h, p := rc.read(); h.Opcode != ws.OpText || string(p) != "early" {
				t.Fatalf("got %v %q, want the early frame echoed", h.Opcode, p)
			}
			ctx := testCtx(t)
			c, resp, err := Dial(ctx, "ws://"+addr+"/", &DialOptions{Subprotocols: []string{"chat"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if resp.Header.Get("Sec-WebSocket-Protocol") != "chat" || c.Subprotocol() != "chat" {
				t.Errorf("subprotocol %q", c.Subprotocol())
			}
			for _, n := range echoSizes {
				msg := pattern(0, n, n)[:n]
				if err := c.Write(ctx, MessageBinary, msg); err != nil {
					t.Fatal(err)
				}
				if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, msg) {
					t.Fatalf("%d bytes: got %d, %v", n, len(got), err)
				}
			}
			// Not a handshake: 426 with Upgrade: websocket, and the
			// connection goes on serving.
			resp, err = http.Get("http://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUpgradeRequired || resp.Header.Get("Upgrade") != "websocket" || !strings.Contains(string(body), "Connection") {
				t.Errorf("a plain GET: %d %v %q", resp.StatusCode, resp.Header, body)
			}
		})
	}
}
