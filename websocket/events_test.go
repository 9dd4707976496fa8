package websocket

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
)

// echoEvents echoes every message and reports the end on closed.
type echoEvents struct {
	closed chan error
}

func (e *echoEvents) OnMessage(c *Conn, typ MessageType, msg []byte) {
	c.Write(context.Background(), typ, msg)
}

func (e *echoEvents) OnClose(c *Conn, err error) {
	if e.closed != nil {
		e.closed <- err
	}
}

// eventHandler accepts with opts and hands the connection to h, then
// returns: the connection lives on without the handler's goroutine.
func eventHandler(t *testing.T, opts *AcceptOptions, h func() EventHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, opts)
		if err != nil {
			t.Error(err)
			return
		}
		if err := c.Start(h()); err != nil {
			t.Error(err)
		}
	})
}

// TestEventsEcho: a started connection echoes every size, text and
// binary, on both servers, and over TLS; the handler returned long
// before.
func TestEventsEcho(t *testing.T) {
	type target struct {
		url  string
		opts *DialOptions
	}
	targets := map[string]func(t *testing.T, h http.Handler) target{}
	for _, e := range engines {
		targets[e.name] = func(t *testing.T, h http.Handler) target { return target{url: "ws://" + e.start(t, h)} }
	}
	targets["net/http TLS"] = func(t *testing.T, h http.Handler) target {
		srv := httptest.NewTLSServer(h)
		t.Cleanup(srv.Close)
		pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
		return target{url: "wss" + strings.TrimPrefix(srv.URL, "https"), opts: &DialOptions{TLSConfig: &tls.Config{RootCAs: pool}}}
	}
	targets["hotpath TLS"] = func(t *testing.T, h http.Handler) target {
		url, opts := startHotpathTLS(t, h)
		return target{url: url, opts: opts}
	}
	for name, start := range targets {
		t.Run(name, func(t *testing.T) {
			closed := make(chan error, 1)
			tg := start(t, eventHandler(t, nil, func() EventHandler { return &echoEvents{closed: closed} }))
			ctx := testCtx(t)
			c, _, err := Dial(ctx, tg.url, tg.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range echoSizes {
				for _, typ := range []MessageType{MessageText, MessageBinary} {
					echoWhole(t, ctx, c, typ, n)
				}
			}
			if err := c.Close(ws.CloseNormal, "done"); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-closed:
				var ce *CloseError
				if !errors.As(err, &ce) || ce.Code != ws.CloseNormal || ce.Reason != "done" {
					t.Errorf("OnClose(%v), want the client's close frame (1000, done)", err)
				}
			case <-time.After(promptly):
				t.Fatal("no OnClose after the close handshake")
			}
		})
	}
}

// TestEventsFragmentsAndControl: a message in fragments with a ping
// between them, and one that came with the handshake's bytes, arrive
// whole; the ping is answered first.
func TestEventsFragmentsAndControl(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			addr := e.start(t, eventHandler(t, nil, func() EventHandler { return &echoEvents{} }))
			early := ws.AppendClientFrame(nil, ws.OpBinary, true, rawMask, []byte("early"))
			c := dialRaw(t, addr, early)
			if h, p := c.read(); h.Opcode != ws.OpBinary || string(p) != "early" {
				t.Fatalf("got %v %q, want the early message echoed", h.Opcode, p)
			}
			c.frame(ws.OpText, false, true, []byte("Hel"))
			time.Sleep(20 * time.Millisecond) // the connection may park mid-message: it must not
			c.frame(ws.OpPing, true, true, []byte("p"))
			c.frame(ws.OpContinuation, true, true, []byte("lo"))
			if h, p := c.read(); h.Opcode != ws.OpPong || string(p) != "p" {
				t.Fatalf("got %v %q, want the pong", h.Opcode, p)
			}
			if h, p := c.read(); h.Opcode != ws.OpText || string(p) != "Hello" {
				t.Fatalf("got %v %q, want Hello", h.Opcode, p)
			}
			c.frame(ws.OpText, true, true, []byte{0xff}) // bad UTF-8: 1007
			c.expectClose(ws.CloseInvalidPayload)
		})
	}
}

// TestEventsIdleHoldNoGoroutine: started connections that went idle hold
// no goroutine of the package's (but a readiness set's waiter per set)
// and are parked; each answers a message after the idle spell.
func TestEventsIdleHoldNoGoroutine(t *testing.T) {
	if !park.Supported {
		t.Skip("no readiness sets on this platform: a goroutine reads each connection")
	}
	const n = 100
	type target struct {
		name string
		url  func(t *testing.T, h http.Handler) (string, *DialOptions)
	}
	targets := []target{{"hotpath TLS", startHotpathTLS}}
	for _, e := range engines {
		targets = append(targets, target{e.name, func(t *testing.T, h http.Handler) (string, *DialOptions) { return "ws://" + e.start(t, h), nil }})
	}
	for _, e := range targets {
		t.Run(e.name, func(t *testing.T) {
			url, opts := e.url(t, eventHandler(t, nil, func() EventHandler { return &echoEvents{} }))
			ctx := testCtx(t)
			before := runtime.NumGoroutine()
			conns := make([]*Conn, n)
			for i := range conns {
				c, _, err := Dial(ctx, url, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.CloseNow() })
				conns[i] = c
				if err := c.Write(ctx, MessageText, []byte("hi")); err != nil {
					t.Fatal(err)
				}
				if _, msg, err := c.Read(ctx); err != nil || string(msg) != "hi" {
					t.Fatalf("conn %d: %q %v", i, msg, err)
				}
			}
			// Resumers linger park.Linger to twice that after their
			// last connection.
			sets := len(eventSets())
			deadline := time.Now().Add(2*park.Linger + promptly)
			for {
				g, parked := runtime.NumGoroutine()-before, parkedEvents()
				if g <= sets && parked == n {
					t.Logf("%d idle connections: %d goroutines more than before them, %d parked", n, g, parked)
					break
				}
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<16)
					t.Fatalf("%d idle connections: %d goroutines more than before them (want at most %d, the sets' waiters), %d parked\n%s",
						n, g, sets, parked, buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(20 * time.Millisecond)
			}
			for i, c := range conns {
				msg := fmt.Sprintf("again %d", i)
				if err := c.Write(ctx, MessageText, []byte(msg)); err != nil {
					t.Fatal(err)
				}
				if _, got, err := c.Read(ctx); err != nil || string(got) != msg {
					t.Fatalf("conn %d after idle: %q %v", i, got, err)
				}
			}
		})
	}
}

// parkedEvents counts the connections parked in the package's sets.
func parkedEvents() int {
	n := 0
	for _, s := range eventSets() {
		n += s.Parked()
	}
	return n
}

// TestEventsClose: each way a started connection ends reaches OnClose
// once: the peer's close handshake, the server's (Close from OnMessage),
// CloseNow on a parked connection, the peer gone, the idle timeout.
func TestEventsClose(t *testing.T) {
	start := func(t *testing.T, opts *AcceptOptions, onMsg func(c *Conn, msg []byte)) (string, chan error, chan *Conn) {
		closed, started := make(chan error, 2), make(chan *Conn, 1)
		addr := engines[1].start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := Accept(w, r, opts)
			if err != nil {
				t.Error(err)
				return
			}
			h := &closerEvents{closed: closed, onMsg: onMsg}
			if err := c.Start(h); err != nil {
				t.Error(err)
			}
			started <- c
		}))
		return addr, closed, started
	}
	wait := func(t *testing.T, closed chan error) error {
		t.Helper()
		select {
		case err := <-closed:
			select {
			case err2 := <-closed:
				t.Errorf("OnClose twice: %v, then %v", err, err2)
			case <-time.After(50 * time.Millisecond):
			}
			return err
		case <-time.After(promptly):
			t.Fatal("no OnClose")
		}
		return nil
	}
	// Close from OnMessage itself, and from another goroutine while the
	// loop goes on. From OnMessage it returns once the close frame is
	// sent: the loop, which reads the answer, is the goroutine in it (it
	// waited its whole CloseTimeout, and OnClose got net.ErrClosed).
	for _, from := range []string{"OnMessage", "another goroutine"} {
		t.Run("server closes from "+from, func(t *testing.T) {
			returned := make(chan struct{})
			opts := &AcceptOptions{Options: Options{CloseTimeout: time.Minute}}
			addr, closed, _ := start(t, opts, func(c *Conn, msg []byte) {
				if from == "OnMessage" {
					c.Close(4001, "bye now")
					close(returned)
					return
				}
				go func() { c.Close(4001, "bye now"); close(returned) }()
			})
			c := dialRaw(t, addr, nil)
			c.frame(ws.OpText, true, true, []byte("close please"))
			for {
				h, p := c.read()
				if h.Opcode == ws.OpClose {
					if code, reason, _ := ws.ParseClose(p); code != 4001 || string(reason) != "bye now" {
						t.Fatalf("close frame %d %q", code, reason)
					}
					break
				}
			}
			c.frame(ws.OpClose, true, true, closePayload(4001, ""))
			var ce *CloseError
			if err := wait(t, closed); !errors.As(err, &ce) || ce.Code != 4001 {
				t.Errorf("OnClose(%v), want the peer's answer (4001)", err)
			}
			select {
			case <-returned:
			case <-time.After(promptly):
				t.Error("Close did not return after the handshake")
			}
		})
	}
	t.Run("CloseNow while parked", func(t *testing.T) {
		addr, closed, started := start(t, nil, nil)
		c := dialRaw(t, addr, nil)
		sc := <-started
		time.Sleep(50 * time.Millisecond) // parked by now, or about to: either way
		sc.CloseNow()
		if err := wait(t, closed); !errors.Is(err, net.ErrClosed) {
			t.Errorf("OnClose(%v), want net.ErrClosed", err)
		}
		if _, err := c.br.ReadByte(); err == nil {
			t.Error("the socket is still open")
		}
	})
	t.Run("peer gone", func(t *testing.T) {
		addr, closed, _ := start(t, nil, nil)
		c := dialRaw(t, addr, nil)
		c.nc.Close()
		if err := wait(t, closed); CloseStatus(err) != ws.CloseAbnormal {
			t.Errorf("OnClose(%v), want 1006", err)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		addr, closed, _ := start(t, &AcceptOptions{Options: Options{IdleTimeout: 200 * time.Millisecond}}, nil)
		c := dialRaw(t, addr, nil)
		c.expectClose(ws.CloseGoingAway)
		if err := wait(t, closed); !errors.Is(err, ErrIdleTimeout) {
			t.Errorf("OnClose(%v), want ErrIdleTimeout", err)
		}
	})
}

// closerEvents reports OnClose on closed and runs onMsg for each message.
type closerEvents struct {
	closed chan error
	onMsg  func(c *Conn, msg []byte)
}

func (e *closerEvents) OnMessage(c *Conn, typ MessageType, msg []byte) {
	if e.onMsg != nil {
		e.onMsg(c, msg)
	}
}

func (e *closerEvents) OnClose(c *Conn, err error) { e.closed <- err }

// TestEventsStartRules: Read fails after Start, Start fails a second
// time, and OnMessage's calls never overlap for one connection.
func TestEventsStartRules(t *testing.T) {
	var mu sync.Mutex
	inside, overlaps := 0, 0
	got := make(chan int, 100)
	h := &funcEvents{onMsg: func(c *Conn, typ MessageType, msg []byte) {
		mu.Lock()
		inside++
		if inside > 1 {
			overlaps++
		}
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		inside--
		mu.Unlock()
		got <- len(msg)
	}}
	srvConn := make(chan *Conn, 1)
	addr := engines[0].start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		if err := c.Start(h); err != nil {
			t.Error(err)
		}
		if err := c.Start(h); err == nil {
			t.Error("a second Start succeeded")
		}
		if _, _, err := c.Read(context.Background()); !errors.Is(err, errEventMode) {
			t.Errorf("Read after Start: %v", err)
		}
		srvConn <- c
	}))
	ctx := testCtx(t)
	c, _, err := Dial(ctx, "ws://"+addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	<-srvConn
	for i := range 50 {
		if err := c.Write(ctx, MessageBinary, make([]byte, i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		if n := <-got; n != i {
			t.Fatalf("message %d had %d bytes: out of order", i, n)
		}
	}
	if overlaps != 0 {
		t.Errorf("OnMessage overlapped itself %d times", overlaps)
	}
}

type funcEvents struct {
	onMsg func(c *Conn, typ MessageType, msg []byte)
}

func (e *funcEvents) OnMessage(c *Conn, typ MessageType, msg []byte) { e.onMsg(c, typ, msg) }
func (e *funcEvents) OnClose(c *Conn, err error)                     {}

// startHotpathTLS serves h over TLS on hotpath's server and returns the
// wss:// URL and the options that trust its certificate.
func startHotpathTLS(t *testing.T, h http.Handler) (string, *DialOptions) {
	ts := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate
	t.Cleanup(ts.Close)
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ln := listen(t)
	s := &server.Server{Handler: h, TLSConfig: &tls.Config{Certificates: ts.TLS.Certificates}}
	go s.ServeTLS(ln, "", "")
	t.Cleanup(func() { s.Close() })
	return "wss://" + ln.Addr().String(), &DialOptions{TLSConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}}
}

// TestEventConnSize: an idle event connection holds its eventConn; 96
// bytes is a size class of Go's allocator, and a field more must not push
// it to the next (112) unnoticed.
func TestEventConnSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("sizes are for 64-bit platforms")
	}
	if n := unsafe.Sizeof(eventConn{}); n > 96 {
		t.Errorf("eventConn is %d bytes, want at most 96", n)
	}
}
