package websocket

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// pair returns both ends of a connection: the server's from Accept (on
// the engine), the client's from Dial.
func pair(t *testing.T, start func(*testing.T, http.Handler) string, aopts *AcceptOptions, dopts *DialOptions) (srv, cli *Conn) {
	t.Helper()
	got := make(chan *Conn, 1)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, aopts)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}))
	cli, _, err := Dial(testCtx(t), "ws://"+addr, dopts)
	if err != nil {
		t.Fatal(err)
	}
	srv = <-got
	t.Cleanup(func() { srv.CloseNow(); cli.CloseNow() })
	return srv, cli
}

// TestCloseHandshake: either side's Close(code, reason) reaches the
// other's Read as a *CloseError, is answered with the same code, and
// Close returns once the answer came; later writes fail with
// net.ErrClosed.
func TestCloseHandshake(t *testing.T) {
	for _, e := range engines {
		for _, serverCloses := range []bool{true, false} {
			name := e.name + "/client closes"
			if serverCloses {
				name = e.name + "/server closes"
			}
			t.Run(name, func(t *testing.T) {
				srv, cli := pair(t, e.start, &AcceptOptions{Options: longClose}, &DialOptions{Options: longClose})
				closer, other := cli, srv
				if serverCloses {
					closer, other = srv, cli
				}
				readErr := make(chan error, 1)
				go func() {
					_, _, err := other.Read(context.Background())
					readErr <- err
				}()
				start := time.Now()
				if err := closer.Close(4001, "bye now"); err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d > promptly {
					t.Errorf("Close took %v: it waited past the answer", d)
				}
				err := <-readErr
				var ce *CloseError
				if !errors.As(err, &ce) || ce.Code != 4001 || ce.Reason != "bye now" {
					t.Fatalf("peer's Read: %v, want CloseError 4001 \"bye now\"", err)
				}
				for _, c := range []*Conn{closer, other} {
					if err := c.Write(context.Background(), MessageText, []byte("late")); !errors.Is(err, net.ErrClosed) {
						t.Errorf("Write after close: %v, want net.ErrClosed", err)
					}
				}
				if _, _, err := closer.Read(context.Background()); err == nil {
					t.Error("Read after Close succeeded")
				}
			})
		}
	}
}

// TestCloseNoCodeAndAbnormal: a close frame without a code is 1005 to
// the reader and answered with 1000; a connection that ends with no close
// frame is 1006.
func TestCloseNoCodeAndAbnormal(t *testing.T) {
	done := make(chan error, 1)
	c := dialRaw(t, engines[1].start(t, echoHandler(t, nil, done)), nil)
	c.frame(ws.OpClose, true, true, nil)
	c.expectClose(ws.CloseNormal)
	if err := <-done; CloseStatus(err) != ws.CloseNoStatus {
		t.Fatalf("Read: %v, want 1005", err)
	}

	c = dialRaw(t, engines[1].start(t, echoHandler(t, nil, done)), nil)
	c.frame(ws.OpText, false, true, []byte("half a mess"))
	c.nc.Close()
	err := <-done
	if CloseStatus(err) != ws.CloseAbnormal {
		t.Fatalf("Read: %v, want 1006", err)
	}
}

// TestCloseWithoutReader: Close with no Read in progress reads the
// peer's answer itself, discarding a data message that comes first.
func TestCloseWithoutReader(t *testing.T) {
	srv, cli := pair(t, engines[0].start, nil, &DialOptions{Options: longClose})
	ctx := testCtx(t)
	if err := cli.Write(ctx, MessageText, []byte("in flight")); err != nil {
		t.Fatal(err)
	}
	go func() {
		srv.Read(ctx) // "in flight", then the close frame, answered
		srv.Read(ctx)
	}()
	start := time.Now()
	if err := cli.Close(ws.CloseGoingAway, ""); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > promptly {
		t.Fatalf("Close took %v", d)
	}
}

// TestCloseTimeout: a peer that never answers bounds Close by its
// CloseTimeout.
func TestCloseTimeout(t *testing.T) {
	c := dialRaw(t, engines[0].start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, err := Accept(w, r, &AcceptOptions{Options: Options{CloseTimeout: 200 * time.Millisecond}})
		if err != nil {
			t.Error(err)
			return
		}
		start := time.Now()
		sc.Close(ws.CloseNormal, "")
		if d := time.Since(start); d < 150*time.Millisecond || d > promptly {
			t.Errorf("Close took %v, want about the 200 ms CloseTimeout", d)
		}
	})), nil)
	h, _ := c.read()
	if h.Opcode != ws.OpClose {
		t.Fatalf("got %v, want the close frame", h.Opcode)
	}
	time.Sleep(400 * time.Millisecond) // never answer
}

// TestSecondCloseWaitsForTheHandshake: on both servers, a Close while
// another Close waits for the peer's answer (a broadcaster closing on
// ErrSendQueueFull as the handler closes, say) waits for that handshake
// too, within its CloseTimeout: it closed the socket at once, and the
// peer's answer found the connection gone (found by a review helper).
func TestSecondCloseWaitsForTheHandshake(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			got := make(chan *Conn, 1)
			addr := e.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := Accept(w, r, &AcceptOptions{Options: longClose})
				if err != nil {
					t.Error(err)
				}
				got <- c
			}))
			c := dialRaw(t, addr, nil)
			sc := <-got
			closed := make(chan error, 2)
			go func() { closed <- sc.Close(4001, "first") }()
			if h, _ := c.read(); h.Opcode != ws.OpClose {
				t.Fatalf("got %v, want the close frame", h.Opcode)
			}
			go func() { closed <- sc.Close(4002, "second") }()
			time.Sleep(100 * time.Millisecond) // the second Close has run
			c.nc.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := c.br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("before the answer: %v; want the socket still open (a read timing out): the second Close cut the handshake", err)
			}
			c.nc.SetReadDeadline(time.Time{})
			c.frame(ws.OpClose, true, true, closePayload(4001, ""))
			for range 2 {
				select {
				case err := <-closed:
					if err != nil {
						t.Errorf("Close: %v", err)
					}
				case <-time.After(promptly):
					t.Fatal("a Close did not return after the answer")
				}
			}
			if _, err := c.br.ReadByte(); err != io.EOF {
				t.Errorf("after the handshake: %v, want the server to close the connection (EOF)", err)
			}
		})
	}
}

// TestCloseArguments: a code or reason no close frame may carry is an
// error from Close, not a panic.
func TestCloseArguments(t *testing.T) {
	srv, _ := pair(t, engines[0].start, nil, nil)
	long := string(make([]byte, 124))
	for _, tc := range []struct {
		code   ws.CloseCode
		reason string
	}{{1006, ""}, {1004, ""}, {999, ""}, {1000, long}, {1000, "\xff"}, {1005, "reason without code"}} {
		if err := srv.Close(tc.code, tc.reason); err == nil {
			t.Errorf("Close(%d, %q) = nil", tc.code, tc.reason)
		}
	}
}
