package load

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestFastStrayBytesAtReadBoundary: a server that writes a second,
// unasked response right behind each one, in the same write, where the
// first ends exactly at the end of a read that filled the fast engine's
// buffer, left those bytes in the socket: the next request on the
// connection read them as its answer (a desync: a 299 counted as a
// success). Bytes behind a body are a framing error (bad_response) wherever
// they wait, in the buffer or in the socket.
func TestFastStrayBytesAtReadBoundary(t *testing.T) {
	for _, total := range []int{fastReadBuf, 2 * fastReadBuf, 3*fastReadBuf + fastReadBuf/2} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			resp := sized(total) + "HTTP/1.1 299 Stray\r\nContent-Length: 5\r\n\r\nWRONG"
			url := scriptServer(t, func(c net.Conn, n int) bool {
				c.Write([]byte(resp))
				return true
			})
			res, err := Run(context.Background(), Config{URL: url, Connections: 1, Requests: 6, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status["299"] != 0 || res.Status["200"] != 0 || res.ErrorsByKind["bad_response"] != 6 {
				t.Errorf("status %v errors %v sent %d: want no 299 and every request bad_response", res.Status, res.ErrorsByKind, res.Sent)
			}
		})
	}
}

// TestFastConnKeptAtReadBoundary: a well-behaved server whose responses
// end exactly at a full read keeps its connection.
func TestFastConnKeptAtReadBoundary(t *testing.T) {
	for _, total := range []int{100, fastReadBuf, 2 * fastReadBuf} {
		resp := sized(total)
		url := scriptServer(t, func(c net.Conn, n int) bool {
			c.Write([]byte(resp))
			return true
		})
		res, err := Run(context.Background(), Config{URL: url, Connections: 1, Requests: 6, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status["200"] != 6 || res.Errors != 0 || res.Conns.Opened != 1 {
			t.Errorf("%d: status %v errors %v opened %d: want 6 × 200 on one connection", total, res.Status, res.ErrorsByKind, res.Conns.Opened)
		}
	}
}

// sized returns a 200 response of exactly total bytes, head included.
func sized(total int) string {
	body := total
	for {
		h := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", body)
		if len(h)+body == total {
			return h + strings.Repeat("x", body)
		}
		body = total - len(h)
	}
}

// TestFastRetriesSilentlyClosedConn: a server that closes a kept-alive
// connection without "Connection: close" (right after a response, or once
// it has been idle a while, as Node's keepAliveTimeout does) made the
// next request on it fail as closed_early on the fast engine, where
// net/http's engine sends it again on a new connection. Now the fast
// engine does the same, by net/http's rule: a request that got no byte of
// response on a reused connection, if its method is idempotent (else it
// fails as before).
func TestFastRetriesSilentlyClosedConn(t *testing.T) {
	closeAfter := func(c net.Conn, n int) bool {
		c.Write([]byte(okCL))
		return false
	}
	idleClose := func(c net.Conn, n int) bool {
		c.Write([]byte(okCL))
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		return true
	}
	cases := []struct {
		name   string
		write  func(c net.Conn, n int) bool
		cfg    Config
		failed bool // POST: not sent again
	}{
		{name: "close after response", write: closeAfter},
		{name: "close when idle, rate", write: idleClose, cfg: Config{Rate: 40}},
		{name: "close after response, POST", write: closeAfter, cfg: Config{Method: "POST", Body: []byte("x")}, failed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := scriptServer(t, tc.write)
			cfg := tc.cfg
			cfg.URL, cfg.Connections, cfg.Requests, cfg.Timeout = url, 1, 8, 2*time.Second
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent != 8 || res.Requests+res.Errors != 8 {
				t.Fatalf("sent %d, responses %d, errors %v: want 8 accounted once", res.Sent, res.Requests, res.ErrorsByKind)
			}
			if tc.failed {
				// Not sent again: a request on a connection the server
				// closed fails, as EOF (closed_early) or, when its write
				// met the close first, a reset (ECONNRESET): which is the
				// kernel's timing.
				early, reset := res.ErrorsByKind["closed_early"], res.ErrorsByKind["reset"]
				if early == 0 || res.Errors != early+reset {
					t.Errorf("errors %v: want closed_early, or reset, alone (a POST is not sent again)", res.ErrorsByKind)
				}
				return
			}
			if res.Status["200"] != 8 || res.Errors != 0 || res.Conns.Opened != 8 {
				t.Errorf("status %v errors %v opened %d: want 8 × 200 on 8 connections", res.Status, res.ErrorsByKind, res.Conns.Opened)
			}
		})
	}
}

// TestFastResponseBeforeRequestWritten: a server that answers before it
// has read the whole request (a 413 for a body too large) and closes made
// the fast engine's write fail, and the request count as a reset, where
// net/http's engine (and wrk) count the response. The response that came
// is read; without one, the write's error stands.
func TestFastResponseBeforeRequestWritten(t *testing.T) {
	serve := func(answer string) string {
		return serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					break
				}
			}
			c.Write([]byte(answer))
			time.Sleep(10 * time.Millisecond) // then closed, the body unread
		})
	}
	body := make([]byte, 8<<20) // past the socket buffers
	for _, eng := range []Engine{EngineFast, EngineNetHTTP} {
		url := serve("HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		res, err := Run(context.Background(), Config{URL: url, Engine: eng, Method: "POST", Body: body, Connections: 1, Requests: 5, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status["413"] != 5 || res.Errors != 0 {
			t.Errorf("%s: status %v errors %v: want 5 × 413", eng, res.Status, res.ErrorsByKind)
		}
	}
	url := serve("") // no answer: the write's error
	res, err := Run(context.Background(), Config{URL: url, Method: "POST", Body: body, Connections: 1, Requests: 5, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.Errors != 5 || res.ErrorsByKind["reset"]+res.ErrorsByKind["closed_early"] != 5 {
		t.Errorf("no answer: status %v errors %v: want 5 reset or closed_early", res.Status, res.ErrorsByKind)
	}
	// A server that stops reading and never answers: the write times out,
	// and so does the request, within its timeout.
	url = serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
		br.ReadString('\n')
		<-done
	})
	t0 := time.Now()
	res, err = Run(context.Background(), Config{URL: url, Method: "POST", Body: body, Connections: 1, Requests: 2, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); res.ErrorsByKind["timeout"] != 2 || d > time.Second {
		t.Errorf("stalled: errors %v after %v: want 2 timeouts within 400 ms", res.ErrorsByKind, d)
	}
}
