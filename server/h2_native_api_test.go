package server

import (
	"io"
	"testing"
	"time"
)

// TestNativeH2NativeZeroAllocs: a native handler over HTTP/2 costs no
// allocation per request once the connection has warmed up.
func TestNativeH2NativeZeroAllocs(t *testing.T) {
	skipUnderRace(t)
	for _, inflight := range []int{1, 10, 100} {
		run := func(n int) float64 {
			return testing.AllocsPerRun(5, func() {
				s := &Server{Native: helloNative, ErrorLog: discardLog}
				if got := serveH2FakeServer(s, n, inflight); got != n {
					t.Fatalf("%d of %d requests answered", got, n)
				}
			})
		}
		const n = 5000 // dilutes the few workers a run may start more than another
		got := (run(2*n) - run(n)) / n
		t.Logf("%d in flight: %.3f allocs per request", inflight, got)
		if got > 0.01 {
			t.Errorf("%d in flight: %.3f allocs per request, want 0", inflight, got)
		}
	}
}

// A connection keeps the native streams it recycles, and its handler
// goroutines, while it is busy, and gives them back once it has sat idle
// for h2IdleTrim, with its read buffer and its writer goroutine; it
// serves on as before, the writer started again.
//
// Modes: hotpath's HTTP/2 engine: its idle trim of recycled streams,
// buffers and writer (HTTP/1.1's idle buffers:
// TestIdleConnectionsHoldNoBuffers).
func TestNativeH2IdleConnectionTrimmed(t *testing.T) {
	for _, cleartext := range []bool{true, false} {
		t.Run(map[bool]string{false: "tls", true: "h2c"}[cleartext], func(t *testing.T) { testIdleTrimmed(t, cleartext) })
	}
}

func testIdleTrimmed(t *testing.T, cleartext bool) {
	release, hold := make(chan struct{}), make(chan struct{})
	h := func(c *Ctx) {
		switch string(c.Path()) {
		case "/wait":
			<-release
		case "/hold":
			<-hold
		}
		c.WriteString("ok")
	}
	s := &Server{Native: h, ErrorLog: discardLog}
	base, _, c := startH2Both(t, s, cleartext)
	get := func(path string) error {
		resp, err := c.Get(base + path)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return err
	}
	// held reports the connection's recycled streams, workers and
	// running handlers.
	held := func() (free, workers, running int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for sc := range s.h2conns {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if sc.h2Busy == nil {
				return 0, sc.workers, sc.running // parked without its busy state
			}
			return len(sc.free), sc.workers, sc.running
		}
		return -1, -1, -1
	}
	// 20 streams end while a 21st holds the connection busy, so that
	// no idle trim comes before their recycling is seen (on a slow
	// machine this goroutine may not look within h2IdleTrim).
	errs := make(chan error, 20)
	for range 20 {
		go func() { errs <- get("/wait") }()
	}
	held1 := make(chan error, 1)
	go func() { held1 <- get("/hold") }()
	waitFor(t, "21 streams in flight", func() bool { _, _, r := held(); return r == 21 })
	close(release)
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Free streams and workers from one look.
	kept := -1
	waitFor(t, "the streams to be recycled", func() bool {
		f, w, _ := held()
		kept = w
		return f >= 20
	})
	if kept < 2 {
		t.Fatalf("%d workers kept after 20 concurrent streams", kept)
	}
	bufless := func() bool { return readBufGivenBack(s) && writerParked(s) }
	if bufless() {
		t.Fatal("a busy connection gave its read buffer back")
	}
	close(hold)
	if err := <-held1; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the idle connection to give back its streams, workers, read buffer and writer", func() bool {
		f, w, _ := held()
		return f == 0 && w == 0 && bufless()
	})
	// New requests take them again. A stream is recycled once its
	// handler's goroutine is done with it, which may be just after the
	// client has the answer, and h2IdleTrim (100 ms) of quiet gives it
	// back again: each request gets 50 ms to show it, a slow machine a
	// few requests.
	taken := func() bool {
		f, w, _ := held()
		return f >= 1 && w >= 1 && !bufless()
	}
	for try := 0; ; try++ {
		if err := get("/"); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(50 * time.Millisecond); !taken() && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		if taken() {
			break
		}
		if try == 20 {
			f, w, _ := held()
			t.Fatalf("after new requests: %d recycled streams, %d workers, read buffer and writer given back %v", f, w, bufless())
		}
	}
}

// writerParked reports whether s's one native HTTP/2 connection has no
// writer goroutine.
func writerParked(s *Server) bool {
	return onlyH2Conn(s, func(sc *h2Conn) bool { return sc.writerParked.Load() })
}

// readBufGivenBack reports whether s's one native HTTP/2 connection waits
// without its read buffer.
func readBufGivenBack(s *Server) bool {
	return onlyH2Conn(s, func(sc *h2Conn) bool { return sc.noReadBuf.Load() })
}

// onlyH2Conn reports what f says of s's one native HTTP/2 connection;
// false when there is none.
func onlyH2Conn(s *Server, f func(*h2Conn) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sc := range s.h2conns {
		return f(sc)
	}
	return false
}
