package server

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The native API (Server.Native) over the native HTTP/2 engine, TLS and
// h2c, with Go's HTTP/2 client: what a native handler does reaches the
// client as it does over HTTP/1.1.
func TestNativeAPIOverH2(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16) // 100 KiB
	h := func(c *Ctx) {
		switch string(c.Path()) {
		case "/hello":
			c.SetContentType("text/plain; charset=utf-8")
			c.SetHeader("Cache-Control", "no-store")
			c.AddHeader("Set-Cookie", "a=1")
			c.AddHeader("Set-Cookie", "b=2")
			c.SetHeader("Connection", "keep-alive") // not carried by HTTP/2
			fmt.Fprintf(c, "%s %s %s host=%s ua=%s q=%s", c.Method(), c.Path(), c.Proto(), c.Host(), c.Header("User-Agent"), c.Query())
		case "/echo":
			b, err := c.ReadBody(nil)
			if err != nil {
				return // over the limit: the server answers 413
			}
			c.Write(b)
		case "/big":
			c.Write(big)
		case "/declared":
			c.SetContentLength(int64(len(big)))
			for i := 0; i < len(big); i += 10000 {
				c.Write(big[i:min(i+10000, len(big))])
			}
		case "/flush":
			c.WriteString("first ")
			c.Flush()
			c.WriteString("second")
		case "/trailer":
			c.SetTrailer("Grpc-Status", "0")
			c.WriteString("with trailer")
		case "/missing":
			c.Error(http.StatusNotFound, "no such thing")
		case "/panic":
			panic("boom")
		case "/short":
			c.SetContentLength(10)
			c.WriteString("abc") // fewer than declared: the stream is reset
		}
	}
	for _, cleartext := range []bool{false, true} {
		t.Run(map[bool]string{false: "tls", true: "h2c"}[cleartext], func(t *testing.T) {
			s := &Server{Native: h, ErrorLog: discardLog, MaxRequestBodyBytes: 1 << 20}
			base, _, c := startH2Both(t, s, cleartext)
			do := func(method, path string, body io.Reader) (*http.Response, string, error) {
				req, err := http.NewRequest(method, base+path, body)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("User-Agent", "native-test")
				resp, err := c.Do(req)
				if err != nil {
					return nil, "", err
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Fatalf("%s %s: %s, want HTTP/2", method, path, resp.Proto)
				}
				return resp, string(b), err
			}
			resp, body, err := do("GET", "/hello?x=1", nil)
			if err != nil || resp.StatusCode != 200 || !strings.HasPrefix(body, "GET /hello HTTP/2.0 host=127.0.0.1:") ||
				!strings.HasSuffix(body, " ua=native-test q=x=1") || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
				resp.Header.Get("Cache-Control") != "no-store" || len(resp.Header["Set-Cookie"]) != 2 || resp.Header.Get("Connection") != "" ||
				resp.ContentLength != int64(len(body)) || resp.Header.Get("Date") == "" {
				t.Errorf("hello: %v %v %q %v", err, resp.StatusCode, body, resp.Header)
			}
			payload := strings.Repeat("p", 300<<10)
			if resp, body, err := do("POST", "/echo", strings.NewReader(payload)); err != nil || resp.StatusCode != 200 || body != payload {
				t.Errorf("echo: %v %v %d bytes", err, resp, len(body))
			}
			if resp, body, err := do("POST", "/echo", strings.NewReader(strings.Repeat("p", 2<<20))); err != nil || resp.StatusCode != 413 || !strings.Contains(body, "MaxRequestBodyBytes") {
				t.Errorf("echo over the limit: %v %v %q", err, resp, body)
			}
			for _, path := range []string{"/big", "/declared"} {
				resp, body, err := do("GET", path, nil)
				if err != nil || resp.StatusCode != 200 || sha256.Sum256([]byte(body)) != sha256.Sum256(big) {
					t.Errorf("%s: %v %v %d bytes", path, err, resp, len(body))
				}
				if path == "/declared" && resp.ContentLength != int64(len(big)) {
					t.Errorf("%s: Content-Length %d", path, resp.ContentLength)
				}
			}
			if resp, body, err := do("GET", "/flush", nil); err != nil || body != "first second" || resp.ContentLength != -1 {
				t.Errorf("flush: %v %q %d", err, body, resp.ContentLength)
			}
			if resp, body, err := do("GET", "/trailer", nil); err != nil || body != "with trailer" || resp.Trailer.Get("Grpc-Status") != "0" {
				t.Errorf("trailer: %v %q %v", err, body, resp.Trailer)
			}
			if resp, body, err := do("HEAD", "/big", nil); err != nil || body != "" || resp.StatusCode != 200 {
				t.Errorf("HEAD: %v %q %v", err, body, resp)
			}
			if resp, body, err := do("GET", "/missing", nil); err != nil || resp.StatusCode != 404 || body != "no such thing" {
				t.Errorf("missing: %v %v %q", err, resp, body)
			}
			if resp, body, err := do("GET", "/panic", nil); err != nil || resp.StatusCode != 500 {
				t.Errorf("panic: %v %v %q", err, resp, body)
			}
			if _, _, err := do("GET", "/short", nil); err == nil {
				t.Errorf("a body shorter than its declared length read as complete")
			}
			// The connection is still fine after all that.
			if resp, _, err := do("GET", "/hello", nil); err != nil || resp.StatusCode != 200 {
				t.Errorf("after: %v %v", err, resp)
			}
		})
	}
}

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
// Modes: the native HTTP/2 engine: its idle trim of recycled streams,
// buffers and writer (HTTP/1.1's idle buffers:
// TestIdleConnectionsHoldNoBuffers).
func TestNativeH2IdleConnectionTrimmed(t *testing.T) {
	for _, cleartext := range []bool{true, false} {
		t.Run(map[bool]string{false: "tls", true: "h2c"}[cleartext], func(t *testing.T) { testIdleTrimmed(t, cleartext) })
	}
}

func testIdleTrimmed(t *testing.T, cleartext bool) {
	release := make(chan struct{})
	h := func(c *Ctx) {
		if string(c.Path()) == "/wait" {
			<-release
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
		for sc := range s.h2native {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if sc.h2Busy == nil {
				return 0, sc.workers, sc.running // parked without its busy state
			}
			return len(sc.free), sc.workers, sc.running
		}
		return -1, -1, -1
	}
	errs := make(chan error, 20)
	for range 20 {
		go func() { errs <- get("/wait") }()
	}
	waitFor(t, "20 streams in flight", func() bool { _, _, r := held(); return r == 20 })
	close(release)
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Free streams and workers from one look: the idle trim may come
	// between two.
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
	for sc := range s.h2native {
		return f(sc)
	}
	return false
}
