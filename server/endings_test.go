package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Tests for how connections end (issue 13): a response the server sent is
// never destroyed by a reset, whatever the client left unsent or unread.

// TestUnreadBodyEndsCleanly: a handler that ignores a 300 KB or 3 MB
// body, with a declared length or chunked, with or without
// Connection: close: the client reads the whole response and then a
// clean end of stream, never a reset.
//
// Modes: HTTP/1.1, raw bytes: an unread body and the lingering close after
// it are HTTP/1.1's (HTTP/2 ends the stream).
func TestUnreadBodyEndsCleanly(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored your body") })
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	for _, size := range []int{300 << 10, 3 << 20} {
		for _, chunked := range []bool{false, true} {
			for _, closeConn := range []bool{false, true} {
				name := fmt.Sprintf("%dKB chunked=%v close=%v", size>>10, chunked, closeConn)
				for i := 0; i < 20; i++ {
					nc := dial(t, addr)
					extra := ""
					if closeConn {
						extra = "Connection: close\r\n"
					}
					head, body := postOf(size, chunked, extra)
					go func() { // the client sends everything, as a real one does
						nc.Write([]byte(head))
						nc.Write(body)
					}()
					nc.SetReadDeadline(time.Now().Add(10 * time.Second))
					br := bufio.NewReader(nc)
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						t.Fatalf("%s try %d: %v", name, i, err)
					}
					b, err := io.ReadAll(resp.Body)
					if err != nil || string(b) != "ignored your body" {
						t.Fatalf("%s try %d: body %q %v", name, i, b, err)
					}
					if resp.Close || closeConn {
						// The server closes: the client must see a clean
						// end of stream after the response, not a reset.
						if _, err := br.ReadByte(); err != io.EOF {
							t.Fatalf("%s try %d: after the response: %v, want EOF", name, i, err)
						}
					}
					nc.Close()
				}
			}
		}
	}
}

// postOf returns a POST of size bytes, with a length or chunked, as a
// head (with extra header lines) and a body to write after it.
func postOf(size int, chunked bool, extra string) (head string, body []byte) {
	head = "POST / HTTP/1.1\r\nHost: x\r\n" + extra
	body = bytes.Repeat([]byte("b"), size)
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
		body = append([]byte(fmt.Sprintf("%x\r\n", size)), append(body, "\r\n0\r\n\r\n"...)...)
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n\r\n", size)
	}
	return head, body
}

// TestUnreadBodyGoClient: Go's http.Post of bodies the handler ignores
// succeeds every time (it failed about half the time past the drain
// limit when the server closed without lingering).
//
// Modes: HTTP/1.1: an unread body and the lingering close after it are
// HTTP/1.1's (HTTP/2 ends the stream).
func TestUnreadBodyGoClient(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	for _, size := range []int{300 << 10, 3 << 20} {
		for i := 0; i < 30; i++ {
			resp, err := http.Post("http://"+addr+"/", "application/octet-stream", strings.NewReader(strings.Repeat("x", size)))
			if err != nil {
				t.Fatalf("%d KB try %d: %v", size>>10, i, err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
	}
}

// TestSilentConnectionCutAtReadHeaderTimeout: a client that connects
// and sends nothing is closed after ReadHeaderTimeout, not IdleTimeout.
//
// Modes: HTTP/1.1, both APIs, raw socket: a connection that sends nothing
// is no protocol yet (h2c's held preface: TestAttack2026H2CPrefaceHold).
func TestSilentConnectionCutAtReadHeaderTimeout(t *testing.T) {
	const rht = 300 * time.Millisecond
	for _, name := range []string{"native", "handler"} {
		s := &Server{ReadHeaderTimeout: rht, IdleTimeout: time.Minute, ErrorLog: discardLog}
		if name == "native" {
			s.Native = func(c *Ctx) {}
		} else {
			s.Handler = http.NotFoundHandler()
		}
		nc := dial(t, startServer(t, s))
		start := time.Now()
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := nc.Read(make([]byte, 1))
		if took := time.Since(start); err != io.EOF || took < rht-50*time.Millisecond || took > rht+time.Second {
			t.Fatalf("%s: silent connection: %v after %v, want EOF after %v", name, err, took, rht)
		}
	}
}

// TestNativeAbsoluteFormAndOptionsStar: the native API routes an
// absolute-form target by its path, and answers OPTIONS * itself, as the
// handler API (and net/http) do.
func TestNativeAbsoluteFormAndOptionsStar(t *testing.T) {
	addr := startServer(t, &Server{Native: func(c *Ctx) {
		if string(c.Path()) != "/x" {
			c.Error(404, "no route for "+string(c.Path()))
			return
		}
		c.WriteString("routed /x")
	}})
	nc := dial(t, addr)
	br := bufio.NewReader(nc)
	io.WriteString(nc, "GET http://example.com/x?q=1 HTTP/1.1\r\nHost: example.com\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "routed /x" {
		t.Fatalf("absolute-form: %d %q", resp.StatusCode, body)
	}
	if resp, body := readResponse(t, br, "OPTIONS"); resp.StatusCode != 200 || resp.ContentLength != 0 || body != "" {
		t.Fatalf("OPTIONS *: %d CL=%d %q", resp.StatusCode, resp.ContentLength, body)
	}
}

// TestShutdownQuietPeriodServesRequestOnItsWay: a client whose idle
// keep-alive connection sends its next request just after Shutdown began
// gets an answer (with Connection: close), not a closed connection.
func TestShutdownQuietPeriodServesRequestOnItsWay(t *testing.T) {
	for _, name := range []string{"native", "handler"} {
		s := &Server{ErrorLog: discardLog}
		if name == "native" {
			s.Native = func(c *Ctx) { c.WriteString("ok") }
		} else {
			s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		}
		addr := startServer(t, s)
		nc := dial(t, addr)
		br := bufio.NewReader(nc)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		readResponse(t, br, "GET")
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(t.Context()) }()
		time.Sleep(50 * time.Millisecond) // the connection is idle, Shutdown under way
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || body != "ok" || !resp.Close {
			t.Fatalf("%s: %d %q close=%v", name, resp.StatusCode, body, resp.Close)
		}
		expectClosed(t, br)
		if err := <-shut; err != nil {
			t.Fatalf("%s: Shutdown: %v", name, err)
		}
	}
}

// TestShutdownCutsLingering: a client refused with 413 that keeps
// sending its body slowly holds a lingering close, which would last up
// to lingerTotal (30 s); Shutdown cuts the linger to lingerShutdown, so
// it returns well within its context instead of waiting the 30 s out.
// The client still reads the whole 413 first.
//
// Modes: HTTP/1.1, raw bytes: the lingering close is HTTP/1.1's.
func TestShutdownCutsLingering(t *testing.T) {
	s := &Server{ErrorLog: discardLog, MaxRequestBodyBytes: 1 << 10,
		Native: func(c *Ctx) { c.ReadBody(nil) }}
	addr := startServer(t, s)
	nc := dial(t, addr)
	nc.SetDeadline(time.Now().Add(60 * time.Second))
	io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
	nc.Write(bytes.Repeat([]byte("b"), 4<<10))
	br := bufio.NewReader(nc)
	resp, _ := readResponse(t, br, "POST")
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the slow body goes on, a byte every 100 ms
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := nc.Write([]byte("b")); err != nil {
					return
				}
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // lingering
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a lingering connection: %v (the linger was not cut)", err)
	}
	expectClosed(t, br)
}

// TestContinueFromAnotherGoroutine: a handler that reads the body on a
// goroutine of its own (as httputil.ReverseProxy's transport does) while
// it writes the response. The 100 Continue the read triggers must not
// race the response (the race detector watches the write buffer), and
// must never follow the final head.
func TestContinueFromAnotherGoroutine(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := make(chan struct{})
		go func() {
			io.Copy(io.Discard, r.Body)
			close(done)
		}()
		w.Header().Set("X-Early", "1")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "early")
		w.(http.Flusher).Flush()
		<-done
	})
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	for i := range 50 {
		nc := dial(t, addr)
		io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		br := bufio.NewReader(nc)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("try %d: %v", i, err)
		}
		nc.Write([]byte("hello"))
		if resp.StatusCode == http.StatusContinue {
			if resp, err = http.ReadResponse(br, nil); err != nil {
				t.Fatalf("try %d: after 100: %v", i, err)
			}
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 5))
		if resp.StatusCode != 200 || string(b) != "early" || err != nil {
			t.Fatalf("try %d: %d %q %v", i, resp.StatusCode, b, err)
		}
		// Nothing may follow the response but its end (a stray
		// 100 Continue after the final head would be read here).
		nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if rest, _ := io.ReadAll(resp.Body); strings.Contains(string(rest), "100 Continue") {
			t.Fatalf("try %d: 100 Continue after the final response: %q", i, rest)
		}
		nc.Close()
	}
}

// TestFullDuplexFromAnotherGoroutine: a big body read on a goroutine of
// the handler's own while the handler streams a big response (a proxy's
// shape). Nothing they share may race, and both get every byte.
func TestFullDuplexFromAnotherGoroutine(t *testing.T) {
	const size = 2 << 20
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		got := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, r.Body)
			got <- n
		}()
		chunk := bytes.Repeat([]byte("r"), 32<<10)
		for range size / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Header().Set(http.TrailerPrefix+"X-Body", fmt.Sprint(<-got))
	})
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	for _, chunked := range []bool{false, true} {
		nc := dial(t, addr)
		head, body := postOf(size, chunked, "")
		go func() {
			nc.Write([]byte(head))
			nc.Write(body)
		}()
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != size || resp.Trailer.Get("X-Body") != fmt.Sprint(size) {
			t.Fatalf("chunked=%v: response %d bytes (%v), the handler read %q of %d", chunked, n, err, resp.Trailer.Get("X-Body"), size)
		}
		nc.Close()
	}
}

// TestContinueRaceNeverKeepsAliveWithout100: a body read on another
// goroutine races the handler's final head. Whichever wins, a final
// answer sent without a 100 Continue before it, the body unread, says
// Connection: close (the client may still be holding the body back).
// The 100's attempt marked the body as coming even when the head had
// won and no 100 went out, so the connection stayed open.
func TestContinueRaceNeverKeepsAliveWithout100(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Both sides spin until the other is running, then go at
		// once: the race is decided by a few instructions.
		var ready atomic.Int32
		done := make(chan struct{})
		go func() {
			ready.Add(1)
			for ready.Load() < 2 {
			}
			io.Copy(io.Discard, r.Body)
			close(done)
		}()
		ready.Add(1)
		for ready.Load() < 2 {
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.(http.Flusher).Flush()
		<-done
	})
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	var first100, closed int
	for i := range 1000 {
		nc := dial(t, addr)
		io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatalf("try %d: %v", i, err)
		}
		switch {
		case resp.StatusCode == http.StatusContinue:
			first100++
		case resp.Close:
			closed++
		default:
			t.Fatalf("try %d: %d with no 100 Continue before it and no Connection: close", i, resp.StatusCode)
		}
		nc.Write([]byte("hello"))
		nc.Close()
	}
	t.Logf("100 first %d times, the final head first (with close) %d times", first100, closed)
}

// TestDeadlinesWhileBodyReadElsewhere: the handler sets its read and
// write deadlines (http.ResponseController) while another goroutine
// reads the body, which arms deadlines of its own (and, with
// Expect: 100-continue, writes the 100): nothing they share may race.
func TestDeadlinesWhileBodyReadElsewhere(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		got := make(chan int64, 1)
		go func() {
			n, _ := io.Copy(io.Discard, r.Body)
			got <- n
		}()
		for range 50 {
			rc.SetReadDeadline(time.Now().Add(10 * time.Second))
			rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			time.Sleep(100 * time.Microsecond)
		}
		fmt.Fprint(w, <-got)
	})
	addr := startServer(t, &Server{Handler: h, ErrorLog: discardLog})
	for _, expect := range []bool{false, true} {
		nc := dial(t, addr)
		head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n"
		if expect {
			head += "Expect: 100-continue\r\n"
		}
		io.WriteString(nc, head+"\r\n")
		br := bufio.NewReader(nc)
		go func() { // the body in pieces, while the handler sets its deadlines
			for range 16 {
				time.Sleep(time.Millisecond)
				nc.Write(bytes.Repeat([]byte("b"), 4096))
			}
		}()
		resp, err := http.ReadResponse(br, nil)
		if err == nil && resp.StatusCode == http.StatusContinue {
			resp, err = http.ReadResponse(br, nil)
		}
		if err != nil {
			t.Fatalf("expect=%v: %v", expect, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "65536" {
			t.Fatalf("expect=%v: %d %q", expect, resp.StatusCode, b)
		}
		nc.Close()
	}
}

// TestShutdownInterruptDuringLargeBodyRead: Shutdown's wake-up of idle
// connections can land on one that just turned active (it checked the
// state an instant before): a large body read it interrupts goes on, as
// the small reads do, even with no ReadStallTimeout to extend it.
func TestShutdownInterruptDuringLargeBodyRead(t *testing.T) {
	const part, length = 1 << 20, 4 << 20
	conns := make(chan *conn, 1)
	got := make(chan string, 1)
	h := func(x *Ctx) {
		conns <- x.c
		n, err := io.Copy(io.Discard, x.Body()) // WriteTo: large reads straight from the socket
		got <- fmt.Sprint(n, " ", err)
		x.WriteString("done")
	}
	addr := startServer(t, &Server{Native: h, ReadStallTimeout: -1, MaxRequestBodyBytes: -1, ErrorLog: discardLog})
	nc := dial(t, addr)
	fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", length)
	nc.Write(make([]byte, part))
	c := <-conns
	time.Sleep(100 * time.Millisecond) // the handler has read the part and waits for more
	c.interrupt()
	time.Sleep(50 * time.Millisecond)
	nc.Write(make([]byte, length-part))
	select {
	case s := <-got:
		if s != fmt.Sprint(length, " <nil>") {
			t.Fatalf("body after the interrupt: %s", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the body read did not end")
	}
}
