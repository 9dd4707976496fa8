//go:build linux

package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// sockPair is a sockConn dialed to a loopback listener, and the server's
// end of the connection.
func sockPair(t *testing.T) (*sockConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := fastSocket(nc).(*sockConn)
	if !ok {
		t.Fatalf("fastSocket(%T) is not a sockConn", nc)
	}
	t.Cleanup(func() { s.Close(); srv.Close() })
	return s, srv.(*net.TCPConn)
}

// wantOpError checks that err is a *net.OpError for op wrapping target.
func wantOpError(t *testing.T, err error, op string, target error) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != op || !errors.Is(err, target) {
		t.Fatalf("error %#v (%v): want a *net.OpError %q wrapping %v", err, err, op, target)
	}
}

func TestSockConnMovesBytesBothWays(t *testing.T) {
	s, srv := sockPair(t)
	// Small and large (past rawIOMax) writes, each echoed back, read with
	// small and large buffers; the server answers late, so reads wait.
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*rawIOMax)/16)
	go func() {
		time.Sleep(20 * time.Millisecond)
		io.Copy(srv, srv)
	}()
	for _, msg := range [][]byte{[]byte("hello"), big} {
		for _, size := range []int{7, 2 * rawIOMax} {
			if n, err := s.Write(msg); n != len(msg) || err != nil {
				t.Fatalf("Write(%d bytes) = %d, %v", len(msg), n, err)
			}
			got := make([]byte, 0, len(msg))
			buf := make([]byte, size)
			for len(got) < len(msg) {
				n, err := s.Read(buf[:min(size, len(msg)-len(got))])
				if err != nil {
					t.Fatalf("Read after %d of %d bytes: %v", len(got), len(msg), err)
				}
				got = append(got, buf[:n]...)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("read back %d bytes, not the %d written", len(got), len(msg))
			}
		}
	}
	if n, err := s.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v", n, err)
	}
	// net.Buffers goes through the embedded TCPConn (writev).
	bufs := net.Buffers{[]byte("a"), []byte("bc")}
	if n, err := bufs.WriteTo(s); n != 3 || err != nil {
		t.Fatalf("Buffers.WriteTo = %d, %v", n, err)
	}
	three := make([]byte, 3)
	if _, err := io.ReadFull(s, three); err != nil || string(three) != "abc" {
		t.Fatalf("read %q, %v", three, err)
	}
	srv.CloseWrite()
	if n, err := s.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read at the peer's end = %d, %v; want 0, io.EOF", n, err)
	}
}

// A write with no room in the socket waits on the poller and finishes
// once the reader drains it, bytes in order.
func TestSockConnWriteWaitsForRoom(t *testing.T) {
	s, srv := sockPair(t)
	s.SetWriteBuffer(16 << 10)
	srv.SetReadBuffer(16 << 10)
	msg := make([]byte, rawIOMax)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	done := make(chan error, 1)
	go func() {
		for range 2 {
			if n, err := s.Write(msg); n != len(msg) || err != nil {
				s.Close()
				done <- fmt.Errorf("Write = %d, %v; want %d, nil", n, err, len(msg))
				return
			}
		}
		done <- nil
	}()
	time.Sleep(50 * time.Millisecond) // the writer fills the buffers and waits
	got, err := io.ReadAll(io.LimitReader(srv, int64(2*len(msg))))
	if err != nil || len(got) != 2*len(msg) {
		t.Fatalf("read %d bytes, %v (writer: %v)", len(got), err, <-done)
	}
	for i := range 2 {
		if !bytes.Equal(got[i*len(msg):(i+1)*len(msg)], msg) {
			t.Fatalf("write %d arrived changed", i)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSockConnErrorsAreNetConns(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		s, _ := sockPair(t)
		s.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err := s.Read(make([]byte, 8))
		wantOpError(t, err, "read", os.ErrDeadlineExceeded)
		if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
			t.Fatalf("%v: not a timeout", err)
		}
		s.SetWriteDeadline(aLongTimeAgo)
		_, err = s.Write([]byte("x"))
		wantOpError(t, err, "write", os.ErrDeadlineExceeded)
	})
	t.Run("closed", func(t *testing.T) {
		s, _ := sockPair(t)
		errc := make(chan error, 1)
		go func() {
			_, err := s.Read(make([]byte, 8))
			errc <- err
		}()
		time.Sleep(10 * time.Millisecond) // the read waits on the poller
		s.Close()
		wantOpError(t, <-errc, "read", net.ErrClosed)
		_, err := s.Write([]byte("x"))
		wantOpError(t, err, "write", net.ErrClosed)
	})
	t.Run("reset", func(t *testing.T) {
		s, srv := sockPair(t)
		srv.SetLinger(0)
		srv.Close() // RST
		time.Sleep(10 * time.Millisecond)
		_, err := s.Read(make([]byte, 8))
		wantOpError(t, err, "read", syscall.ECONNRESET)
		if _, err = s.Write([]byte("x")); err == nil {
			_, err = s.Write([]byte("x"))
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "write" || !(errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)) {
			t.Fatalf("write after a reset: %v; want a write error with EPIPE or ECONNRESET", err)
		}
	})
}

// A connection of another type (a DialContext's wrapper) is left as it is.
func TestFastSocketLeavesOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := fastSocket(a); got != a {
		t.Fatalf("fastSocket(net.Pipe) = %T", got)
	}
}
