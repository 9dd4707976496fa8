package server

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"time"
)

// fakeConn is an in-memory net.Conn: reads replay the same input, a
// number of times, in chunks of up to readSize bytes (all of it at once
// when readSize is 0, so requests arrive pipelined); writes are counted
// and kept (when keep is set).
type fakeConn struct {
	input    []byte
	repeat   int // how many times input is served; then io.EOF
	readSize int
	pos      int
	served   int

	writes int
	bytes  int
	keep   bool
	out    []byte
}

func (f *fakeConn) Read(p []byte) (int, error) {
	if f.pos == len(f.input) {
		if f.served+1 >= f.repeat {
			return 0, io.EOF
		}
		f.served++
		f.pos = 0
	}
	src := f.input[f.pos:]
	if f.readSize > 0 && len(src) > f.readSize {
		src = src[:f.readSize]
	}
	n := copy(p, src)
	f.pos += n
	return n, nil
}

func (f *fakeConn) Write(p []byte) (int, error) {
	f.writes++
	f.bytes += len(p)
	if f.keep {
		f.out = append(f.out, p...)
	}
	return len(p), nil
}

func (f *fakeConn) Close() error                       { return nil }
func (f *fakeConn) LocalAddr() net.Addr                { return fakeAddr{} }
func (f *fakeConn) RemoteAddr() net.Addr               { return fakeAddr{} }
func (f *fakeConn) SetDeadline(t time.Time) error      { return nil }
func (f *fakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (f *fakeConn) SetWriteDeadline(t time.Time) error { return nil }

type fakeAddr struct{}

func (fakeAddr) Network() string { return "fake" }
func (fakeAddr) String() string  { return "fake:0" }

// serveFake runs one connection of s over f on the calling goroutine.
func serveFake(s *Server, f *fakeConn) {
	s.resolve()
	c := newConn(s, f, context.WithValue(context.Background(), http.ServerContextKey, s.httpServer))
	s.trackConn(c, true)
	c.serve()
}

// heldBuffers reports whether c holds a buffer set.
func heldBuffers(c *conn) bool { return c.setHeld.Load() }

func newDiscardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
