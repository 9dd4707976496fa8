package compat_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"
	hws "github.com/hotpathhq/hotpath/websocket"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// hotpathEcho is an echo handler on hotpath's websocket.Accept, with a
// Read loop or, events set, the event API (the handler returns at once);
// it reports the error that ended the connection.
func hotpathEcho(ended chan<- error, events bool) http.Handler {
	return hotpathEchoWith(ended, events, &hws.AcceptOptions{Subprotocols: []string{"echo"}})
}

// hotpathEchoWith is hotpathEcho accepting with opts.
func hotpathEchoWith(ended chan<- error, events bool, opts *hws.AcceptOptions) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := hws.Accept(w, r, opts)
		if err != nil {
			ended <- err
			return
		}
		if events {
			c.Start(echoEvents{ended})
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(context.Background())
			if err != nil {
				ended <- err
				return
			}
			if err := c.Write(context.Background(), typ, msg); err != nil {
				ended <- err
				return
			}
		}
	})
}

// echoEvents is hotpathEcho's EventHandler.
type echoEvents struct{ ended chan<- error }

func (e echoEvents) OnMessage(c *hws.Conn, typ hws.MessageType, msg []byte) {
	c.Write(context.Background(), typ, msg)
}

func (e echoEvents) OnClose(c *hws.Conn, err error) { e.ended <- err }

// TestHotpathWebSocketPeers: gorilla's and coder's clients against
// hotpath's Accept on both engines, with a Read loop and with the event
// API (the messages of the echo scenario,
// a close with a code each way seen by the other); hotpath's Dial
// against gorilla's and coder's servers.
func TestHotpathWebSocketPeers(t *testing.T) {
	skipInH2(t, wsNoH2)
	msgs := wsMessages()[:200]
	for _, e := range engines {
		for _, events := range []bool{false, true} {
			api := "/Read loop"
			if events {
				api = "/event API"
			}
			t.Run(e.name+api+"/gorilla client", func(t *testing.T) {
				ended := make(chan error, 1)
				base := e.serve(t, hotpathEcho(ended, events))
				d := websocket.Dialer{Subprotocols: []string{"echo"}}
				c, resp, err := d.Dial(strings.Replace(base, "http", "ws", 1), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if resp.Header.Get("Sec-WebSocket-Protocol") != "echo" {
					t.Errorf("subprotocol %q", resp.Header.Get("Sec-WebSocket-Protocol"))
				}
				for i, m := range msgs {
					typ := websocket.BinaryMessage
					if m.text {
						typ = websocket.TextMessage
					}
					if err := c.WriteMessage(typ, m.data); err != nil {
						t.Fatal(err)
					}
					gt, got, err := c.ReadMessage()
					if err != nil || gt != typ || !bytes.Equal(got, m.data) {
						t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
					}
				}
				c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "gorilla out"))
				_, _, err = c.ReadMessage()
				if !websocket.IsCloseError(err, 4002) {
					t.Errorf("gorilla's read after its close: %v, want the echoed 4002", err)
				}
				if err := <-ended; hws.CloseStatus(err) != 4002 {
					t.Errorf("server's Read: %v", err)
				}
			})
			for _, takeover := range []bool{false, true} {
				name, aopts, dopts := "/coder client", &hws.AcceptOptions{Subprotocols: []string{"echo"}}, (*coder.DialOptions)(nil)
				if takeover {
					// Both ends compress each message with the
					// context of the ones before, as the answer lets
					// them: coder inflates hotpath's with its window.
					name = "/coder client with context takeover"
					aopts = &hws.AcceptOptions{Compression: true, ClientContextTakeover: true, ServerContextTakeover: true}
					dopts = &coder.DialOptions{CompressionMode: coder.CompressionContextTakeover}
				}
				t.Run(e.name+api+name, func(t *testing.T) {
					ended := make(chan error, 1)
					base := e.serve(t, hotpathEchoWith(ended, events, aopts))
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					c, resp, err := coder.Dial(ctx, base, dopts)
					if err != nil {
						t.Fatal(err)
					}
					if ext := resp.Header.Get("Sec-WebSocket-Extensions"); takeover && (!strings.HasPrefix(ext, "permessage-deflate") || strings.Contains(ext, "no_context_takeover")) {
						t.Fatalf("answer %q: want permessage-deflate with both contexts kept", ext)
					}
					c.SetReadLimit(1 << 20)
					for i, m := range msgs {
						typ := coder.MessageBinary
						if m.text {
							typ = coder.MessageText
						}
						if err := c.Write(ctx, typ, m.data); err != nil {
							t.Fatal(err)
						}
						gt, got, err := c.Read(ctx)
						if err != nil || gt != typ || !bytes.Equal(got, m.data) {
							t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
						}
					}
					if err := c.Close(coder.StatusGoingAway, "coder out"); err != nil {
						t.Errorf("coder's Close: %v", err)
					}
					if err := <-ended; hws.CloseStatus(err) != ws.CloseGoingAway {
						t.Errorf("server's Read: %v", err)
					}
				})
			}
		}
	}
	t.Run("hotpath client/gorilla server", func(t *testing.T) {
		up := websocket.Upgrader{}
		base := serveNetHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			for {
				typ, msg, err := c.ReadMessage()
				if err != nil {
					return
				}
				c.WriteMessage(typ, msg)
			}
		}))
		hotpathDialEcho(t, base, msgs, nil)
	})
	for _, takeover := range []bool{false, true} {
		name, aopts, dopts := "hotpath client/coder server", (*coder.AcceptOptions)(nil), (*hws.DialOptions)(nil)
		if takeover {
			// Both ends compress with their context: coder's
			// compressor and window per connection, hotpath's primed
			// 4 KiB and 32 KiB windows.
			name += " with context takeover"
			aopts = &coder.AcceptOptions{CompressionMode: coder.CompressionContextTakeover}
			dopts = &hws.DialOptions{Compression: true, ContextTakeover: true}
		}
		t.Run(name, func(t *testing.T) {
			base := serveNetHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := coder.Accept(w, r, aopts)
				if err != nil {
					return
				}
				defer c.CloseNow()
				c.SetReadLimit(1 << 20)
				for {
					typ, msg, err := c.Read(r.Context())
					if err != nil {
						return
					}
					c.Write(r.Context(), typ, msg)
				}
			}))
			hotpathDialEcho(t, base, msgs, dopts)
		})
	}
}

// hotpathDialEcho sends msgs through hotpath's Dial to an echo server and
// checks each comes back, then closes with a handshake.
func hotpathDialEcho(t *testing.T, base string, msgs []wsMessage, opts *hws.DialOptions) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, resp, err := hws.Dial(ctx, strings.Replace(base, "http", "ws", 1), opts)
	if err != nil {
		t.Fatal(err)
	}
	if opts != nil && opts.ContextTakeover {
		if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.HasPrefix(ext, "permessage-deflate") || strings.Contains(ext, "no_context_takeover") {
			t.Fatalf("answer %q: want permessage-deflate with both contexts kept", ext)
		}
	}
	for i, m := range msgs {
		typ := hws.MessageBinary
		if m.text {
			typ = hws.MessageText
		}
		if err := c.Write(ctx, typ, m.data); err != nil {
			t.Fatal(err)
		}
		gt, got, err := c.Read(ctx)
		if err != nil || gt != typ || !bytes.Equal(got, m.data) {
			t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
		}
	}
	if err := c.Close(ws.CloseNormal, "done"); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
}
