//lint:file-ignore SA1019 x/net's HTTP/2 Transport (deprecated for net/http's) is the Go client that can send RFC 8441's ":protocol": net/http's refuses the field (Go 1.26, 1.27)

package websocket

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
	"golang.org/x/net/http2"
)

// WebSockets over HTTP/2 (RFC 8441) on hotpath's engine. The client is
// x/net's HTTP/2 client: it sends an extended CONNECT (a request with
// method CONNECT and a ":protocol" header) once the server's SETTINGS
// allowed it, and streams the request body; test's side of the
// WebSocket is this package's client Conn on that stream (h2Dial).

// startH2 serves h (or native) on hotpath's server with ExtendedConnect,
// over TLS (ALPN h2) or h2c, and returns the base URL and an http.Client
// speaking HTTP/2 to it. mod, if set, changes the Server first.
func startH2(t *testing.T, overTLS bool, h http.Handler, native func(*server.Ctx), mod func(*server.Server)) (string, *http.Client) {
	t.Helper()
	s := &server.Server{Handler: h, Native: native, ExtendedConnect: true}
	if mod != nil {
		mod(s)
	}
	ln := listen(t)
	// x/net's client: net/http's own refuses the ":protocol" header
	// (Go 1.26 and 1.27).
	tr := &http2.Transport{}
	base := "http://" + ln.Addr().String()
	if overTLS {
		ts := httptest.NewTLSServer(http.NotFoundHandler()) // for its certificate
		t.Cleanup(ts.Close)
		s.TLSConfig = &tls.Config{Certificates: ts.TLS.Certificates}
		tr.TLSClientConfig = &tls.Config{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}
		go s.ServeTLS(ln, "", "")
		base = "https://" + ln.Addr().String()
	} else {
		var sp http.Protocols
		sp.SetHTTP1(true)
		sp.SetUnencryptedHTTP2(true)
		s.Protocols = &sp
		tr.AllowHTTP = true
		tr.DialTLSContext = func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		go s.Serve(ln)
	}
	t.Cleanup(func() { s.Close(); tr.CloseIdleConnections() })
	return base, &http.Client{Transport: tr}
}

// h2Dial opens a WebSocket with an extended CONNECT to url (a ws
// handshake's fields in hdr, "Name: value" each) and returns this
// package's client Conn on the stream, or the response that refused it.
func h2Dial(ctx context.Context, c *http.Client, url string, opts Options, hdr ...string) (*Conn, *http.Response, error) {
	pr, pw := io.Pipe()
	req, err := http.NewRequestWithContext(ctx, http.MethodConnect, url, pr)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set(":protocol", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Add(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		pw.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		pw.Close()
		return nil, resp, fmt.Errorf("extended CONNECT answered %s", resp.Status)
	}
	if resp.ProtoMajor != 2 {
		return nil, resp, fmt.Errorf("answered over %s", resp.Proto)
	}
	dfl, err := checkDeflateAnswer(resp.Header, req.Header.Get("Sec-WebSocket-Extensions") != "", false)
	if err != nil {
		return nil, resp, err
	}
	nc := &h2ClientConn{body: resp.Body, pw: pw}
	return newConn(nc, true, resp.Header.Get("Sec-WebSocket-Protocol"), opts, nil, dfl), resp, nil
}

// skipWithoutXConnect skips a test whose Go client cannot send RFC
// 8441's ":protocol" field: from Go 1.27, x/net's Transport runs on
// net/http's, which refuses it. There, TestBrowser (headless Chromium,
// websocket package) checks extended CONNECT.
func skipWithoutXConnect(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), `invalid header field name ":protocol"`) {
		t.Skipf("this Go's HTTP/2 client refuses the :protocol field (%v); TestBrowser covers RFC 8441 here", err)
	}
}

// h2ClientConn is the client's end of an extended CONNECT's stream as a
// net.Conn: the response body in, the request body's pipe out. A
// deadline that passes cuts the stream (the body and the pipe closed),
// which is all a test needs of one: a ctx that ends unblocks the read
// or write it covers.
type h2ClientConn struct {
	body io.ReadCloser
	pw   *io.PipeWriter

	mu  sync.Mutex
	cut *time.Timer
}

func (c *h2ClientConn) Read(p []byte) (int, error)  { return c.body.Read(p) }
func (c *h2ClientConn) Write(p []byte) (int, error) { return c.pw.Write(p) }
func (c *h2ClientConn) Close() error {
	c.pw.Close()
	return c.body.Close()
}
func (c *h2ClientConn) LocalAddr() net.Addr  { return stringAddr("client") }
func (c *h2ClientConn) RemoteAddr() net.Addr { return stringAddr("server") }
func (c *h2ClientConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut != nil {
		c.cut.Stop()
		c.cut = nil
	}
	if !t.IsZero() {
		c.cut = time.AfterFunc(time.Until(t), func() { c.Close() })
	}
	return nil
}
func (c *h2ClientConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *h2ClientConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }

// h2EchoHandlers are the four ways a server echoes over HTTP/2: both
// APIs, each with a blocking Read loop and with the event API (Start,
// which on a stream returns when the connection ends). done gets the
// error that ended each connection, and the request's protocol.
func h2EchoHandlers(t *testing.T, opts *AcceptOptions, done chan<- string) map[string]struct {
	h      http.Handler
	native func(*server.Ctx)
} {
	serve := func(c *Conn, events bool) string {
		if events {
			ended := make(chan error, 1)
			if err := c.Start(&echoEvents{closed: ended}); err != nil {
				return "Start: " + err.Error()
			}
			select {
			case err := <-ended:
				return "ended: " + err.Error()
			default:
				return "Start returned before OnClose"
			}
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				return "ended: " + err.Error()
			}
			if err := c.Write(ctx, typ, msg); err != nil {
				return "ended: " + err.Error()
			}
		}
	}
	handler := func(events bool) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := Accept(w, r, opts)
			if err != nil {
				done <- "Accept: " + err.Error()
				return
			}
			done <- r.Proto + " " + r.Method + " " + r.URL.Path + " " + serve(c, events)
		})
	}
	native := func(events bool) func(*server.Ctx) {
		return func(x *server.Ctx) {
			c, err := AcceptNative(x, opts)
			if err != nil {
				done <- "AcceptNative: " + err.Error()
				return
			}
			done <- string(x.Proto()) + " " + string(x.Method()) + " " + string(x.Path()) + " " + serve(c, events)
		}
	}
	return map[string]struct {
		h      http.Handler
		native func(*server.Ctx)
	}{
		"handler/read":  {h: handler(false)},
		"handler/start": {h: handler(true)},
		"native/read":   {native: native(false)},
		"native/start":  {native: native(true)},
	}
}

// TestH2Echo: over TLS and h2c, on both APIs, with Read and with Start,
// messages of every size echo over an extended CONNECT's stream (1 MiB
// ones past every flow-control window, and in all more than the native
// API's 4 MiB MaxRequestBodyBytes, which a tunnel is not bound by), with
// and without permessage-deflate; the client's close handshake ends the
// handler, which sees an HTTP/2 CONNECT to the URL's path.
func TestH2Echo(t *testing.T) {
	for _, overTLS := range []bool{true, false} {
		for _, compress := range []bool{false, true} {
			for name := range h2EchoHandlers(t, nil, nil) {
				mode := map[bool]string{true: "h2", false: "h2c"}[overTLS] + "/" + name + map[bool]string{true: "/deflate", false: ""}[compress]
				t.Run(mode, func(t *testing.T) {
					done := make(chan string, 1)
					hs := h2EchoHandlers(t, &AcceptOptions{Compression: compress}, done)[name]
					base, hc := startH2(t, overTLS, hs.h, hs.native, nil)
					ctx := testCtx(t)
					var hdr []string
					if compress {
						hdr = append(hdr, "Sec-WebSocket-Extensions: "+deflateOffer)
					}
					c, _, err := h2Dial(ctx, hc, base+"/chat", longClose, hdr...)
					skipWithoutXConnect(t, err)
					if err != nil {
						t.Fatal(err)
					}
					if got := c.negotiatedDeflate() != nil; got != compress {
						t.Fatalf("permessage-deflate negotiated %v, want %v", got, compress)
					}
					for _, n := range []int{0, 1, 125, 126, 65535, 65536, 200 << 10} {
						echoWhole(t, ctx, c, MessageBinary, n)
						echoWhole(t, ctx, c, MessageText, n)
					}
					for range 5 {
						echoWhole(t, ctx, c, MessageBinary, 1<<20)
					}
					if err := c.Close(ws.CloseNormal, "bye"); err != nil {
						t.Fatalf("Close: %v", err)
					}
					select {
					case got := <-done:
						if !strings.HasPrefix(got, "HTTP/2.0 CONNECT /chat ended: ") || !strings.Contains(got, "1000") {
							t.Errorf("the handler saw %q; want an HTTP/2.0 CONNECT to /chat that the client's 1000 ended", got)
						}
					case <-time.After(promptly):
						t.Fatal("the handler did not return after the close handshake")
					}
				})
			}
		}
	}
}

// TestH2ServerCloses: the server's Close sends the close frame on the
// stream and the handler returns; the client reads the close and then
// the stream's end.
func TestH2ServerCloses(t *testing.T) {
	returned := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		c, err := Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		c.Write(context.Background(), MessageText, []byte("hello"))
		c.Close(ws.CloseGoingAway, "done")
	})
	base, hc := startH2(t, false, h, nil, nil)
	ctx := testCtx(t)
	c, _, err := h2Dial(ctx, hc, base+"/", longClose)
	skipWithoutXConnect(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if typ, msg, err := c.Read(ctx); err != nil || typ != MessageText || string(msg) != "hello" {
		t.Fatalf("read %s %q %v; want text \"hello\"", typ, msg, err)
	}
	_, _, err = c.Read(ctx)
	if CloseStatus(err) != ws.CloseGoingAway {
		t.Fatalf("after the server's Close, Read: %v; want its 1001", err)
	}
	select {
	case <-returned:
	case <-time.After(promptly):
		t.Fatal("the handler did not return after Close")
	}
}

// onAccept returns a server of api ("handler": an http.Handler calling
// Accept; "native": a native handler calling AcceptNative) that runs
// serve on each connection it accepts with opts.
func onAccept(api string, opts *AcceptOptions, serve func(*Conn)) (http.Handler, func(*server.Ctx)) {
	if api == "handler" {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, err := Accept(w, r, opts); err == nil {
				serve(c)
			}
		}), nil
	}
	return nil, func(x *server.Ctx) {
		if c, err := AcceptNative(x, opts); err == nil {
			serve(c)
		}
	}
}

// TestH2CloseNowEndsStuckWrite: on both APIs, a handler blocked in Write
// (no deadline) to a client that stopped reading, its stream's window
// spent, returns once CloseNow is called from another goroutine, as over
// TCP. Close only woke reads, and the write waited for as long as the
// HTTP/2 connection lasted (found by a review helper).
func TestH2CloseNowEndsStuckWrite(t *testing.T) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			got := make(chan *Conn, 1)
			writeErr := make(chan error, 1)
			var written atomic.Int64
			writeAll := func(c *Conn) {
				got <- c
				big := make([]byte, 256<<10)
				for {
					if err := c.Write(context.Background(), MessageBinary, big); err != nil {
						writeErr <- err
						return
					}
					written.Add(int64(len(big)))
				}
			}
			h, native := onAccept(api, nil, writeAll)
			base, hc := startH2(t, false, h, native, nil)
			cc, _, err := h2Dial(testCtx(t), hc, base+"/", longClose)
			skipWithoutXConnect(t, err)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.CloseNow()
			sc := <-got
			for last := int64(-1); written.Load() != last; { // until the writes stop moving
				last = written.Load()
				time.Sleep(300 * time.Millisecond)
			}
			sc.CloseNow()
			select {
			case <-writeErr: // it failed, as a write after CloseNow does
			case <-time.After(promptly):
				t.Fatalf("Write still blocked %v after CloseNow (%d bytes written before)", promptly, written.Load())
			}
		})
	}
}

// TestH2IdleTimeoutBetweenReads: on both APIs, an IdleTimeout that
// passes while the handler works between two Reads (no Read waiting)
// does not fail the next Read, whose message comes well within the
// timeout, as on TCP. Over HTTP/2 the deadline set before the first
// Read stayed on the stream, and its passing broke the stream's body for
// good (found by a review helper).
func TestH2IdleTimeoutBetweenReads(t *testing.T) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			res := make(chan error, 1)
			opts := &AcceptOptions{Options: Options{IdleTimeout: time.Second}}
			serve := func(c *Conn) {
				defer c.CloseNow()
				if _, _, err := c.Read(context.Background()); err != nil {
					res <- err
					return
				}
				time.Sleep(1500 * time.Millisecond) // the handler works, past IdleTimeout
				_, _, err := c.Read(context.Background())
				res <- err
			}
			h, native := onAccept(api, opts, serve)
			base, hc := startH2(t, false, h, native, nil)
			ctx := testCtx(t)
			cc, _, err := h2Dial(ctx, hc, base+"/", longClose)
			skipWithoutXConnect(t, err)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.CloseNow()
			cc.Write(ctx, MessageText, []byte("one"))
			time.Sleep(1700 * time.Millisecond) // about 200 ms into the handler's second Read
			cc.Write(ctx, MessageText, []byte("two"))
			select {
			case err := <-res:
				if err != nil {
					t.Errorf("second Read: %v; want message two (it came about 200 ms into a Read with IdleTimeout 1 s)", err)
				}
			case <-time.After(promptly):
				t.Fatal("the handler's second Read did not return")
			}
		})
	}
}

// TestH2IdlePastStallTimeouts: a WebSocket over HTTP/2 idles past the
// server's ReadStallTimeout and WriteStallTimeout (a body read with no
// progress would otherwise be cut) and still echoes: Accept lifted them
// from the stream.
func TestH2IdlePastStallTimeouts(t *testing.T) {
	for name := range h2EchoHandlers(t, nil, nil) {
		t.Run(name, func(t *testing.T) {
			hs := h2EchoHandlers(t, nil, make(chan string, 1))[name]
			base, hc := startH2(t, false, hs.h, hs.native, func(s *server.Server) {
				s.ReadStallTimeout = 100 * time.Millisecond
				s.WriteStallTimeout = 100 * time.Millisecond
				s.ReadTimeout = 100 * time.Millisecond
			})
			ctx := testCtx(t)
			c, _, err := h2Dial(ctx, hc, base+"/", longClose)
			skipWithoutXConnect(t, err)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			echoWhole(t, ctx, c, MessageText, 10)
			time.Sleep(500 * time.Millisecond) // five times each timeout
			echoWhole(t, ctx, c, MessageText, 10)
		})
	}
}

// TestH2Refusals: what is not a WebSocket handshake over HTTP/2 is
// refused with its reason, on both APIs; a server without
// ExtendedConnect does not allow the handshake at all (Go's client
// refuses to send it).
func TestH2Refusals(t *testing.T) {
	apis := map[string]struct {
		h      http.Handler
		native func(*server.Ctx)
	}{
		"handler": {h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, err := Accept(w, r, nil); err == nil {
				c.CloseNow()
			}
		})},
		"native": {native: func(x *server.Ctx) {
			if c, err := AcceptNative(x, nil); err == nil {
				c.CloseNow()
			}
		}},
	}
	for name, api := range apis {
		t.Run(name, func(t *testing.T) {
			base, hc := startH2(t, false, api.h, api.native, nil)
			ctx := testCtx(t)
			cases := []struct {
				what   string
				method string
				hdr    []string
				status int
				reason string
			}{
				{"a GET", http.MethodGet, []string{"Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="}, 400, "extended CONNECT (RFC 8441)"},
				{"another protocol", http.MethodConnect, []string{":protocol: webtransport", "Sec-WebSocket-Version: 13"}, 400, `:protocol is "webtransport"`},
				{"another version", http.MethodConnect, []string{":protocol: websocket", "Sec-WebSocket-Version: 8"}, 400, "Sec-WebSocket-Version"},
				{"another origin", http.MethodConnect, []string{":protocol: websocket", "Sec-WebSocket-Version: 13", "Origin: https://evil.example"}, 403, "not allowed"},
			}
			for _, tc := range cases {
				req, _ := http.NewRequestWithContext(ctx, tc.method, base+"/", nil)
				if tc.method == http.MethodConnect {
					req.Body = io.NopCloser(strings.NewReader("")) // a stream, as a WebSocket's
				}
				for _, kv := range tc.hdr {
					k, v, _ := strings.Cut(kv, ": ")
					req.Header.Set(k, v)
				}
				resp, err := hc.Do(req)
				skipWithoutXConnect(t, err)
				if err != nil {
					t.Fatalf("%s: %v", tc.what, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.reason) {
					t.Errorf("%s: %d %q; want %d with %q", tc.what, resp.StatusCode, body, tc.status, tc.reason)
				}
			}
		})
	}
	t.Run("not allowed", func(t *testing.T) {
		base, hc := startH2(t, false, echoHandler(t, nil, nil), nil, func(s *server.Server) { s.ExtendedConnect = false })
		_, _, err := h2Dial(testCtx(t), hc, base+"/", longClose)
		skipWithoutXConnect(t, err)
		if err == nil || !strings.Contains(err.Error(), "extended connect not supported") {
			t.Fatalf("an extended CONNECT to a server without ExtendedConnect: %v; want Go's client to refuse it", err)
		}
	})
}
