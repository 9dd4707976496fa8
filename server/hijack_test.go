package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/hotpathhq/hotpath/internal/rawhijack"
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
			rw, ok := w.(*requestWriter)
			if !ok {
				held <- fmt.Sprintf("ResponseWriter is a %T", w)
				return
			}
			c := rw.c.Load()
			cw := c.connWork
			nc, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				held <- err.Error()
				return
			}
			defer nc.Close()
			held <- fmt.Sprint("held ", heldBuffers(c), ", fields array ", cap(cw.ctx.req.Headers) > 0)
		})
		base, c := m.serve(t, &Server{}, h, nil)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if s := <-held; s != "held false, fields array false" {
			t.Errorf("after Hijack, with the handler still running: %s; want the buffers back in the pool", s)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}

// TestHijackLetsGoOfWork: while a handler that hijacked runs on (a
// WebSocket's Read loop), the server holds nothing of its request: once
// the handler lets go of w and r, the connection's working state (1 KB),
// the adapter and the http.Request are garbage, not kept by the frames
// under the handler, the grace sweep or the request's context (letGo).
// What the handler is left with still works: the socket, the request's
// context (canceled when it returns, as on net/http), and w, which
// answers http.ErrHijacked. HTTP/1.1 http.Handlers, as above.
func TestHijackLetsGoOfWork(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		type result struct {
			held []weakRef
			ctx  context.Context // its Done not asked for before the collection
			err  error
		}
		got := make(chan result, 1)
		returned := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			held, nc, ctx, err := hijackWatched(w, r)
			got <- result{held, ctx, err}
			if err != nil {
				return
			}
			defer close(returned)
			defer nc.Close()
			io.Copy(io.Discard, nc) // until the client closes, as a Read loop
		})
		base, c := m.serve(t, &Server{}, h, nil)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nCookie: a=1\r\nContent-Length: 5\r\n\r\nhello")
		res := <-got
		if res.err != nil {
			t.Fatal(res.err)
		}
		var alive []string
		for range 50 {
			runtime.GC()
			alive = alive[:0]
			for _, ref := range res.held {
				if ref.alive() {
					alive = append(alive, ref.name)
				}
			}
			if len(alive) == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if len(alive) > 0 {
			t.Errorf("with the hijacked handler running and w, r let go, still reachable: %v", alive)
		}
		if res.ctx.Err() != nil {
			t.Fatal("the request's context ended while the hijacked handler runs")
		}
		done := res.ctx.Done()
		nc.Close()
		<-returned
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the request's context not canceled after the hijacked handler returned")
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}

// TestRawHijack: internal/rawhijack's Take, package websocket's way to
// take a connection over without bufio: on the server's own
// ResponseWriter it hijacks and returns the bytes read past the head; on
// anything else (a middleware's wrapper) it reports !ok and does nothing,
// and the handler answers as usual. HTTP/1.1 http.Handlers, as above.
func TestRawHijack(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		got := make(chan string, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, _, ok, err := rawhijack.Take(struct{ http.ResponseWriter }{w}); ok || err != nil {
				got <- fmt.Sprintf("Take of a wrapper: ok %v, err %v", ok, err)
				return
			}
			if r.URL.Path == "/plain" {
				io.WriteString(w, "answered")
				return
			}
			nc, pending, ok, err := rawhijack.Take(w)
			if !ok || err != nil {
				got <- fmt.Sprintf("Take: ok %v, err %v", ok, err)
				return
			}
			defer nc.Close()
			if _, _, err := http.NewResponseController(w).Hijack(); err != http.ErrHijacked {
				got <- fmt.Sprintf("Hijack after Take: %v, want http.ErrHijacked", err)
				return
			}
			got <- string(pending)
		})
		base, c := m.serve(t, &Server{}, h, nil)
		resp, err := c.Get(base + "/plain")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "answered" {
			select {
			case s := <-got:
				t.Fatal(s)
			default:
				t.Fatalf("after a Take of a wrapper, the handler's answer: %q", b)
			}
		}
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\nearly bytes")
		if s := <-got; s != "early bytes" {
			t.Fatalf("Take returned %q as the bytes past the head, want %q", s, "early bytes")
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() && !m.native })...)
}

// weakRef names a weak pointer to something a test expects collected.
type weakRef struct {
	name  string
	alive func() bool
}

func weakRefTo[T any](name string, p *T) weakRef {
	wp := weak.Make(p)
	return weakRef{name, func() bool { return wp.Value() != nil }}
}

// hijackWatched hijacks w's connection, returning weak references to what
// the server held of the request before, checking on the way that w
// answers as net/http's does after Hijack. It keeps w and r only until it
// returns.
//
//go:noinline
func hijackWatched(w http.ResponseWriter, r *http.Request) ([]weakRef, net.Conn, context.Context, error) {
	rw, ok := w.(*requestWriter)
	if !ok {
		return nil, nil, nil, fmt.Errorf("ResponseWriter is a %T", w)
	}
	held := []weakRef{
		weakRefTo("the working state", rw.c.Load().connWork),
		weakRefTo("the adapter", rw.c.Load().handler),
		weakRefTo("the http.Request", r),
	}
	ctx := r.Context()
	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := w.Write([]byte("x")); err != http.ErrHijacked {
		err = fmt.Errorf("Write after Hijack: %v, want http.ErrHijacked", err)
		nc.Close()
		return nil, nil, nil, err
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Time{}); err != nil {
		nc.Close()
		return nil, nil, nil, fmt.Errorf("SetReadDeadline after Hijack: %v", err)
	}
	if err := rc.EnableFullDuplex(); err != nil {
		nc.Close()
		return nil, nil, nil, fmt.Errorf("EnableFullDuplex after Hijack: %v", err)
	}
	if _, err := r.Body.Read(make([]byte, 1)); err != http.ErrBodyReadAfterClose {
		nc.Close()
		return nil, nil, nil, fmt.Errorf("the body read after Hijack: %v, want http.ErrBodyReadAfterClose", err)
	}
	return held, nc, ctx, nil
}

// TestNativeHijack: a native handler takes the connection over as an
// http.Handler does: the 101 it set goes out first (no body framing
// added), the bytes that came with the request are the new owner's, and
// the connection stays open after the handler returns; the Ctx's writes
// and body reads then fail as net/http's do after Hijack; on HTTP/2,
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
			// The Ctx writes and reads no more, as net/http's
			// ResponseWriter after Hijack.
			if n, err := x.Write([]byte("late")); n != 0 || !errors.Is(err, http.ErrHijacked) {
				got <- fmt.Errorf("Write after Hijack: %d, %v; want 0, http.ErrHijacked", n, err)
				return
			}
			if err := x.Flush(); !errors.Is(err, http.ErrHijacked) {
				got <- fmt.Errorf("Flush after Hijack: %v; want http.ErrHijacked", err)
				return
			}
			if _, err := x.ReadBody(nil); !errors.Is(err, http.ErrBodyReadAfterClose) {
				got <- fmt.Errorf("ReadBody after Hijack: %v; want http.ErrBodyReadAfterClose", err)
				return
			}
			if _, _, err := x.Hijack(); !errors.Is(err, http.ErrHijacked) {
				got <- fmt.Errorf("a second Hijack: %v; want http.ErrHijacked", err)
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
