package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// HTTP/1.1's lingering close: a response the server sent is never
// destroyed by a reset, whatever the client left unsent or unread.

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
