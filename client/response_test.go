package client

// The response as net/http users read it: Close, the head's leniency and
// errors, a gzip body after Close, http.Client.Timeout's message.

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A gzip body, closed, fails its next Read, even with decompressed bytes
// buffered (net/http's does).
func TestGzipBodyReadAfterClose(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write([]byte(strings.Repeat("a", 100000)))
		zw.Close()
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(mustReq(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n, err := resp.Body.Read(make([]byte, 10)); n != 0 || err == nil {
		t.Errorf("Read after Close = %d, %v; want 0 and an error", n, err)
	}
}

// resp.Close says what the server said (net/http's meaning), not that this
// Transport closes the connection (DisableKeepAlives).
func TestResponseCloseIsTheServers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
	}))
	defer srv.Close()
	tr := &Transport{DisableKeepAlives: true}
	for path, want := range map[string]bool{"/": true, "/close": true} {
		// net/http's server answers "Connection: close" to the close a
		// transport without keep-alives asks for: resp.Close is true.
		resp, err := tr.RoundTrip(mustReq(t, srv.URL+path))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Close != want {
			t.Errorf("%s: Close = %v, want %v", path, resp.Close, want)
		}
	}
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		readReq(br)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	})
	resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Close {
		t.Error("Close = true for a response that did not say close")
	}
}

// A field with whitespace before its colon is kept under that name, as
// net/http keeps it; the error for a bad Content-Length and for a head
// past MaxResponseHeaderBytes use net/http's words.
func TestResponseHeadLeniencyAndErrors(t *testing.T) {
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readReq(br)
			if err != nil {
				return
			}
			switch req.URL.Path {
			case "/space":
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nFoo : bar\r\n\r\n"))
			case "/sign":
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc"))
				return
			case "/big":
				c.Write([]byte("HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 2000) + "\r\n\r\n"))
				return
			}
		}
	})
	tr := &Transport{MaxResponseHeaderBytes: 1000}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/space"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header["Foo "]; len(got) != 1 || got[0] != "bar" || resp.Header.Get("Foo") != "" {
		t.Errorf("header = %q; want \"Foo \": bar, and no Foo", resp.Header)
	}
	if _, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/sign")); err == nil || !strings.Contains(err.Error(), `bad Content-Length "+3"`) {
		t.Errorf("signed Content-Length: %v", err)
	}
	if _, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/big")); err == nil || !strings.Contains(err.Error(), "server response headers exceeded 1000 bytes") {
		t.Errorf("big head: %v", err)
	}
}

// http.Client.Timeout around this Transport says "Client.Timeout
// exceeded", as around net/http's: the client's timer closes
// Request.Cancel at the deadline the context has too, and the Transport
// gives it the moment to.
func TestClientTimeoutMessage(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 20 * time.Millisecond}
	for i := range 10 {
		_, err := c.Get(srv.URL)
		if err == nil || !strings.Contains(err.Error(), "Client.Timeout exceeded") {
			t.Fatalf("try %d: %v; want Client.Timeout exceeded", i, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("try %d: %v is not a timeout that is context.DeadlineExceeded", i, err)
		}
	}
}

// Close before a body's end returns at once and drains the rest in the
// background (net/http's, from Go 1.27, drains on its read loop): the
// connection is kept once the rest comes. A Read blocked when Close comes
// returns the body's end.
func TestCloseDrainsInBackground(t *testing.T) {
	for _, concurrentRead := range []bool{false, true} {
		rest := make(chan struct{})
		var conns atomic.Int32
		addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
			conns.Add(1)
			readReq(br)
			c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X\r\n\r\n5\r\nhello\r\n"))
			<-rest
			c.Write([]byte("0\r\nX: v\r\n\r\n"))
			readReq(br)
			c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
		})
		tr := &Transport{DrainTimeout: 10 * time.Second}
		resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/"))
		if err != nil {
			t.Fatal(err)
		}
		readErr := make(chan error, 1)
		if concurrentRead {
			io.ReadFull(resp.Body, make([]byte, 5))
			go func() {
				_, err := resp.Body.Read(make([]byte, 1))
				readErr <- err
			}()
			b := resp.Body.(*body)
			waitFor(t, func() bool { // the Read is under way (it blocks on the socket)
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.reading
			})
		}
		resp.Body.Close() // returns before the rest is sent: the server waits for it
		close(rest)
		if concurrentRead {
			if err := <-readErr; err != io.EOF {
				t.Errorf("the Read blocked during Close: %v, want io.EOF", err)
			}
		}
		waitFor(t, func() bool { tr.mu.Lock(); defer tr.mu.Unlock(); return len(tr.idle[connKey{host: addr}]) == 1 })
		resp2, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/next"))
		if err != nil {
			t.Fatal(err)
		}
		resp2.Body.Close()
		if n := conns.Load(); n != 1 {
			t.Errorf("concurrent read %v: %d connections, want 1 (kept after the drain)", concurrentRead, n)
		}
		if !concurrentRead && resp.Trailer.Get("X") != "" {
			t.Error("a drained body's trailer reached resp.Trailer")
		}
		tr.CloseIdleConnections()
	}
}
