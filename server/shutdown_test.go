package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Shutdown on HTTP/1.1: an idle keep-alive connection gets a quiet period
// for a request already on its way, and Shutdown's wake-up of idle
// connections must not hurt one that just turned active. (HTTP/2 tells
// its client with GOAWAY which streams it will still serve, and has no
// such race: TestSemShutdownFinishesInFlight runs Shutdown on every
// mode.)

// TestShutdownQuietPeriodServesRequestOnItsWay: a client whose idle
// keep-alive connection sends its next request just after Shutdown
// began (in the connection's quiet period) gets an answer with
// Connection: close, not a closed connection; then the connection ends
// and Shutdown returns. On HTTP/1.1, cleartext and TLS, both APIs, in
// raw bytes: the request must reach a connection the server already
// decided to close.
func TestShutdownQuietPeriodServesRequestOnItsWay(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		nh := func(c *Ctx) { c.WriteString("ok") }
		s := &Server{}
		base, c := m.serve(t, s, h, nh)
		nc := m.dialRaw(t, base, c)
		br := bufio.NewReader(nc)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		readResponse(t, br, "GET")
		conn := onlyConn(t, s)
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(t.Context()) }()
		waitFor(t, "the idle connection's quiet period", conn.quiet.Load)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || body != "ok" || !resp.Close {
			t.Fatalf("%d %q close=%v; want 200 ok with Connection: close", resp.StatusCode, body, resp.Close)
		}
		expectClosed(t, br)
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() })...)
}

// TestShutdownInterruptDuringLargeBodyRead: Shutdown's wake-up of idle
// connections can land on one that just turned active (it checked the
// state an instant before): a large body read it interrupts goes on, as
// the small reads do, even with no ReadStallTimeout to extend it. On
// HTTP/1.1, cleartext and TLS, both APIs: it calls the wake-up
// (conn.interrupt) itself, as the race would, on the HTTP/1.1 engine's
// connection.
func TestShutdownInterruptDuringLargeBodyRead(t *testing.T) {
	const part, length = 1 << 20, 4 << 20
	runModes(t, func(t *testing.T, m mode) {
		var read atomic.Int64
		got := make(chan string, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(countingDiscard{&read}, r.Body) // large reads straight from the socket
			got <- fmt.Sprint(n, " ", err)
			io.WriteString(w, "done")
		})
		nh := func(x *Ctx) {
			n, err := io.Copy(countingDiscard{&read}, x.Body()) // WriteTo: large reads straight from the socket
			got <- fmt.Sprint(n, " ", err)
			x.WriteString("done")
		}
		s := &Server{ReadStallTimeout: -1, MaxRequestBodyBytes: -1}
		base, c := m.serve(t, s, h, nh)
		nc := m.dialRaw(t, base, c)
		fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", length)
		nc.Write(make([]byte, part))
		waitFor(t, "the handler to read the first part", func() bool { return read.Load() == part })
		conn := onlyConn(t, s)
		conn.interrupt() // the handler waits for more, or is about to
		waitFor(t, "the body read to take the interrupt", func() bool { return !conn.interrupted.Load() })
		nc.Write(make([]byte, length-part))
		select {
		case s := <-got:
			if s != fmt.Sprint(length, " <nil>") {
				t.Fatalf("body after the interrupt: %s", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the body read did not end")
		}
		if resp, body := readResponse(t, bufio.NewReader(nc), "POST"); resp.StatusCode != 200 || body != "done" {
			t.Fatalf("response: %d %q", resp.StatusCode, body)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() })...)
}

// countingDiscard discards what is written, counting it.
type countingDiscard struct{ n *atomic.Int64 }

func (w countingDiscard) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// onlyConn waits until s tracks one HTTP/1.1 connection and returns it.
func onlyConn(t *testing.T, s *Server) *conn {
	t.Helper()
	var c *conn
	waitFor(t, "one connection", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for k := range s.conns {
			c = k
		}
		return len(s.conns) == 1
	})
	return c
}

// TestCloseRacingServe: Close called while a Serve started just before
// it is still setting up (a test's cleanup, a program that fails at
// start) neither races with it (-race) nor leaves anything running:
// Serve returns ErrServerClosed and no goroutine of the server is left,
// the idle-connection machinery's included.
//
// Modes: none: it is about Serve's start, before any connection.
func TestCloseRacingServe(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 50 {
		s := &Server{Handler: http.NotFoundHandler()}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() { served <- s.Serve(ln) }()
		s.Close()
		select {
		case err := <-served:
			if err != ErrServerClosed {
				t.Fatalf("Serve returned %v; want ErrServerClosed", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Serve did not return after Close")
		}
	}
	if n := waitGoroutines(before, 10*time.Second); n > before {
		t.Fatalf("%d goroutines after 50 Serve/Close pairs, %d before", n, before)
	}
}

// waitGoroutines waits up to d for the goroutines to fall to at most
// want, and returns how many there are.
func waitGoroutines(want int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}
