package client_test

// The exchange on a connection: what is written, what is read as whose
// answer.

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// Bytes a server sends on a connection after the response ended (a body
// on a HEAD answer, a buggy extra response) are never read as the answer
// to the next request: the idle connection they arrive on is dropped.
// The second request goes out only once the stray bytes are in the
// client's socket (the server's write returned): before that no client
// could tell them from an answer. net/http's transport then drops the
// connection from a goroutine of its own, which a loaded machine may run
// late, so that arm waits until the server sees the connection end;
// hotpath's checks an idle connection for such bytes when it takes it
// from the pool.
func TestUnsolicitedBytesOnIdleConn(t *testing.T) {
	for _, name := range []string{"net/http", "hotpath"} {
		strayWritten, dropped := make(chan struct{}), make(chan struct{})
		var requests atomic.Int32
		addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
			first := false
			for {
				if _, err := client.ReadReq(br); err != nil {
					if first {
						close(dropped)
					}
					return
				}
				if requests.Add(1) == 1 {
					first = true
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"))
					time.Sleep(20 * time.Millisecond)
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nWRONG"))
					close(strayWritten)
					continue
				}
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nright"))
			}
		})
		var rt http.RoundTripper = &http.Transport{}
		if name == "hotpath" {
			rt = &client.Transport{}
		}
		c := &http.Client{Transport: rt}
		get := func() string {
			resp, err := c.Get("http://" + addr + "/")
			if err != nil {
				return "error: " + err.Error()
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
		if got := get(); got != "first" {
			t.Fatalf("%s: first GET got %q", name, got)
		}
		wait := strayWritten
		if name == "net/http" {
			wait = dropped
		}
		select {
		case <-wait:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not ready for the second request after 10 s", name)
		}
		if got := get(); got != "right" {
			t.Errorf("%s: second GET got %q; want \"right\", on a new connection", name, got)
		}
	}
}

// A server that writes a second, unasked response right behind a body,
// in the same segment (in the same write, or over TLS in the next
// record): those bytes are in the client's socket (or its TLS layer)
// before the body ends. The connection must not be
// reused, or the next request reads them as its answer (a desync).
// net/http's reader goroutine sees them at once and drops the
// connection (which the net/http arm waits for, as in
// TestUnsolicitedBytesOnIdleConn). hotpath's second request goes out as
// soon as the first body is read, well within any idle time after which a
// pooled connection is checked.
func TestStrayResponseBehindBody(t *testing.T) {
	cert := httptest.NewUnstartedServer(nil)
	cert.StartTLS()
	defer cert.Close()
	clientTLS := cert.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	clientTLS.NextProtos = nil
	const stray = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nWRONG"
	for _, scheme := range []string{"http", "https"} {
		for _, n := range []int{10, 10000, 100000} {
			for _, split := range []bool{false, true} {
				if split && scheme == "http" {
					continue // the same bytes in the same segment
				}
				for _, name := range []string{"net/http", "hotpath"} {
					what := fmt.Sprintf("%s %s n=%d split=%v", scheme, name, n, split)
					var requests atomic.Int32
					dropped := make(chan struct{}) // the first connection ended
					// batch, under TLS, sends the records of one answer together.
					serveConn := func(c net.Conn, br *bufio.Reader, batch *batchConn) {
						first := false
						for {
							if _, err := client.ReadReq(br); err != nil {
								if first {
									close(dropped)
								}
								return
							}
							if requests.Add(1) > 1 {
								c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nright"))
								continue
							}
							first = true
							if batch != nil {
								batch.hold = true
							}
							var b bytes.Buffer
							b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n")
							b.Write(bytes.Repeat([]byte("a"), n))
							if split {
								c.Write(b.Bytes())
								b.Reset()
							}
							b.WriteString(stray)
							c.Write(b.Bytes())
							if batch != nil {
								batch.flush()
							}
						}
					}
					serve := func(c net.Conn, br *bufio.Reader) { serveConn(c, br, nil) }
					if scheme == "https" {
						serve = func(c net.Conn, _ *bufio.Reader) {
							batch := &batchConn{Conn: c}
							tc := tls.Server(batch, &tls.Config{Certificates: cert.TLS.Certificates})
							defer tc.Close()
							serveConn(tc, bufio.NewReader(tc), batch)
						}
					}
					addr := client.ScriptServer(t, serve)
					var rt http.RoundTripper = &http.Transport{TLSClientConfig: clientTLS.Clone()}
					if name == "hotpath" {
						rt = &client.Transport{TLSClientConfig: clientTLS.Clone()}
					}
					c := &http.Client{Transport: rt}
					url := scheme + "://" + addr + "/"
					resp, err := c.Get(url)
					if err != nil {
						t.Fatalf("%s: first GET: %v", what, err)
					}
					if b, _ := io.ReadAll(resp.Body); len(b) != n {
						t.Fatalf("%s: first GET got %d bytes", what, len(b))
					}
					resp.Body.Close()
					if name == "net/http" {
						// It drops the connection from its reader
						// goroutine, which a loaded machine may run late.
						select {
						case <-dropped:
						case <-time.After(10 * time.Second):
							t.Fatalf("%s: the connection was not dropped after 10 s", what)
						}
					}
					got := "error"
					if resp, err := c.Get(url); err == nil {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						got = string(b[:min(len(b), 20)])
					}
					if got != "right" {
						t.Errorf("%s: second GET got %q; want \"right\", on a new connection", what, got)
					}
					c.CloseIdleConnections()
				}
			}
		}
	}
}

// A well-behaved server's connection is kept after a body whose last
// bytes filled the reader's room (the check of TestStrayResponseBehindBody
// finds nothing there), in plain and over TLS, small and big bodies.
func TestConnKeptAfterBodyEnds(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		w.Write(bytes.Repeat([]byte("a"), n))
	})
	for _, scheme := range []string{"http", "https"} {
		srv := httptest.NewUnstartedServer(h)
		var conns atomic.Int32
		srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		if scheme == "https" {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		cfg := srv.Client().Transport.(*http.Transport).TLSClientConfig
		if cfg != nil {
			cfg = cfg.Clone()
			cfg.NextProtos = nil
		}
		tr := &client.Transport{TLSClientConfig: cfg}
		c := &http.Client{Transport: tr}
		for i, n := range []int{10, 4096, 100000, 10, 1 << 20, 10} {
			resp, err := c.Get(srv.URL + "/?n=" + strconv.Itoa(n))
			if err != nil {
				t.Fatalf("%s request %d: %v", scheme, i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if len(b) != n {
				t.Fatalf("%s request %d: %d bytes, want %d", scheme, i, len(b), n)
			}
		}
		tr.CloseIdleConnections()
		srv.Close()
		if n := conns.Load(); n != 1 {
			t.Errorf("%s: %d connections for 6 requests, want 1", scheme, n)
		}
	}
}

// batchConn holds what is written while hold is set, for flush to send
// in one write.
type batchConn struct {
	net.Conn
	hold bool
	buf  []byte
}

func (c *batchConn) Write(p []byte) (int, error) {
	if c.hold {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *batchConn) flush() {
	c.hold = false
	c.Conn.Write(c.buf)
	c.buf = nil
}

// A server that answers before reading a large upload (413, 401): the
// response is returned, as net/http reads it while it writes, not the
// write error that follows.
func TestEarlyResponseDuringUpload(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	}))
	defer srv.Close()
	big := bytes.Repeat([]byte("x"), 16<<20)
	for _, name := range []string{"net/http", "hotpath"} {
		var rt http.RoundTripper = &http.Transport{}
		if name == "hotpath" {
			rt = &client.Transport{}
		}
		req, _ := http.NewRequest("POST", srv.URL+"/upload", bytes.NewReader(big))
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		resp.Body.Close()
		t.Logf("%s: %s", name, resp.Status)
	}
}

// A negative ExpectContinueTimeout sends the body at once after the head
// of an "Expect: 100-continue" request, and the head once (the server
// sees no second, bogus request on the connection).
func TestExpectContinueNegativeTimeout(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	tr := &client.Transport{ExpectContinueTimeout: -1}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for i := range 3 {
		req, _ := http.NewRequest("PUT", srv.URL, strings.NewReader("the body"))
		req.Header.Set("Expect", "100-continue")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "the body" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	if n := requests.Load(); n != 3 {
		t.Fatalf("the server saw %d requests, want 3", n)
	}
}

// A Host or a query carrying CR and LF is refused or sent sanitized, by
// net/http's transport and by hotpath's: no header can be injected.
func TestHostAndURLInjection(t *testing.T) {
	got := make(chan http.Header, 4)
	addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := client.ReadReq(br)
			if err != nil {
				return
			}
			req.Header.Set("Seen-Host", req.Host)
			got <- req.Header
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
		}
	})
	for _, tc := range []struct {
		name string
		mod  func(*http.Request)
	}{
		{"Host", func(r *http.Request) { r.Host = "x\r\nInjected: host" }},
		{"RawQuery", func(r *http.Request) { r.URL.RawQuery = "a=1 HTTP/1.1\r\nInjected: query\r\nX:" }},
	} {
		for _, rt := range []struct {
			name string
			rt   http.RoundTripper
		}{{"net/http", &http.Transport{}}, {"hotpath", &client.Transport{}}} {
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			tc.mod(req)
			resp, err := rt.rt.RoundTrip(req)
			if err != nil {
				t.Logf("%s %s: refused: %v", tc.name, rt.name, err)
				continue
			}
			resp.Body.Close()
			h := <-got
			if h.Get("Injected") != "" {
				t.Errorf("%s %s: sent; server saw Injected=%q host=%q", tc.name, rt.name, h.Get("Injected"), h.Get("Seen-Host"))
			} else {
				t.Logf("%s %s: sent sanitized; host=%q", tc.name, rt.name, h.Get("Seen-Host"))
			}
		}
	}
}
