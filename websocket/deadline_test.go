package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A ctx moves the socket's deadline into the past when it ends (see
// deadline.go). Over TCP a deadline can be set back; over HTTP/2 a
// deadline that passes breaks the stream for good (a read deadline ends
// the body, a write deadline resets the stream). These tests run on
// both, with both APIs: what is harmless over TCP must be over HTTP/2.

// ctxServe starts a server of api over proto ("h1": a handshake with
// Upgrade, "h2": an extended CONNECT) running serve on the connection it
// accepts, and returns the client's Conn; serve's error goes to res.
func ctxServe(t *testing.T, proto, api string, serve func(*Conn) error) (*Conn, <-chan error) {
	t.Helper()
	res := make(chan error, 1)
	h, native := onAccept(api, nil, func(c *Conn) {
		defer c.CloseNow()
		res <- serve(c)
	})
	base, hc := startH2(t, false, h, native, nil)
	var cc *Conn
	var err error
	if proto == "h2" {
		cc, _, err = h2Dial(testCtx(t), hc, base+"/", longClose)
		skipWithoutXConnect(t, err)
	} else {
		cc, _, err = Dial(testCtx(t), "ws://"+strings.TrimPrefix(base, "http://")+"/", &DialOptions{Options: longClose})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.CloseNow() })
	return cc, res
}

// forEachTransport runs f over HTTP/1.1 and HTTP/2, with each API.
func forEachTransport(t *testing.T, f func(t *testing.T, proto, api string)) {
	for _, proto := range []string{"h1", "h2"} {
		for _, api := range []string{"handler", "native"} {
			t.Run(proto+"/"+api, func(t *testing.T) { f(t, proto, api) })
		}
	}
}

// waitCtxSeen waits for the AfterFunc of d's ctx to have run.
func waitCtxSeen(d *deadlineArm) error {
	for end := time.Now().Add(promptly); time.Now().Before(end); time.Sleep(time.Millisecond) {
		d.mu.Lock()
		f := d.fired
		d.mu.Unlock()
		if f != notEnded {
			return nil
		}
	}
	return errors.New("the ctx's AfterFunc did not run")
}

func readWant(ctx context.Context, c *Conn, want string) error {
	_, got, err := c.Read(ctx)
	if err != nil {
		return fmt.Errorf("Read, waiting for %q: %w", want, err)
	}
	if string(got) != want {
		return fmt.Errorf("Read %q, want %q", got, want)
	}
	return nil
}

// TestCtxEndAfterIOKeepsConn: a ctx that ends after the Read, Reader or
// Write it covered (a Reader's message read but not to its end, the
// common case of a decoder that stops at the value's end) leaves the
// connection working: the next Read and Write succeed. Over HTTP/2 the
// Reader's ctx stayed armed after Reader returned, and its end set the
// stream's read deadline into the past, ending the request body for
// good: the next Read failed.
func TestCtxEndAfterIOKeepsConn(t *testing.T) {
	forEachTransport(t, func(t *testing.T, proto, api string) {
		serve := func(c *Conn) error {
			bg := context.Background()
			ctx0, cancel0 := context.WithCancel(bg)
			err := readWant(ctx0, c, "zero")
			cancel0()
			if err != nil {
				return err
			}
			ctx1, cancel1 := context.WithCancel(bg)
			_, r, err := c.Reader(ctx1)
			if err != nil {
				cancel1()
				return fmt.Errorf("Reader: %w", err)
			}
			var b [3]byte
			if _, err := io.ReadFull(r, b[:]); err != nil || string(b[:]) != "one" {
				cancel1()
				return fmt.Errorf("reading message one: %q, %v", b, err)
			}
			cancel1() // message one's end is not read
			if err := waitCtxSeen(&c.rdl); err != nil {
				return err
			}
			ctx2, cancel2 := context.WithCancel(bg)
			err = c.Write(ctx2, MessageText, []byte("two"))
			cancel2()
			if err != nil {
				return fmt.Errorf("Write two: %w", err)
			}
			time.Sleep(20 * time.Millisecond) // for an AfterFunc that should not run
			if err := readWant(bg, c, "three"); err != nil {
				return err
			}
			if err := c.Write(bg, MessageText, []byte("four")); err != nil {
				return fmt.Errorf("Write four: %w", err)
			}
			return nil
		}
		cc, res := ctxServe(t, proto, api, serve)
		ctx := testCtx(t)
		for _, m := range []string{"zero", "one"} {
			if err := cc.Write(ctx, MessageText, []byte(m)); err != nil {
				t.Fatal(err)
			}
		}
		if err := readWant(ctx, cc, "two"); err != nil {
			t.Fatalf("client: %v (server: %v)", err, <-res)
		}
		if err := cc.Write(ctx, MessageText, []byte("three")); err != nil {
			t.Fatal(err)
		}
		if err := <-res; err != nil {
			t.Fatalf("server: %v", err)
		}
		if err := readWant(ctx, cc, "four"); err != nil {
			t.Fatalf("client: %v", err)
		}
	})
}

// hookConn runs a hook once, after the next socket read or write of a
// server Conn that moved bytes (and flushed them, over HTTP/2), before
// the Conn sees it return.
type hookConn struct {
	net.Conn
	hook *atomic.Pointer[func()]
}

func (h hookConn) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	if n > 0 {
		runHook(h.hook)
	}
	return n, err
}

func (h hookConn) Write(p []byte) (int, error) {
	n, err := h.Conn.Write(p)
	if err == nil {
		runHook(h.hook)
	}
	return n, err
}

type hookBody struct {
	io.ReadCloser
	hook *atomic.Pointer[func()]
}

func (h hookBody) Read(p []byte) (int, error) {
	n, err := h.ReadCloser.Read(p)
	if n > 0 {
		runHook(h.hook)
	}
	return n, err
}

func runHook(h *atomic.Pointer[func()]) {
	if f := h.Swap(nil); f != nil {
		(*f)()
	}
}

// hookIO puts hook between the socket (or stream) and c, before c's
// first I/O.
func hookIO(c *Conn, hook *atomic.Pointer[func()]) {
	if sc, ok := c.nc.(*streamConn); ok {
		sc.body = hookBody{sc.body, hook}
		flush := sc.flush
		sc.flush = func() error {
			err := flush()
			if err == nil {
				runHook(hook)
			}
			return err
		}
		return
	}
	c.nc = hookConn{c.nc, hook}
	c.direct = false
}

// TestCtxEndAsIOCompletes: a ctx that ends as the socket read or write it
// covers completes, before the Read or Write returns, either leaves the
// connection working (the call succeeds, and the next one does) or fails
// the call with the ctx's error; never does the call succeed on a
// connection its ctx broke. Over HTTP/2 the ctx's end reset the stream
// (or ended its body) though the Write or Read returned nil, and the
// next one failed (with a read, as an idle timeout or a 1006).
func TestCtxEndAsIOCompletes(t *testing.T) {
	for _, op := range []string{"write", "read"} {
		t.Run(op, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, proto, api string) {
				var hook atomic.Pointer[func()]
				wrote := false               // the server's Writes of one and two succeeded
				first := make(chan struct{}) // the server's first Read or Write returned
				serve := func(c *Conn) error {
					hookIO(c, &hook)
					bg := context.Background()
					ctx, cancel := context.WithCancel(bg)
					defer cancel()
					d := &c.wdl
					if op == "read" {
						d = &c.rdl
					}
					var seen error
					end := func() { cancel(); seen = waitCtxSeen(d) }
					hook.Store(&end)
					var err error
					if op == "write" {
						err = c.Write(ctx, MessageText, []byte("one"))
					} else {
						err = readWant(ctx, c, "one")
					}
					close(first)
					if hook.Load() != nil || seen != nil {
						return fmt.Errorf("the hook did not run (%v), %s: %v", seen, op, err)
					}
					if err != nil {
						if !errors.Is(err, context.Canceled) {
							return fmt.Errorf("%s failed with %v, not the ctx's error", op, err)
						}
						t.Logf("%s failed with the ctx's error: %v", op, err)
						return nil // allowed
					}
					if op == "write" {
						if err := c.Write(bg, MessageText, []byte("two")); err != nil {
							return fmt.Errorf("Write returned nil, and the next Write failed: %w", err)
						}
						wrote = true
					} else if err := readWant(bg, c, "two"); err != nil {
						return fmt.Errorf("Read returned nil, and the next Read failed: %w", err)
					}
					return nil
				}
				cc, res := ctxServe(t, proto, api, serve)
				ctx := testCtx(t)
				if op == "read" {
					// two comes after one was read, so that a Read reads it
					// from the stream.
					cc.Write(ctx, MessageText, []byte("one"))
					<-first
					cc.Write(ctx, MessageText, []byte("two"))
				}
				if err := <-res; err != nil {
					t.Fatalf("server: %v", err)
				}
				if wrote { // what they said they sent arrived
					for _, m := range []string{"one", "two"} {
						if err := readWant(ctx, cc, m); err != nil {
							t.Fatalf("client: %v", err)
						}
					}
				}
			})
		})
	}
}
