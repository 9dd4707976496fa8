package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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

// writeStallServer serves shape's response of size bytes, from data or
// the file at path. It reports when the handler starts, each Write of the
// 32 KiB shapes that returns whole, the error that ended the response,
// and when the connection closes. A positive sndbuf fixes the server
// socket's send buffer.
func writeStallServer(t *testing.T, shape writeStallShape, stall time.Duration, data []byte, size int, path string, sndbuf int,
	started, closed chan<- time.Time, progress func(), ended chan<- error) string {
	s := &Server{WriteStallTimeout: stall, ErrorLog: discardLog, ConnState: func(nc net.Conn, st ConnState) {
		switch st {
		case StateNew:
			if sndbuf > 0 {
				nc.(*net.TCPConn).SetWriteBuffer(sndbuf)
			}
		case StateClosed:
			closed <- time.Now()
		}
	}}
	if shape.native {
		s.Native = func(c *Ctx) {
			started <- time.Now()
			ended <- shape.ctx(c, data, size, path, progress)
		}
	} else {
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- time.Now()
			ended <- shape.handler(w, data, size, path, progress)
		})
	}
	return startServer(t, s)
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

// dialRead connects, with a receive buffer of rcvbuf bytes if positive,
// and sends a GET.
func dialRead(t *testing.T, addr string, rcvbuf int) *net.TCPConn {
	t.Helper()
	nc := dial(t, addr).(*net.TCPConn)
	if rcvbuf > 0 {
		nc.SetReadBuffer(rcvbuf)
	}
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestWriteStallCutsNonReaderWithinBound: a client that never reads the
// response (its receive buffer 4 KiB) is cut within 2 × WriteStallTimeout
// of the response's start, the documented bound, with a margin for
// scheduling, on every shape of big response and both APIs: the
// connection closes and the handler's write fails. The server's socket
// keeps its default, autotuned buffer: the kernel taking a little more
// of the response a while after the client stopped (the send buffer grows
// at the first zero-window probe) must not buy the client more periods,
// as it did when each write got a fresh WriteStallTimeout at its first
// timeout (3 periods).
func TestWriteStallCutsNonReaderWithinBound(t *testing.T) {
	const (
		stall  = time.Second
		margin = 400 * time.Millisecond
		size   = 64 << 20 // far more than socket buffers hold
	)
	data := make([]byte, size)
	path := writeStallFile(t, size)
	for _, shape := range writeStallShapes {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			started, closed := make(chan time.Time, 1), make(chan time.Time, 1)
			ended := make(chan error, 1)
			lastWrite := make(chan time.Time, 1)
			progress := func() {
				select {
				case <-lastWrite:
				default:
				}
				lastWrite <- time.Now()
			}
			addr := writeStallServer(t, shape, stall, data, size, path, 0, started, closed, progress, ended)
			dialRead(t, addr, 4096) // and never read
			var start, end time.Time
			select {
			case start = <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the handler did not start")
			}
			select {
			case end = <-closed:
			case <-time.After(2*stall + margin + 5*time.Second):
				t.Fatal("a client that never reads was not cut")
			}
			if err := <-ended; err == nil {
				t.Error("the response was written whole to a client that never reads")
			}
			took := end.Sub(start)
			last := ""
			select {
			case at := <-lastWrite:
				last = fmt.Sprintf(", %v after the last Write that returned", end.Sub(at).Round(time.Millisecond))
			default:
			}
			t.Logf("cut %v (%.2f × WriteStallTimeout) after the response began%s",
				took.Round(time.Millisecond), took.Seconds()/stall.Seconds(), last)
			if took > 2*stall+margin {
				t.Errorf("cut %v after the response began, want at most 2 × WriteStallTimeout (%v) + %v",
					took.Round(time.Millisecond), 2*stall, margin)
			}
			if took < stall {
				t.Errorf("cut %v after the response began, before WriteStallTimeout (%v)", took.Round(time.Millisecond), stall)
			}
		})
	}
}

// TestWriteStallKeepsSlowReader: a client that reads 4 KiB every 50 ms
// gets the whole body on every shape and both APIs, though the server's
// writes wait on it throughout (the body is 16 times the server's send
// buffer, fixed at 16 KiB, and the client's 16 KiB receive buffer). The
// server sees bytes move only when the client has read enough for TCP to
// reopen its window: on loopback, whose segments are 64 KiB, about every
// 400 ms; so WriteStallTimeout is 1 s here, and the writes are checked 8
// times per period while they wait.
func TestWriteStallKeepsSlowReader(t *testing.T) {
	const (
		stall = time.Second
		size  = 256 << 10
	)
	data := make([]byte, size)
	path := writeStallFile(t, size)
	for _, shape := range writeStallShapes {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			started, closed := make(chan time.Time, 1), make(chan time.Time, 1)
			ended := make(chan error, 1)
			addr := writeStallServer(t, shape, stall, data, size, path, 16<<10, started, closed, func() {}, ended)
			nc := dialRead(t, addr, 16<<10)
			nc.SetReadDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReaderSize(slowReader{nc}, 4<<10)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			if err != nil || n != size {
				t.Fatalf("slow reader cut after %d body bytes: %v", n, err)
			}
			if err := <-ended; err != nil {
				t.Fatalf("the handler's write failed: %v", err)
			}
			select {
			case <-closed:
				t.Fatal("the connection closed after a complete response")
			default:
			}
		})
	}
}

// slowReader reads at most 4 KiB every 50 ms.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(50 * time.Millisecond)
	return s.r.Read(p[:min(len(p), 4<<10)])
}

// TestWriteStallIdleHandlerNotCut: time the handler spends with nothing
// to write is no stall, even after a write deadline expired during the
// response: a handler that pauses for longer than WriteStallTimeout
// between writes, twice, to a client that reads everything, is not cut,
// on both APIs.
func TestWriteStallIdleHandlerNotCut(t *testing.T) {
	const stall = 200 * time.Millisecond
	for _, native := range []bool{false, true} {
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
		ended := make(chan error, 1)
		s := &Server{WriteStallTimeout: stall, ErrorLog: discardLog}
		if native {
			s.Native = func(c *Ctx) { ended <- write(c, c.Flush) }
		} else {
			s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ended <- write(w, http.NewResponseController(w).Flush)
			})
		}
		addr := startServer(t, s)
		resp, err := http.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "first second third" {
			t.Errorf("native %v: got %q, %v", native, b, err)
		}
		if err := <-ended; err != nil {
			t.Errorf("native %v: the handler's write failed: %v", native, err)
		}
	}
}
