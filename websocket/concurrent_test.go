package websocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// TestConcurrentWriters: 50 goroutines write to one connection at once,
// whole messages and streamed ones of several frames, while the peer
// pings it; the peer reads every message whole (each names its writer
// and index and carries a pattern that shows a foreign frame), and
// writes after Close fail with net.ErrClosed, never a panic.
func TestConcurrentWriters(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			srv, cli := pair(t, e.start, nil, nil)
			const writers, each = 50, 20
			ctx := testCtx(t)
			var wg sync.WaitGroup
			for g := range writers {
				wg.Go(func() {
					for i := range each {
						msg := pattern(g, i, (g*each+i)%4*4000+10)
						if i%4 == 3 { // streamed: a frame per 4,096-byte Write
							w, err := srv.Writer(ctx, MessageBinary)
							if err != nil {
								t.Error(err)
								return
							}
							for p := msg; len(p) > 0; p = p[min(len(p), 4096):] {
								w.Write(p[:min(len(p), 4096)])
							}
							if err := w.Close(); err != nil {
								t.Error(err)
							}
							continue
						}
						if err := srv.Write(ctx, MessageText, msg); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			pings := make(chan error, 1)
			go func() { // the client pings the server while it writes: pongs go between frames
				var err error
				for range 5 {
					if err = srv.writeControl(ctx, ws.OpPing, []byte("x")); err != nil {
						break
					}
				}
				pings <- err
			}()
			seen := map[string]bool{}
			for range writers * each {
				_, msg, err := cli.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				var g, i int
				if _, err := fmt.Sscanf(string(msg), "%d/%d:", &g, &i); err != nil {
					t.Fatalf("message %.20q: %v", msg, err)
				}
				if want := pattern(g, i, (g*each+i)%4*4000+10); !bytes.Equal(msg, want) {
					t.Fatalf("message %d/%d: %d bytes, not the %d its writer sent", g, i, len(msg), len(want))
				}
				seen[fmt.Sprint(g, "/", i)] = true
			}
			wg.Wait()
			if err := <-pings; err != nil {
				t.Fatal(err)
			}
			if len(seen) != writers*each {
				t.Fatalf("%d distinct messages, want %d", len(seen), writers*each)
			}

			// Writers racing Close: errors, never a panic.
			var closedErrs atomic.Int32
			for range writers {
				wg.Go(func() {
					for range 50 {
						if err := srv.Write(ctx, MessageText, []byte("late")); err != nil {
							if !errors.Is(err, net.ErrClosed) {
								t.Errorf("Write racing Close: %v, want net.ErrClosed", err)
							}
							closedErrs.Add(1)
							return
						}
					}
				})
			}
			go func() {
				for {
					if _, _, err := cli.Read(ctx); err != nil {
						return
					}
				}
			}()
			srv.Close(ws.CloseNormal, "")
			wg.Wait()
			if err := srv.Write(ctx, MessageBinary, nil); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("Write after Close: %v", err)
			}
		})
	}
}

// TestReadContext: a Read whose ctx ends returns at once with the ctx's
// error; the read side is then unusable, writes still work, and Close
// does not hang.
func TestReadContext(t *testing.T) {
	srv, cli := pair(t, engines[1].start, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := srv.Read(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read: %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > promptly {
		t.Fatalf("Read returned after %v", d)
	}
	if _, _, err := srv.Read(testCtx(t)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Read: %v, want the read side's sticky error", err)
	}
	if err := srv.Write(testCtx(t), MessageText, []byte("still writes")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := cli.Read(testCtx(t)); err != nil || string(msg) != "still writes" {
		t.Fatalf("peer: %q %v", msg, err)
	}
	go cli.Read(context.Background())
	if err := srv.Close(ws.CloseNormal, ""); err != nil {
		t.Fatal(err)
	}

	// A ctx that ends between messages, after a successful Read, leaves
	// the connection as it was.
	srv, cli = pair(t, engines[0].start, nil, nil)
	ctx, cancel = context.WithCancel(context.Background())
	cli.Write(ctx, MessageText, []byte("one"))
	if _, _, err := srv.Read(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	cli.Write(testCtx(t), MessageText, []byte("two"))
	if _, msg, err := srv.Read(testCtx(t)); err != nil || string(msg) != "two" {
		t.Fatalf("after an ended ctx: %q %v", msg, err)
	}
}

// TestWriteContext: a Write blocked on a peer that does not read returns
// when its ctx ends; the connection is then closed.
func TestWriteContext(t *testing.T) {
	srv, _ := pair(t, engines[0].start, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	big := make([]byte, 1<<20)
	var err error
	for range 1000 { // until the socket buffers are full
		if err = srv.Write(ctx, MessageBinary, big); err != nil {
			break
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write: %v, want DeadlineExceeded", err)
	}
	if err := srv.Write(testCtx(t), MessageBinary, nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after an interrupted one: %v, want net.ErrClosed", err)
	}
}

// TestPing: Ping waits for its pong, which the peer's Read answers and
// this side's Read delivers (to OnPong too).
func TestPing(t *testing.T) {
	var pongs atomic.Int32
	srv, cli := pair(t, engines[1].start, nil, &DialOptions{Options: Options{OnPong: func([]byte) { pongs.Add(1) }}})
	ctx := testCtx(t)
	go srv.Read(ctx)
	go cli.Read(ctx)
	for range 3 {
		if err := cli.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if pongs.Load() != 3 {
		t.Fatalf("OnPong called %d times, want 3", pongs.Load())
	}
}

// TestKeepaliveAndIdle: with PingInterval below IdleTimeout, a quiet
// but live peer keeps the connection; a silent one (not reading, so not
// answering) is closed with 1001 and Read reports 1006.
func TestKeepaliveAndIdle(t *testing.T) {
	// Pings every 50 ms against a 1 s idle timeout: margins that hold on
	// a machine whose cores are busy with other tests.
	opts := &AcceptOptions{Options: Options{PingInterval: 50 * time.Millisecond, IdleTimeout: time.Second}}
	srv, cli := pair(t, engines[0].start, opts, nil)
	go cli.Read(context.Background()) // answers the pings
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if _, _, err := srv.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("live peer: %v, want the ctx to end first", err)
	}

	done := make(chan error, 1)
	c := dialRaw(t, engines[1].start(t, echoHandler(t, &AcceptOptions{Options: Options{IdleTimeout: 100 * time.Millisecond}}, done)), nil)
	c.expectClose(ws.CloseGoingAway)
	err := <-done
	if CloseStatus(err) != ws.CloseAbnormal || !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("Read: %v, want 1006 with ErrIdleTimeout", err)
	}
}

// TestIdleHoldsNoPooledBuffer: a burst of small messages moves reads to
// the pooled 4 KiB buffer (larger ones go from the socket straight into
// the message); a Read that then waits for the next message has given it
// back (an idle Conn holds no buffer on a socket of its own, 128 bytes
// over TLS).
func TestIdleHoldsNoPooledBuffer(t *testing.T) {
	srv, cli := pair(t, engines[0].start, nil, nil)
	ctx := testCtx(t)
	for i := range 100 {
		if err := cli.Write(ctx, MessageBinary, pattern(0, i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	sawBig := false
	for range 100 {
		if _, _, err := srv.Read(ctx); err != nil {
			t.Fatal(err)
		}
		sawBig = sawBig || srv.rd.big != nil
	}
	if !sawBig {
		t.Error("a burst of 100 messages of 100 bytes was read without the pooled buffer")
	}
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	srv.Read(short) // waits for a message that does not come
	if srv.rd.big != nil || len(srv.rd.buf) > smallBuf {
		t.Fatalf("a Read waiting on an idle connection held a %d-byte buffer", len(srv.rd.buf))
	}
}

// TestIdleAfterOneMessageHoldsNoPooledBuffer: a single message whose
// first read fills the inline buffer (and so would move the next read to
// the pooled one) leaves the next Read waiting with the inline buffer
// only. (It held 4 KiB per idle connection: a third of the blocking
// API's idle memory.)
func TestIdleAfterOneMessageHoldsNoPooledBuffer(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			srv, cli := pair(t, e.start, nil, nil)
			ctx := testCtx(t)
			if err := cli.Write(ctx, MessageBinary, pattern(0, 1, 1000)); err != nil {
				t.Fatal(err)
			}
			if _, msg, err := srv.Read(ctx); err != nil || len(msg) != 1000 {
				t.Fatalf("Read: %d bytes, %v", len(msg), err)
			}
			short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
			defer cancel()
			srv.Read(short) // waits for a message that does not come
			if srv.rd.big != nil || len(srv.rd.buf) > smallBuf {
				t.Fatalf("a Read waiting after one message held a %d-byte buffer", len(srv.rd.buf))
			}
		})
	}
}

// TestStalledReaderBoundsMemory: 64 goroutines write to a connection
// whose peer stopped reading. Writes wait for the socket (there is no
// queue to grow: a message is sent from the caller's slice), so memory
// stops growing once the socket buffers are full, and every writer gets
// the back-pressure: its ctx ends its wait, and the connection, whose
// stream may hold part of a frame, is closed.
func TestStalledReaderBoundsMemory(t *testing.T) {
	srv, _ := pair(t, engines[1].start, nil, nil) // the client never reads
	msg := make([]byte, 64<<10)
	sent, grew := flood(t, func(ctx context.Context) error { return srv.Write(ctx, MessageBinary, msg) }, context.DeadlineExceeded, net.ErrClosed)
	t.Logf("%d messages of 64 KiB went into the socket; heap grew %d KiB while 64 writers waited", sent, grew>>10)
	if grew > 4<<20 {
		t.Errorf("the heap grew %d KiB while writers waited on a peer that does not read: a queue is growing", grew>>10)
	}
}

// TestStalledSendHoldsItsQueue: 16 server connections whose clients
// stopped reading, each with its send queue filled (SendFail), hold about
// the queue's bound each, with permessage-deflate as without: the pooled
// compressor (about 1.2 MB) goes back before the compressed message is
// sent. It stayed with the send that waited: 1.4 MB a connection (found
// by a review helper).
func TestStalledSendHoldsItsQueue(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "deflate"}[compress], func(t *testing.T) {
			const conns = 16
			got := make(chan *Conn, conns)
			addr := engines[1].start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				c, err := Accept(w, r, &AcceptOptions{Compression: compress, Options: Options{SendQueueFull: SendFail}})
				if err != nil {
					t.Error(err)
					return
				}
				c.nc.(*net.TCPConn).SetWriteBuffer(8 << 10)
				got <- c
			}))
			dial := func(ctx context.Context, network, a string) (net.Conn, error) {
				nc, err := (&net.Dialer{}).DialContext(ctx, network, a)
				if err == nil {
					nc.(*net.TCPConn).SetReadBuffer(8 << 10)
				}
				return nc, err
			}
			rng := rand.New(rand.NewPCG(1, 2))
			msg := make([]byte, 32<<10)
			for i := range msg {
				msg[i] = 'a' + byte(rng.IntN(26)) // compresses to about 60%
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var clients []*Conn
			for range conns {
				cli, _, err := Dial(testCtx(t), "ws://"+addr, &DialOptions{Compression: compress, NetDialContext: dial})
				if err != nil {
					t.Fatal(err)
				}
				clients = append(clients, cli) // never read
				srv := <-got
				t.Cleanup(func() { srv.CloseNow(); cli.CloseNow() })
				for {
					if err := srv.Send(context.Background(), MessageText, msg); errors.Is(err, ErrSendQueueFull) {
						break
					} else if err != nil {
						t.Fatal(err)
					}
				}
			}
			time.Sleep(200 * time.Millisecond) // each queue's writer blocked in its write
			runtime.GC()
			runtime.GC() // the pools' victims too: what is pooled is not held
			runtime.ReadMemStats(&after)
			per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / conns
			t.Logf("live heap per stalled connection: %d KiB (send queue bound %d KiB)", per>>10, DefaultSendQueue>>10)
			if per > 2*DefaultSendQueue {
				t.Errorf("a stalled connection holds %d KiB, past twice its send queue's bound (%d KiB)", per>>10, DefaultSendQueue>>10)
			}
			runtime.KeepAlive(clients)
		})
	}
}

// flood runs 64 goroutines calling write, each until it fails, under a
// ctx of 500 ms, and returns how many calls succeeded and how much the
// heap grew by 300 ms (when a stalled peer's socket buffers are full).
// Every goroutine must end with one of the errors ok.
func flood(t *testing.T, write func(ctx context.Context) error, ok ...error) (sent, grew int64) {
	t.Helper()
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var n atomic.Int64
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			for {
				if err := write(ctx); err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	runtime.ReadMemStats(&during)
	wg.Wait()
	close(errs)
	for err := range errs {
		if !slices.ContainsFunc(ok, func(e error) bool { return errors.Is(err, e) }) {
			t.Errorf("a writer got %v, want one of %v", err, ok)
		}
	}
	return n.Load(), int64(during.HeapInuse) - int64(before.HeapInuse)
}
