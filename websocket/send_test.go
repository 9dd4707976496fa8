package websocket

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// numbered is a message of n bytes that starts with i.
func numbered(i, n int) []byte {
	b := pattern(0, i, max(n, 8))
	binary.BigEndian.PutUint64(b, uint64(i))
	return b
}

// readNumbered reads messages until it has k and checks that they are
// numbered from first on, whole.
func readNumbered(t *testing.T, ctx context.Context, c *Conn, first, k, n int) {
	t.Helper()
	for i := first; i < first+k; i++ {
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := numbered(i, n); !bytes.Equal(got, want) {
			t.Fatalf("message %d: got %d bytes numbered %d, want %d bytes numbered %d", i, len(got), binary.BigEndian.Uint64(got), len(want), i)
		}
	}
}

// TestSendOrder: one goroutine's Send, SendPrepared, Write,
// WritePrepared and Writer arrive in the order it called them, on both
// servers, with and without compression (Send compresses as Write
// does); Send copies its slice, so the caller may reuse it at once.
func TestSendOrder(t *testing.T) {
	for _, e := range engines {
		for _, compress := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/compression=%v", e.name, compress), func(t *testing.T) {
				srv, cli := pair(t, e.start, &AcceptOptions{Compression: compress}, &DialOptions{Compression: compress})
				ctx := testCtx(t)
				const total, size = 300, 1000
				buf := make([]byte, size)
				done := make(chan struct{})
				defer func() { <-done }()
				go func() {
					defer close(done)
					for i := range total {
						var err error
						switch i % 6 {
						case 0, 1:
							copy(buf, numbered(i, size))
							err = srv.Send(ctx, MessageBinary, buf) // buf is overwritten by the next
						case 2:
							var pm *PreparedMessage
							if pm, err = NewPreparedMessage(MessageBinary, numbered(i, size)); err == nil {
								err = srv.SendPrepared(ctx, pm)
							}
						case 3:
							err = srv.Write(ctx, MessageBinary, numbered(i, size))
						case 4:
							var pm *PreparedMessage
							if pm, err = NewPreparedMessage(MessageBinary, numbered(i, size)); err == nil {
								err = srv.WritePrepared(ctx, pm)
							}
						case 5:
							var w WriteCloser
							if w, err = srv.Writer(ctx, MessageBinary); err == nil {
								w.Write(numbered(i, size))
								err = w.Close()
							}
						}
						if err != nil {
							t.Errorf("message %d: %v", i, err)
							return
						}
					}
				}()
				readNumbered(t, ctx, cli, 0, total, size)
			})
		}
	}
}

// stalledPair is a server connection whose client does not read until
// resume is called (a TCP proxy in between holds the bytes back, so
// the client's own Read is not what stalls).
func stalledPair(t *testing.T, opts Options) (srv, cli *Conn, resume func()) {
	t.Helper()
	got := make(chan *Conn, 1)
	backend := engines[1].start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, &AcceptOptions{Options: opts})
		if err != nil {
			t.Error(err)
		}
		got <- c
	}))
	ln := listen(t)
	gate := make(chan struct{})
	outs := make(chan *net.TCPConn, 1)
	go func() {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", backend)
		if err != nil {
			in.Close()
			return
		}
		// Small socket buffers (which also stop the kernel's
		// autotuning from growing them) fill at once: a queue that
		// refused a message then stays full (fillQueue).
		out.(*net.TCPConn).SetReadBuffer(8 << 10)
		outs <- out.(*net.TCPConn)
		t.Cleanup(func() { in.Close(); out.Close() })
		go copyConn(out, in, nil) // client to server, at once
		copyConn(in, out, gate)   // server to client, after the handshake's answer, once resumed
	}()
	t.Cleanup(func() { ln.Close() })
	cli, _, err := Dial(testCtx(t), "ws://"+ln.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv = <-got
	tc, _ := srv.nc.(*net.TCPConn)
	if tc != nil {
		tc.SetWriteBuffer(8 << 10)
	}
	t.Cleanup(func() { srv.CloseNow(); cli.CloseNow() })
	out := <-outs
	var once sync.Once
	return srv, cli, func() {
		once.Do(func() {
			// Room again, so that what waited drains fast.
			out.SetReadBuffer(256 << 10)
			if tc != nil {
				tc.SetWriteBuffer(256 << 10)
			}
			close(gate)
		})
	}
}

// copyConn copies src to dst; with a gate, the first read's bytes (the
// handshake's answer) pass at once and the rest wait for it to close.
func copyConn(dst, src net.Conn, gate chan struct{}) {
	b := make([]byte, 32<<10)
	for first := true; ; first = false {
		if !first && gate != nil {
			<-gate
			gate = nil
		}
		n, err := src.Read(b)
		if n > 0 {
			if _, err := dst.Write(b[:n]); err != nil {
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// TestSendFailWhenFull: under SendFail, Send to a peer that stopped
// reading queues until its bound and then fails at once with
// ErrSendQueueFull, the connection still open; once the peer reads, it
// gets exactly the messages Send accepted, in order, then a later one.
func TestSendFailWhenFull(t *testing.T) {
	const limit, size = 64 << 10, 4 << 10
	srv, cli, resume := stalledPair(t, Options{SendQueue: limit, SendQueueFull: SendFail})
	ctx := testCtx(t)
	accepted := fillQueue(t, srv, limit, size, ErrSendQueueFull, func(i int) error {
		return srv.Send(ctx, MessageBinary, numbered(i, size))
	})
	queued := queuedBytes(srv)
	if queued > limit || queued+size <= limit {
		t.Errorf("the queue held %d bytes when full, want (%d, %d]", queued, limit-size, limit)
	}
	// Full again at once, and nothing queued by the failures.
	if err := srv.Send(ctx, MessageBinary, numbered(accepted, size)); !errors.Is(err, ErrSendQueueFull) {
		t.Fatalf("second Send on a full queue: %v, want ErrSendQueueFull", err)
	}
	t.Logf("%d messages of %d bytes accepted (%d bytes queued, the rest in the socket buffers)", accepted, size, queued)
	resume()
	// SendFail fails only when full: once the peer reads, Send queues
	// again (room comes as the queue drains).
	for {
		err := srv.Send(ctx, MessageBinary, numbered(accepted, size))
		if err == nil {
			break
		}
		if !errors.Is(err, ErrSendQueueFull) || ctx.Err() != nil {
			t.Fatal(err, ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	readNumbered(t, ctx, cli, 0, accepted+1, size)
}

// fillQueue sends messages numbered from 0 with send until one fails
// with full, and returns how many were accepted; it fails the test on
// another error, or when far more than limit was accepted. A queue that
// refused a message may still drain a little: its writer moves messages
// into the socket buffers while they have room. Once they are full it
// stops for good (the peer reads nothing), so fillQueue waits for c's
// queue to stay put, then fills it again: full, and staying full.
func fillQueue(t *testing.T, c *Conn, limit, size int, full error, send func(i int) error) int {
	t.Helper()
	i := 0
	fill := func() {
		t.Helper()
		for ; ; i++ {
			err := send(i)
			if errors.Is(err, full) {
				return
			}
			if err != nil {
				t.Fatalf("Send %d: %v", i, err)
			}
			if i > 1<<14 {
				t.Fatalf("%d MiB accepted by a queue of %d KiB whose peer does not read", i*size>>20, limit>>10)
			}
		}
	}
	fill()
	deadline := time.Now().Add(10 * time.Second)
	for prev, still := queuedBytes(c), 0; still < 5; {
		time.Sleep(20 * time.Millisecond)
		q := queuedBytes(c)
		if q != prev {
			prev, still = q, 0
		} else {
			still++
		}
		if time.Now().After(deadline) {
			t.Fatal("the send queue kept draining into a peer that reads nothing")
		}
	}
	fill()
	return i
}

// queuedBytes is what c's send queue holds.
func queuedBytes(c *Conn) int {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.sq == nil { // none while empty
		return 0
	}
	return c.sq.bytes
}

// TestSendBlockBackPressure: under SendBlock (the default), a Send that
// does not fit waits: its ctx ends the wait with nothing queued, and once
// the peer reads, Send goes through and everything arrives in order.
func TestSendBlockBackPressure(t *testing.T) {
	const limit, size = 64 << 10, 4 << 10
	srv, cli, resume := stalledPair(t, Options{SendQueue: limit})
	ctx := testCtx(t)
	accepted := fillQueue(t, srv, limit, size, context.DeadlineExceeded, func(i int) error {
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		return srv.Send(short, MessageBinary, numbered(i, size))
	})
	blocked := make(chan error, 1)
	go func() { blocked <- srv.Send(ctx, MessageBinary, numbered(accepted, size)) }()
	select {
	case err := <-blocked:
		t.Fatalf("Send on a full queue returned %v before the peer read", err)
	case <-time.After(100 * time.Millisecond):
	}
	resume()
	if err := <-blocked; err != nil {
		t.Fatalf("Send waiting for room: %v", err)
	}
	readNumbered(t, ctx, cli, 0, accepted+1, size)
}

// TestSendBoundsMemory: 64 goroutines Send 64 KiB messages to a peer that
// stopped reading. The queue stops at its bound, so the heap stops
// growing (a copy per queued message, no more); every sender gets the
// back-pressure: its ctx ends the wait. Closing the connection ends the
// queue's writer goroutine.
func TestSendBoundsMemory(t *testing.T) {
	srv, _, _ := stalledPair(t, Options{})
	msg := make([]byte, 64<<10)
	sent, grew := flood(t, func(ctx context.Context) error { return srv.Send(ctx, MessageBinary, msg) }, context.DeadlineExceeded)
	t.Logf("%d messages of 64 KiB queued; heap grew %d KiB while 64 senders waited", sent, grew>>10)
	if grew > 4<<20 {
		t.Errorf("the heap grew %d KiB with a send queue of %d KiB: the queue is not bounded", grew>>10, DefaultSendQueue>>10)
	}
	srv.closeMu.Lock()
	q := srv.sq
	srv.closeMu.Unlock()
	if q == nil {
		t.Fatal("no queue while the peer does not read")
	}
	srv.CloseNow()
	select {
	case <-q.drained:
	case <-time.After(promptly):
		t.Fatal("the queue's writer goroutine outlived the connection")
	}
	if err := srv.Send(context.Background(), MessageBinary, msg); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Send after CloseNow: %v, want net.ErrClosed", err)
	}
}

// TestSendThenClose: Close sends what Send queued before its close frame;
// an idle connection has no queue (no writer goroutine) once it drained.
func TestSendThenClose(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			srv, cli := pair(t, e.start, nil, nil)
			ctx := testCtx(t)
			const k, size = 50, 10 << 10
			for i := range k {
				if err := srv.Send(ctx, MessageBinary, numbered(i, size)); err != nil {
					t.Fatal(err)
				}
			}
			closed := make(chan error, 1)
			go func() { closed <- srv.Close(ws.CloseNormal, "bye") }()
			readNumbered(t, ctx, cli, 0, k, size)
			if _, _, err := cli.Read(ctx); CloseStatus(err) != ws.CloseNormal {
				t.Fatalf("after the queued messages: %v, want the close frame (1000)", err)
			}
			if err := <-closed; err != nil {
				t.Fatal(err)
			}
			srv.closeMu.Lock()
			q := srv.sq
			srv.closeMu.Unlock()
			if q != nil {
				t.Errorf("a queue (%d messages) is left after Close", len(q.msgs))
			}
		})
	}
}

// sendEcho echoes each message with Send, from the event handler.
type sendEcho struct{ closed chan error }

func (e *sendEcho) OnMessage(c *Conn, typ MessageType, msg []byte) {
	if err := c.Send(context.Background(), typ, msg); err != nil {
		c.CloseNow()
	}
}

func (e *sendEcho) OnClose(c *Conn, err error) { e.closed <- err }

// TestSendFromEvents: an event handler answers with Send (which copies
// the message it is given, valid only during OnMessage): every answer
// arrives whole and in order, on both servers. Under SendFail, with a
// queue that holds all of them (a queue that fills closes the
// connection: that is the point of SendFail).
func TestSendFromEvents(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			closed := make(chan error, 1)
			addr := e.start(t, eventHandler(t, &AcceptOptions{Options: Options{SendQueueFull: SendFail, SendQueue: 1 << 20}}, func() EventHandler { return &sendEcho{closed} }))
			ctx := testCtx(t)
			cli, _, err := Dial(ctx, "ws://"+addr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.CloseNow()
			const k, size = 200, 3000 // 600 KB: never full
			done := make(chan struct{})
			defer func() { <-done }()
			go func() {
				defer close(done)
				for i := range k {
					if err := cli.Write(ctx, MessageBinary, numbered(i, size)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			readNumbered(t, ctx, cli, 0, k, size)
			cli.Close(ws.CloseNormal, "")
			if err := <-closed; CloseStatus(err) != ws.CloseNormal {
				t.Errorf("OnClose got %v, want 1000", err)
			}
		})
	}
}
