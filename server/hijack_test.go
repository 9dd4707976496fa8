package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestHijackAfterContextWait: the WebSocket pattern: a handler that
// looked at r.Context() (middleware does, and that starts the watch for
// a client that leaves) then hijacks must get a connection it can read
// from, with no deadline left on it: after the 101, a goroutine of the
// handler's reads the client's next line. On HTTP/1.1, cleartext and TLS
// (where the watcher reads the socket), for http.Handlers: Hijack is
// HTTP/1.1's (an HTTP/2 stream cannot be taken over), and the native API
// has none.
func TestHijackAfterContextWait(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		got := make(chan string, 1)
		reading := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Context().Done() // someone asked for the channel: the watcher runs
			time.Sleep(20 * time.Millisecond)
			nc, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				got <- err.Error()
				return
			}
			brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
			brw.Flush()
			go func() { // as WebSocket libraries do: the handler returns, a goroutine reads
				defer nc.Close()
				close(reading)
				line, err := brw.ReadString('\n')
				got <- fmt.Sprint(line, err)
			}()
		})
		base, c := m.serve(t, &Server{}, h, nil)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n")
		br := bufio.NewReader(nc)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 101 {
			t.Fatalf("%v %v", resp, err)
		}
		select {
		case <-reading:
		case s := <-got:
			t.Fatalf("hijack: %s", s)
		}
		// The hijacked side waits in its read a while before the line
		// comes: a deadline left on the connection would end it.
		time.Sleep(50 * time.Millisecond)
		io.WriteString(nc, "hello\n")
		if s := <-got; s != "hello\n<nil>" {
			t.Fatalf("hijacked read: %q", s)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}

// TestHijackReleasesBuffers: a hijacked connection's buffer set goes back
// to the pool at Hijack, not when the handler returns: a WebSocket
// handler's Read loop runs for the connection's life (12 KiB held per
// idle WebSocket before). So does the array of the request's fields (768
// bytes; the http.Request has its own copy). HTTP/1.1 http.Handlers
// only, as above.
func TestHijackReleasesBuffers(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		held := make(chan string, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rw, ok := w.(*responseWriter)
			if !ok {
				held <- fmt.Sprintf("ResponseWriter is a %T", w)
				return
			}
			c := rw.a.c
			nc, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				held <- err.Error()
				return
			}
			defer nc.Close()
			held <- fmt.Sprint("held ", heldBuffers(c), ", fields array ", cap(c.ctx.req.Headers) > 0)
		})
		base, c := m.serve(t, &Server{}, h, nil)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if s := <-held; s != "held false, fields array false" {
			t.Errorf("after Hijack, with the handler still running: %s; want the buffers back in the pool", s)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}

// TestNativeHijack: a native handler takes the connection over as an
// http.Handler does: the 101 it set goes out first (no body framing
// added), the bytes that came with the request are the new owner's, and
// the connection stays open after the handler returns; on HTTP/2,
// Hijack answers http.ErrNotSupported. Both native protocol families.
func TestNativeHijack(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		got := make(chan error, 1)
		native := func(x *Ctx) {
			x.SetStatus(101)
			x.SetHeader("Upgrade", "echo")
			x.SetHeader("Connection", "Upgrade")
			nc, pending, err := x.Hijack()
			if m.isH2() {
				if !errors.Is(err, http.ErrNotSupported) {
					got <- fmt.Errorf("Hijack on HTTP/2: %v, want http.ErrNotSupported", err)
				} else {
					got <- nil
				}
				x.SetStatus(200)
				return
			}
			if err != nil {
				got <- err
				return
			}
			got <- nil
			go func() { // the handler returns; the new owner echoes a line
				defer nc.Close()
				br := bufio.NewReader(io.MultiReader(bytes.NewReader(pending), nc))
				line, _ := br.ReadString('\n')
				io.WriteString(nc, "echo: "+line)
			}()
		}
		base, c := m.serve(t, &Server{}, nil, native)
		if m.isH2() {
			resp, err := c.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if err := <-got; err != nil {
				t.Error(err)
			}
			return
		}
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nearly\n")
		br := bufio.NewReader(nc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" || resp.Header.Get("Content-Length") != "" || len(resp.TransferEncoding) != 0 {
			t.Fatalf("head: %d %v %v", resp.StatusCode, resp.Header, resp.TransferEncoding)
		}
		if line, err := br.ReadString('\n'); line != "echo: early\n" {
			t.Errorf("after the 101: %q %v, want the early bytes echoed", line, err)
		}
	}, modesWhere(func(m mode) bool { return m.native && !m.isHandoff() })...)
}
