package endpoints

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/websocket"
)

// /goroutines answers the server's goroutine count, on both APIs.
func TestGoroutines(t *testing.T) {
	for _, s := range []*server.Server{{Native: Native}, {Handler: Handler()}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		resp, err := http.Get("http://" + ln.Addr().String() + "/goroutines")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if n, err := strconv.Atoi(string(b)); err != nil || n < 2 || resp.Header.Get("Content-Type") != textPlain {
			t.Errorf("/goroutines: %q (%s), want a count of at least 2 (this test and the server's)", b, resp.Header.Get("Content-Type"))
		}
	}
}

// /events/{s} streams s server-sent events, on both APIs, each flushed:
// the first is read while the response is still open.
func TestEvents(t *testing.T) {
	for _, s := range []*server.Server{{Native: Native}, {Handler: Handler()}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		resp, err := http.Get("http://" + ln.Addr().String() + "/events/2")
		if err != nil {
			t.Fatal(err)
		}
		first := make([]byte, len("data: 0\n\n"))
		if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "data: 0\n\n" {
			t.Errorf("first event %q (%v), want %q", first, err, "data: 0\n\n")
		}
		rest, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if string(rest) != "data: 1\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("after the first event %q (%s), want %q as text/event-stream", rest, resp.Header.Get("Content-Type"), "data: 1\n\n")
		}
	}
}

// /ws echoes text and binary messages, on both APIs and on net/http's
// server, and refuses a request that is not a handshake (426).
func TestWebSocketEcho(t *testing.T) {
	for name, serve := range map[string]func(net.Listener) func(){
		"native": func(ln net.Listener) func() {
			s := &server.Server{Native: Native}
			go s.Serve(ln)
			return func() { s.Close() }
		},
		"handler": func(ln net.Listener) func() {
			s := &server.Server{Handler: Handler()}
			go s.Serve(ln)
			return func() { s.Close() }
		},
		"net/http": func(ln net.Listener) func() {
			s := &http.Server{Handler: Handler()}
			go s.Serve(ln)
			return func() { s.Close() }
		},
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer serve(ln)()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, "ws://"+ln.Addr().String()+"/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			for _, typ := range []websocket.MessageType{websocket.MessageText, websocket.MessageBinary} {
				if err := c.Write(ctx, typ, []byte("hello")); err != nil {
					t.Fatal(err)
				}
				if gt, got, err := c.Read(ctx); err != nil || gt != typ || string(got) != "hello" {
					t.Fatalf("%s: got %s %q %v", typ, gt, got, err)
				}
			}
			resp, err := http.Get("http://" + ln.Addr().String() + "/ws")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUpgradeRequired {
				t.Errorf("a plain GET /ws: %d, want 426", resp.StatusCode)
			}
		})
	}
}
