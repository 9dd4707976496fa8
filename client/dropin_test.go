package client

// What a user swapping net/http's transport for this one relies on, each
// found by Go's own transport tests run on it (internal/nethttpsuite) and
// tested here on its own: the 100-continue and 1xx cases, errors as
// net/http words them, the response's Close, the gzip body after Close,
// http.Client.Timeout's message, FromHTTPTransport's reading of an
// *http.Transport, RegisterProtocol, GODEBUG=http2client=0.

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// "Expect: 100-continue" answered by a final status without
// "Connection: close": the server reads the body next, so it is sent and
// the connection carries the next request (net/http does the same). With
// "Connection: close" the body stays unsent.
func TestExpectContinueFinalAnswerWithoutClose(t *testing.T) {
	for _, closing := range []bool{false, true} {
		t.Run(fmt.Sprintf("close=%v", closing), func(t *testing.T) {
			got := make(chan string, 2)
			var conns atomic.Int32
			addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
				conns.Add(1)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					if req.Header.Get("Expect") == "" {
						io.Copy(io.Discard, req.Body)
						c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
						continue
					}
					hdr := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
					if closing {
						hdr = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
					}
					c.Write([]byte(hdr)) // no 100 Continue: the body is read after
					if closing {
						return
					}
					b, _ := io.ReadAll(req.Body)
					got <- string(b)
				}
			})
			tr := &Transport{ExpectContinueTimeout: time.Hour}
			defer tr.CloseIdleConnections()
			read := 0
			body := readerFunc(func(p []byte) (int, error) {
				if read > 0 {
					return 0, io.EOF
				}
				read++
				return copy(p, "request body"), nil
			})
			req, _ := http.NewRequest("POST", "http://"+addr+"/", io.NopCloser(body))
			req.ContentLength = int64(len("request body"))
			req.Header.Set("Expect", "100-continue")
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if closing {
				if read != 0 {
					t.Errorf("the body was read (%d) for a connection that closes", read)
				}
				return
			}
			if b := <-got; b != "request body" {
				t.Errorf("server read %q, want the body", b)
			}
			resp, err = tr.RoundTrip(mustReq(t, "http://"+addr+"/next"))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1: the connection was not kept", n)
			}
		})
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// On HTTP/2 too the body waits for "100 Continue": a final error status
// before it means the body is never read.
func TestH2ExpectContinueWithholdsBody(t *testing.T) {
	for _, status := range []string{"401", "100"} {
		t.Run(status, func(t *testing.T) {
			addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
				switch {
				case f.Type == h2.FrameHeaders && status == "401":
					c.headers(f.StreamID, true, ":status", "401")
				case f.Type == h2.FrameHeaders:
					c.headers(f.StreamID, false, ":status", "100")
				case f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream):
					c.headers(f.StreamID, true, ":status", "204")
				}
			}))
			var reads atomic.Int32
			body := readerFunc(func(p []byte) (int, error) {
				if reads.Add(1) > 1 {
					return 0, io.EOF
				}
				return copy(p, "x"), nil
			})
			req, _ := http.NewRequest("POST", "http://"+addr+"/", io.NopCloser(body))
			req.ContentLength = 1
			req.Header.Set("Expect", "100-continue")
			var waited, got100 atomic.Bool
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				Wait100Continue: func() { waited.Store(true) },
				Got100Continue:  func() { got100.Store(true) },
			}))
			tr := h2cTransport(t)
			tr.ExpectContinueTimeout = time.Hour
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := map[string]string{"401": "401 0 false", "100": "204 2 true"}[status]
			if s := fmt.Sprintf("%d %d %v", resp.StatusCode, reads.Load(), got100.Load()); s != want {
				t.Errorf("status, body reads, Got100Continue = %s; want %s", s, want)
			}
			if !waited.Load() {
				t.Error("Wait100Continue not called")
			}
		})
	}
}

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

// 1xx heads handed to Got1xxResponse are the caller's to limit, as in
// net/http; without the hook more than 5 fail the request. 101 to a
// request that asked for no upgrade is its final response (HTTP/1.1).
func TestInformationalResponses(t *testing.T) {
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readReq(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/101" {
				c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\n\r\n"))
				return
			}
			c.Write([]byte(strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 10) +
				"HTTP/1.1 204 No Content\r\n\r\n"))
		}
	})
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/")); !errors.Is(err, errTooMany1xx) {
		t.Errorf("10 unseen 1xx: %v, want errTooMany1xx", err)
	}
	n := 0
	req := mustReq(t, "http://"+addr+"/")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(int, textproto.MIMEHeader) error { n++; return nil },
	}))
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != 204 || n != 10 {
		t.Fatalf("10 delivered 1xx: %v, %v, %d delivered; want 204 and 10", resp, err, n)
	}
	resp.Body.Close()
	resp, err = tr.RoundTrip(mustReq(t, "http://"+addr+"/101"))
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("101 without an upgrade asked: %v, %v; want the 101 as the response", resp, err)
	}
	resp.Body.Close()
}

// On HTTP/2, the same rule for 1xx heads.
func TestH2InformationalDelivered(t *testing.T) {
	addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
		if f.Type == h2.FrameHeaders {
			for range 10 {
				c.headers(f.StreamID, false, ":status", "103", "link", "</a>")
			}
			c.headers(f.StreamID, true, ":status", "204")
		}
	}))
	tr := h2cTransport(t)
	if _, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/")); !errors.Is(err, errTooMany1xx) {
		t.Errorf("10 unseen 1xx: %v, want errTooMany1xx", err)
	}
	n := 0
	req := mustReq(t, "http://"+addr+"/")
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(int, textproto.MIMEHeader) error { n++; return nil },
	}))
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != 204 || n != 10 {
		t.Fatalf("10 delivered 1xx: %v, %v, %d delivered; want 204 and 10", resp, err, n)
	}
	resp.Body.Close()
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

// FromHTTPTransport reads an *http.Transport as net/http would: zero
// values with net/http's meaning, HTTP/2 offered when net/http's own
// transport wires it (checked against it, on the same configurations).
func TestFromHTTPTransport(t *testing.T) {
	dial := func(ctx context.Context, n, a string) (net.Conn, error) { return nil, errors.New("unused") }
	h2Only := new(http.Protocols)
	h2Only.SetHTTP2(true)
	for name, std := range map[string]*http.Transport{
		"zero":                   {},
		"tls config":             {TLSClientConfig: &tls.Config{}},
		"tls config, forced":     {TLSClientConfig: &tls.Config{}, ForceAttemptHTTP2: true},
		"dialer":                 {DialContext: dial},
		"dialer, forced":         {DialContext: dial, ForceAttemptHTTP2: true},
		"empty TLSNextProto":     {TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}},
		"protocols, http2 only":  {Protocols: h2Only, TLSClientConfig: &tls.Config{}},
		"protocols, with dialer": {Protocols: h2Only, DialContext: dial},
	} {
		ours := FromHTTPTransport(std)
		std.CloseIdleConnections() // net/http wires its HTTP/2 on first use
		_, wired := std.TLSNextProto["h2"]
		if got := ours.Protocols.HTTP2(); got != wired {
			t.Errorf("%s: HTTP/2 offered = %v, net/http wired it: %v", name, got, wired)
		}
		if ours.Fallback != std || ours.MaxIdleConnsPerHost != http.DefaultMaxIdleConnsPerHost ||
			ours.IdleConnTimeout >= 0 || ours.TLSHandshakeTimeout >= 0 || ours.ExpectContinueTimeout >= 0 ||
			ours.MaxResponseHeaderBytes != 10<<20 {
			t.Errorf("%s: zero values read as %+v", name, ours)
		}
	}
}

// RegisterProtocol, as http.Transport's: a scheme's requests go to its
// RoundTripper first (http included); ErrSkipAltProtocol sends them on,
// with the body rewound.
func TestRegisterProtocol(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	tr.RegisterProtocol("foo", readerRT("from foo"))
	tr.RegisterProtocol("http", rtFunc(func(r *http.Request) (*http.Response, error) {
		io.Copy(io.Discard, r.Body) // read it: the body must be rewound
		return nil, http.ErrSkipAltProtocol
	}))
	c := &http.Client{Transport: tr}
	resp, err := c.Get("foo://x/")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "from foo" {
		t.Errorf("foo:// = %q", b)
	}
	resp, err = c.Post(srv.URL, "text/plain", strings.NewReader("data"))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "data" {
		t.Errorf("http:// after ErrSkipAltProtocol: %q, want the whole body", b)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	tr.RegisterProtocol("foo", readerRT(""))
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func readerRT(s string) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(s)), Request: r}, nil
	})
}

// GODEBUG=http2client=0 keeps this Transport on HTTP/1.1, as it keeps
// net/http's.
func TestGODEBUGHTTP2ClientOff(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for debug, want := range map[string]string{"": "HTTP/2.0", "http2client=0": "HTTP/1.1"} {
		t.Setenv("GODEBUG", debug)
		tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		resp, err := tr.RoundTrip(mustReq(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		if resp.Proto != want {
			t.Errorf("GODEBUG=%q: %s, want %s", debug, resp.Proto, want)
		}
	}
}

// A request through an HTTPS proxy goes to the Fallback built from the
// Transport's fields, with the CONNECT's headers and its response hook,
// and Stats counts it as proxied.
func TestProxyConnectFieldsReachFallback(t *testing.T) {
	sawHeader := make(chan string, 1)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "CONNECT" {
			sawHeader <- r.Header.Get("X-Proxy-Token") + "," + r.Header.Get("X-Dynamic")
		}
		http.Error(w, "no tunnels today", http.StatusForbidden)
	}))
	defer proxy.Close()
	var stats Stats
	var hookStatus atomic.Int32
	tr := &Transport{
		Proxy:              http.ProxyURL(mustURL(t, proxy.URL)),
		ProxyConnectHeader: http.Header{"X-Proxy-Token": {"secret"}},
		GetProxyConnectHeader: func(ctx context.Context, u *url.URL, target string) (http.Header, error) {
			return http.Header{"X-Dynamic": {target}}, nil
		},
		OnProxyConnectResponse: func(ctx context.Context, u *url.URL, req *http.Request, resp *http.Response) error {
			hookStatus.Store(int32(resp.StatusCode))
			return nil
		},
		Stats: &stats,
	}
	defer tr.CloseIdleConnections()
	if _, err := tr.RoundTrip(mustReq(t, "https://example.test/")); err == nil {
		t.Fatal("a refused tunnel succeeded")
	}
	// GetProxyConnectHeader's headers replace ProxyConnectHeader's, as in net/http.
	if got := <-sawHeader; got != ",example.test:443" {
		t.Errorf("CONNECT headers %q, want GetProxyConnectHeader's", got)
	}
	static := &Transport{Proxy: tr.Proxy, ProxyConnectHeader: tr.ProxyConnectHeader}
	defer static.CloseIdleConnections()
	static.RoundTrip(mustReq(t, "https://example.test/"))
	if got := <-sawHeader; got != "secret," {
		t.Errorf("CONNECT headers %q, want ProxyConnectHeader's", got)
	}
	if s := hookStatus.Load(); s != http.StatusForbidden {
		t.Errorf("OnProxyConnectResponse saw %d, want 403", s)
	}
	if n := stats.Snapshot().Fallback["proxy"]; n != 1 {
		t.Errorf("Stats: %d proxied requests, want 1", n)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
