package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// writeStallShape is one way of writing a big response body, on one API.
type writeStallShape struct {
	name   string
	native bool
	// handler or ctx sends size bytes of body (data[:size], or the file
	// at path) through an http.ResponseWriter or a *Ctx, reports each
	// Write that returned whole on progress, and returns the error that
	// ended it.
	handler func(w http.ResponseWriter, data []byte, size int, path string, progress func()) error
	ctx     func(c *Ctx, data []byte, size int, path string, progress func()) error
}

// writeStallShapes: a body in one Write, in 32 KiB Writes (with a
// Content-Length, and chunked), and a file through io.Copy (sendfile), on
// both APIs.
var writeStallShapes = []writeStallShape{
	{name: "handler/one-write", handler: func(w http.ResponseWriter, data []byte, size int, _ string, _ func()) error {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, err := w.Write(data[:size])
		return err
	}},
	{name: "handler/32KiB-writes", handler: func(w http.ResponseWriter, data []byte, size int, _ string, progress func()) error {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		return writeStallChunks(w, data[:size], progress)
	}},
	{name: "handler/32KiB-writes-chunked", handler: func(w http.ResponseWriter, data []byte, size int, _ string, progress func()) error {
		return writeStallChunks(w, data[:size], progress)
	}},
	{name: "handler/file", handler: func(w http.ResponseWriter, _ []byte, size int, path string, _ func()) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.Itoa(size))
		_, err = io.Copy(w, io.LimitReader(f, int64(size))) // ReadFrom: sendfile
		return err
	}},
	{name: "native/one-write", native: true, ctx: func(c *Ctx, data []byte, size int, _ string, _ func()) error {
		c.SetContentLength(int64(size))
		_, err := c.Write(data[:size])
		return err
	}},
	{name: "native/32KiB-writes", native: true, ctx: func(c *Ctx, data []byte, size int, _ string, progress func()) error {
		c.SetContentLength(int64(size))
		return writeStallChunks(c, data[:size], progress)
	}},
	{name: "native/32KiB-writes-chunked", native: true, ctx: func(c *Ctx, data []byte, size int, _ string, progress func()) error {
		return writeStallChunks(c, data[:size], progress)
	}},
	{name: "native/file", native: true, ctx: func(c *Ctx, _ []byte, size int, path string, _ func()) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return c.SendFile(f, int64(size)) // sendfile
	}},
}

func writeStallChunks(w io.Writer, data []byte, progress func()) error {
	for len(data) > 0 {
		n := min(len(data), 32<<10)
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		progress()
		data = data[n:]
	}
	return nil
}

// writeStallRun is what one shape's server reports: when the handler
// started, the error that ended the response and when, and when a
// connection closed.
type writeStallRun struct {
	started chan time.Time
	ended   chan writeStallEnd
	closed  chan time.Time
}

type writeStallEnd struct {
	err error
	at  time.Time
}

// serveWriteStall serves, on m, shape's response of size bytes, from
// data or the file at path, under WriteStallTimeout stall; progress is
// told of each Write of the 32 KiB shapes that returned whole. A positive
// sndbuf fixes the server sockets' send buffers.
func serveWriteStall(t *testing.T, m mode, shape writeStallShape, stall time.Duration, data []byte, size int, path string, sndbuf int,
	progress func()) (string, *http.Client, *writeStallRun) {
	run := &writeStallRun{started: make(chan time.Time, 1), ended: make(chan writeStallEnd, 1), closed: make(chan time.Time, 1)}
	s := &Server{WriteStallTimeout: stall, ConnState: func(nc net.Conn, st ConnState) {
		switch st {
		case StateNew:
			if sndbuf > 0 {
				tcpOf(nc).SetWriteBuffer(sndbuf)
			}
		case StateClosed:
			select {
			case run.closed <- time.Now():
			default:
			}
		}
	}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		run.started <- time.Now()
		err := shape.handler(w, data, size, path, progress)
		run.ended <- writeStallEnd{err, time.Now()}
	})
	nh := func(c *Ctx) {
		run.started <- time.Now()
		err := shape.ctx(c, data, size, path, progress)
		run.ended <- writeStallEnd{err, time.Now()}
	}
	base, c := m.serve(t, s, h, nh)
	return base, c, run
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// tcpOf returns the TCP connection under nc (a *tls.Conn's).
func tcpOf(nc net.Conn) *net.TCPConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	return nc.(*net.TCPConn)
}

// writeStallFile is a sparse file of size bytes for the file shapes.
func writeStallFile(t *testing.T, size int) string {
	path := filepath.Join(t.TempDir(), "body")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		t.Fatal(err)
	}
	return path
}

// stallClient returns a client like c, the mode's, that holds back what
// it has not read: its sockets' receive buffers are rcvbuf bytes, and on
// HTTP/2, where Go's client reads the socket whatever the handler of the
// response does, its streams' windows are window bytes. A body it stops
// reading then stalls the server's writes on every mode.
func stallClient(t *testing.T, c *http.Client, rcvbuf, window int) *http.Client {
	tr := c.Transport.(*http.Transport).Clone()
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			nc.(*net.TCPConn).SetReadBuffer(rcvbuf)
		}
		return nc, err
	}
	tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: window, MaxReceiveBufferPerConnection: 64 << 10}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// forShapes runs, for each of m's API's shapes, setup on the test's
// goroutine (servers and clients), then the function it returns, for all
// shapes at once (they wait on the clock, not the processor), and
// reports their failures by shape.
func forShapes(t *testing.T, m mode, setup func(shape writeStallShape) func() []string) {
	var runs []func() []string
	var names []string
	for _, shape := range writeStallShapes {
		if shape.native == m.native {
			runs, names = append(runs, setup(shape)), append(names, shape.name)
		}
	}
	fails := make([][]string, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { fails[i] = run() })
	}
	wg.Wait()
	for i, msgs := range fails {
		for _, msg := range msgs {
			t.Error(names[i] + ": " + msg)
		}
	}
}

// TestWriteStallCutsNonReaderWithinBound: a client that never reads the
// response is cut within 2 × WriteStallTimeout of the response's start,
// the documented bound (HTTP/2's and TLS's; HTTP/1.1's is tighter), with
// a margin for scheduling, on every shape of big response, every mode and
// both APIs: the handler's write fails, and on HTTP/1.1 the connection
// closes within the bound too (HTTP/2 resets the stream alone). The
// client's socket takes 4 KiB, its HTTP/2 streams' windows 64 KiB; the
// server's socket keeps its default, autotuned buffer: the kernel taking
// a little more of the response a while after the client stopped (the
// send buffer grows at the first zero-window probe) must not buy the
// client more periods, as it did when each write got a fresh
// WriteStallTimeout at its first timeout (3 periods).
func TestWriteStallCutsNonReaderWithinBound(t *testing.T) {
	const (
		stall = time.Second
		// Scheduling's margin: under a period, so that a regression to
		// three periods (3 s) still fails.
		margin = 600 * time.Millisecond
		size   = 64 << 20 // far more than socket buffers hold
	)
	data := make([]byte, size)
	path := writeStallFile(t, size)
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		forShapes(t, m, func(shape writeStallShape) func() []string {
			lastWrite := make(chan time.Time, 1)
			progress := func() {
				select {
				case <-lastWrite:
				default:
				}
				lastWrite <- time.Now()
			}
			base, c, run := serveWriteStall(t, m, shape, stall, data, size, path, 0, progress)
			c = stallClient(t, c, 4<<10, 64<<10)
			return func() (fails []string) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go func() { // and never read the body
					req, _ := http.NewRequestWithContext(ctx, "GET", base+"/", nil)
					if resp, err := c.Do(req); err == nil {
						<-ctx.Done()
						resp.Body.Close()
					}
				}()
				var start time.Time
				select {
				case start = <-run.started:
				case <-time.After(5 * time.Second):
					return []string{"the handler did not start"}
				}
				var end writeStallEnd
				select {
				case end = <-run.ended:
				case <-time.After(2*stall + margin + 5*time.Second):
					return []string{"a client that never reads was not cut"}
				}
				if end.err == nil {
					fails = append(fails, "the response was written whole to a client that never reads")
				}
				if !m.isH2() {
					select {
					case at := <-run.closed:
						end.at = later(end.at, at)
					case <-time.After(5 * time.Second):
						fails = append(fails, "the HTTP/1.1 connection stayed open after its write failed")
					}
				}
				took := end.at.Sub(start)
				last := ""
				select {
				case at := <-lastWrite:
					last = fmt.Sprintf(", %v after the last Write that returned", end.at.Sub(at).Round(time.Millisecond))
				default:
				}
				t.Logf("%s: cut %v (%.2f × WriteStallTimeout) after the response began%s",
					shape.name, took.Round(time.Millisecond), took.Seconds()/stall.Seconds(), last)
				if took > 2*stall+margin {
					fails = append(fails, fmt.Sprintf("cut %v after the response began, want at most 2 × WriteStallTimeout (%v) + %v",
						took.Round(time.Millisecond), 2*stall, margin))
				}
				if took < stall {
					fails = append(fails, fmt.Sprintf("cut %v after the response began, before WriteStallTimeout (%v)", took.Round(time.Millisecond), stall))
				}
				return fails
			}
		})
	})
}

// TestWriteStallKeepsSlowReader: a client that reads 4 KiB every 10 ms
// gets the whole body on every shape, every mode and both APIs, though
// the server's writes wait on it throughout: the body is 16 times the
// server's send buffer, fixed at 16 KiB, and the client's 16 KiB receive
// buffer, and on HTTP/2 its streams' 16 KiB windows. The server sees
// bytes move only when the client has read enough for TCP to reopen its
// window (on loopback, whose segments are 64 KiB, TCP's persist timer
// may space them by hundreds of milliseconds with buffers this small) or
// for Go's HTTP/2 client to send a WINDOW_UPDATE (every 4 KiB read); so
// WriteStallTimeout is 1 s here, and the writes are checked 8 times per
// period while they wait.
func TestWriteStallKeepsSlowReader(t *testing.T) {
	const (
		stall = time.Second
		size  = 256 << 10
	)
	data := make([]byte, size)
	path := writeStallFile(t, size)
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		forShapes(t, m, func(shape writeStallShape) func() []string {
			base, c, run := serveWriteStall(t, m, shape, stall, data, size, path, 16<<10, func() {})
			c = stallClient(t, c, 16<<10, 16<<10)
			return func() []string {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, "GET", base+"/", nil)
				resp, err := c.Do(req)
				if err != nil {
					return []string{err.Error()}
				}
				defer resp.Body.Close()
				n, err := io.Copy(io.Discard, bufio.NewReaderSize(slowReader{resp.Body}, 4<<10))
				if err != nil || n != size {
					return []string{fmt.Sprintf("slow reader cut after %d body bytes: %v", n, err)}
				}
				if end := <-run.ended; end.err != nil {
					return []string{fmt.Sprintf("the handler's write failed: %v", end.err)}
				}
				select {
				case <-run.closed:
					return []string{"the connection closed after a complete response"}
				default:
				}
				return nil
			}
		})
	})
}

// slowReader reads at most 4 KiB every 10 ms.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(10 * time.Millisecond)
	return s.r.Read(p[:min(len(p), 4<<10)])
}

// TestWriteStallIdleHandlerNotCut: time the handler spends with nothing
// to write is no stall, even after a write deadline expired during the
// response: a handler that pauses for longer than WriteStallTimeout
// between writes, twice, to a client that reads everything, is not cut,
// on every mode and both APIs; the whole response lasts longer than four
// periods.
func TestWriteStallIdleHandlerNotCut(t *testing.T) {
	const stall = 100 * time.Millisecond
	write := func(w io.Writer, flush func() error) error {
		for i, part := range []string{"first ", "second ", "third"} {
			if i > 0 {
				time.Sleep(2 * stall)
			}
			if _, err := io.WriteString(w, part); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
		return nil
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		ended := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ended <- write(w, http.NewResponseController(w).Flush)
		})
		nh := func(c *Ctx) { ended <- write(c, c.Flush) }
		base, c := m.serve(t, &Server{WriteStallTimeout: stall}, h, nh)
		resp, err := c.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "first second third" {
			t.Errorf("got %q, %v", b, err)
		}
		if err := <-ended; err != nil {
			t.Errorf("the handler's write failed: %v", err)
		}
	})
}

// TestWriteStallSlowSteadyDownload: WriteStallTimeout bounds a wait
// without progress, not a write: a client that reads a big download
// slowly but steadily (6 MiB at 4 MiB/s, through a 128 KiB socket
// buffer, with a 500 ms stall timeout) gets all of it, from a file and from
// memory, on every mode and both APIs, though a single write can take
// longer than the timeout to drain (a 4 MiB write takes 1 s): the server's socket holds 256 KiB,
// and hotpath's HTTP/2 engine writes up to 4 MiB of a mapped file at
// once (over h2c on Linux), HTTP/1.1 a whole file with sendfile and a
// whole Write at once. Its HTTP/2 windows are wide open, so that the
// socket, not flow control, is what the server waits on. One that stops
// reading is cut: it reads again once the handler's write failed (5 s at
// most), and the body ends short. The stall timeout leaves a reader
// descheduled for a while on a loaded machine its margin: at 150 ms, under
// CPU stress on both cores, readers were cut. (Only 4 KiB at a time through tiny
// buffers: TestWriteStallKeepsSlowReader.)
func TestWriteStallSlowSteadyDownload(t *testing.T) {
	const (
		size  = 6 << 20
		rate  = 4 << 20 // bytes a second
		stall = 500 * time.Millisecond
	)
	path := fileOf(t, bytes.Repeat([]byte("z"), size))
	mem := bytes.Repeat([]byte("m"), size)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		if r.URL.Path == "/mem" {
			w.Write(mem)
			return
		}
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		io.CopyN(w, f, size) // a LimitedReader of the *os.File: sendfile, or the mapped file over h2c
	})
	nh := func(c *Ctx) {
		if string(c.Path()) == "/mem" {
			c.SetContentLength(size)
			c.Write(mem)
			return
		}
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		c.SendFile(f, size)
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		started, ended := make(chan struct{}, 3), make(chan struct{}, 3)
		s := &Server{WriteStallTimeout: stall, ConnState: func(nc net.Conn, st ConnState) {
			if st == StateNew {
				tcpOf(nc).SetWriteBuffer(256 << 10)
			}
		}}
		base, c := m.serve(t, s,
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				h(w, r)
				ended <- struct{}{}
			}),
			func(c *Ctx) {
				started <- struct{}{}
				nh(c)
				ended <- struct{}{}
			})
		// download reads path through a connection of its own, at rate;
		// if stop, it stops reading once the handler has started, until
		// the handler has ended (cut, its write failed; on the hand-off
		// over TLS that may come 5 s later, as net/http closes the
		// connection under crypto/tls's close_notify timeout) or 2 s
		// passed, then reads what came.
		download := func(path string, stop bool) (int64, error) {
			tr := c.Transport.(*http.Transport).Clone()
			tr.ReadBufferSize = 64 << 10
			tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 1 << 28, MaxReceiveBufferPerConnection: 1 << 28}
			var d net.Dialer
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				nc, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				nc.(*net.TCPConn).SetReadBuffer(128 << 10)
				pc := &pacedConn{Conn: nc, rate: rate, start: time.Now()}
				if stop {
					pc.hold, pc.until = started, ended
				}
				return pc, nil
			}
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			return io.Copy(io.Discard, resp.Body)
		}
		for _, p := range []string{"/file", "/mem"} {
			if got, err := download(p, false); got != size {
				t.Errorf("%s read slowly but steadily: %d of %d bytes, %v", p, got, size, err)
			}
			<-started
			<-ended
		}
		if got, _ := download("/file", true); got >= size {
			t.Errorf("a client that stopped reading got the whole %d bytes: the stall timeout did not cut it", got)
		}
	})
}

// pacedConn reads at most rate bytes a second on average, counted from
// start, 32 KiB at a time; once hold has a value, its next read waits
// first for until to have one, 5 s at most (past 10 periods of the
// test's stall timeout, whose cut is due within 2).
type pacedConn struct {
	net.Conn
	rate        float64
	start       time.Time
	read        int64
	hold, until <-chan struct{}
}

func (c *pacedConn) Read(p []byte) (int, error) {
	if c.hold != nil {
		select {
		case <-c.hold:
			c.hold = nil
			select {
			case <-c.until:
			case <-time.After(5 * time.Second):
			}
			c.start, c.read = time.Now(), 0
		default:
		}
	}
	n, err := c.Conn.Read(p[:min(len(p), 32<<10)])
	c.read += int64(n)
	if ahead := time.Duration(float64(c.read)/c.rate*float64(time.Second)) - time.Since(c.start); ahead > 0 {
		time.Sleep(ahead)
	}
	return n, err
}

// TestH2StalledConnectionClosesAtOnce: on hotpath's HTTP/2 engine, once
// the connection's write failed (a client that opened its windows wide
// and stopped reading the socket, cut by WriteStallTimeout), the
// connection closes at once, over TLS too: crypto/tls's Close would first
// try to send close_notify to the socket that took nothing, for 5 s (and
// to a client still reading, after a half-sent record: a bad record MAC).
// The HTTP/1.1 form: TestChunkedStallClosesAtOnce.
func TestH2StalledConnectionClosesAtOnce(t *testing.T) {
	const stall = 300 * time.Millisecond
	runModes(t, func(t *testing.T, m mode) {
		p := newStallCloseProbe(stall, 64<<10)
		base, c := m.serve(t, p.s, p.handler(), p.native())
		nc := m.dialRaw(t, base, c)
		tcpOf(nc).SetReadBuffer(4 << 10)
		var enc h2.Encoder
		b := enc.StartBlock(nil)
		b = enc.AppendField(b, ":method", "GET")
		scheme := "https"
		if m.cleartext() {
			scheme = "http"
		}
		b = enc.AppendField(b, ":scheme", scheme)
		b = enc.AppendField(b, ":authority", "example.com")
		b = enc.AppendField(b, ":path", "/")
		out := append(h2.AppendSettings([]byte(h2.ClientPreface), h2.Setting{ID: h2.SettingInitialWindowSize, Val: h2.MaxWindowSize}),
			h2.AppendWindowUpdate(nil, 0, h2.MaxWindowSize-h2.DefaultInitialWindowSize)...)
		out = h2.AppendHeaders(out, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, b, 0)
		if _, err := nc.Write(out); err != nil {
			t.Fatal(err)
		}
		// And read nothing more.
		p.check(t, stall)
	}, modesWhere(func(m mode) bool { return m.isH2() && !m.isHandoff() })...)
}
