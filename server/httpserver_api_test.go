package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// http.Server's API on server.Server: the fields, methods and values a
// service moving from net/http uses, each meaning what it means there.

// forHandlerModes runs f for a Server made by mk (its Handler set), on
// hotpath's engines: HTTP/1.1, HTTP/1.1 over TLS, HTTP/2 over TLS and h2c.
func forHandlerModes(t *testing.T, mk func() *Server, f func(t *testing.T, s *Server, base string, c *http.Client)) {
	runModes(t, func(t *testing.T, m mode) {
		s := mk()
		base, c := m.serve(t, s, s.Handler, nil)
		f(t, s, base, c)
	}, mode{proto: "h1"}, mode{proto: "https1"}, mode{proto: "h2"}, mode{proto: "h2c"})
}

type ctxKey string

// BaseContext and ConnContext shape every request's context, under
// http.ServerContextKey and http.LocalAddrContextKey, on every protocol.
func TestHTTPServerContexts(t *testing.T) {
	var bases, conns atomic.Int32
	mk := func() *Server {
		s := &Server{}
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			_, isSrv := ctx.Value(http.ServerContextKey).(*http.Server)
			_, isAddr := ctx.Value(http.LocalAddrContextKey).(net.Addr)
			fmt.Fprintf(w, "base=%v conn=%v server=%v addr=%v", ctx.Value(ctxKey("base")), ctx.Value(ctxKey("conn")), isSrv, isAddr)
		})
		s.BaseContext = func(net.Listener) context.Context {
			bases.Add(1)
			return context.WithValue(context.Background(), ctxKey("base"), "b")
		}
		s.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			conns.Add(1)
			if ctx.Value(http.ServerContextKey) == nil {
				t.Error("ConnContext's context has no http.ServerContextKey")
			}
			return context.WithValue(ctx, ctxKey("conn"), "c")
		}
		return s
	}
	forHandlerModes(t, mk, func(t *testing.T, s *Server, base string, c *http.Client) {
		if got := getBody(t, c, base+"/"); got != "base=b conn=c server=true addr=true" {
			t.Errorf("request context: %q", got)
		}
	})
	if bases.Load() != 4 || conns.Load() < 4 {
		t.Errorf("BaseContext called %d times (want one per listener: 4), ConnContext %d (want one per connection)", bases.Load(), conns.Load())
	}
}

func getBody(t *testing.T, c *http.Client, url string) string {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, b := mustDo(t, c, req)
	return string(b)
}

// The graceful-shutdown idiom of net/http holds as written:
// ListenAndServe's error after Shutdown is http.ErrServerClosed, and the
// functions given to RegisterOnShutdown run.
func TestShutdownIdiom(t *testing.T) {
	s := &Server{Addr: "127.0.0.1:0", Handler: http.NotFoundHandler()}
	hook := make(chan struct{})
	s.RegisterOnShutdown(func() { close(hook) })
	var cs func(net.Conn, http.ConnState) = func(net.Conn, http.ConnState) {} // net/http's type
	s.ConnState = cs
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe() }()
	time.Sleep(50 * time.Millisecond)
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("ListenAndServe after Shutdown: %v, want http.ErrServerClosed", err)
	}
	select {
	case <-hook:
	case <-time.After(5 * time.Second):
		t.Fatal("the RegisterOnShutdown function did not run")
	}
}

// With keep-alives off, every response ends its connection: the next
// request dials anew, on every protocol.
func TestSetKeepAlivesEnabled(t *testing.T) {
	mk := func() *Server {
		return &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })}
	}
	forHandlerModes(t, mk, func(t *testing.T, s *Server, base string, c *http.Client) {
		reused := func() bool {
			var got bool
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Reused }})
			req, _ := http.NewRequestWithContext(ctx, "GET", base+"/", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return got
		}
		reused()
		if !reused() {
			t.Fatal("keep-alives on: the second request did not reuse the connection")
		}
		s.SetKeepAlivesEnabled(false)
		time.Sleep(50 * time.Millisecond) // the idle connection closes, or GOAWAY arrives
		reused()
		if reused() {
			t.Error("keep-alives off: a request reused a connection")
		}
	})
}

// "OPTIONS *" is the server's to answer (200, Content-Length: 0), unless
// DisableGeneralOptionsHandler passes it to the handler, on every mode of
// the http.Handler API (Go's client sends the target "*", on HTTP/2 as
// the :path, for a URL whose Opaque is "*").
func TestGeneralOptionsHandler(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "handler") })
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		for _, disable := range []bool{false, true} {
			base, c := m.serve(t, &Server{DisableGeneralOptionsHandler: disable}, h, nil)
			req := mustRequest(t, "OPTIONS", base)
			req.URL.Opaque = "*"
			resp, body := mustDo(t, c, req)
			want, wantLen := "", int64(0)
			if disable {
				want, wantLen = "handler", 7
			}
			if resp.StatusCode != 200 || string(body) != want || resp.ContentLength != wantLen {
				t.Errorf("DisableGeneralOptionsHandler=%v: %d %q Content-Length %d, want 200 %q %d",
					disable, resp.StatusCode, body, resp.ContentLength, want, wantLen)
			}
		}
	}, handlerModes()...)
}

// TLSNextProto set to an empty map turns HTTP/2 off over TLS, as with
// net/http; a protocol of the user's takes the connections that
// negotiate it.
//
// Modes: the choice between engines itself (ALPN, the h2c preface,
// HTTP2HandOff), which the matrix's modes take as given.
func TestTLSNextProto(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })
	s := &Server{Handler: h, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	base, _, h2c := startH2Both(t, s, false)
	if got := getBody(t, h2c, base+"/"); got != "HTTP/1.1" {
		t.Errorf("with an empty TLSNextProto an HTTP/2 client got %s, want HTTP/1.1", got)
	}

	called := make(chan string, 1)
	s2 := &Server{Handler: h, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){
		"x-hotpath-test": func(hs *http.Server, tc *tls.Conn, hh http.Handler) {
			io.WriteString(tc, "mine")
			called <- fmt.Sprintf("%v %v", hs != nil, hh != nil)
		},
	}}
	cert, pool := testCert(t)
	s2.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := startTLS(t, s2)
	tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"x-hotpath-test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	b, _ := io.ReadAll(tc)
	if string(b) != "mine" || tc.ConnectionState().NegotiatedProtocol != "x-hotpath-test" {
		t.Errorf("a TLSNextProto protocol: read %q, negotiated %q", b, tc.ConnectionState().NegotiatedProtocol)
	}
	if got := <-called; got != "true true" {
		t.Errorf("TLSNextProto function called with server and handler set: %s", got)
	}
}

// Protocols with UnencryptedHTTP2 (and without HTTP2) serves h2c, and
// HTTP/1.1 beside it.
//
// Modes: HTTP/1.1 and h2c on one cleartext Server: the choice between
// engines itself (here by Protocols, without UnencryptedHTTP2), which the
// matrix's modes take as given (TestHTTP2ConfigIsTheSettings runs
// Server.HTTP2 on the HTTP/2 modes).
func TestProtocolsUnencryptedHTTP2(t *testing.T) {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) }), Protocols: &p}
	base := "http://" + startServer(t, s)
	one, two := h2Clients(t, nil)
	if got := getBody(t, two, base+"/"); got != "HTTP/2.0" {
		t.Errorf("an h2c client got %s, want HTTP/2.0", got)
	}
	if got := getBody(t, one, base+"/"); got != "HTTP/1.1" {
		t.Errorf("an HTTP/1.1 client got %s, want HTTP/1.1", got)
	}
}

// Server.HTTP2's MaxConcurrentStreams and MaxReceiveBufferPerStream are
// the SETTINGS an HTTP/2 connection opens with, as on net/http, on every
// HTTP/2 mode: hotpath's engine applies them (Server.HTTP2's doc), and so
// must net/http's behind HTTP2HandOff, to which that doc leaves the
// other fields.
func TestHTTP2ConfigIsTheSettings(t *testing.T) {
	var modes []mode
	for _, m := range allModes {
		if m.isH2() {
			modes = append(modes, m)
		}
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		s := &Server{HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 7, MaxReceiveBufferPerStream: 128 << 10}}
		base, c := m.serve(t, s, http.NotFoundHandler(), func(*Ctx) {})
		nc := m.dialRaw(t, base, c)
		nc.Write(h2ClientStart())
		f := readFrames(t, nc, func(f *h2.Frame) bool { return f.Type == h2.FrameSettings && !f.Flags.Has(h2.FlagAck) })
		got := map[h2.SettingID]uint32{}
		for i := range f.NumSettings() {
			st := f.Setting(i)
			got[st.ID] = st.Val
		}
		if got[h2.SettingMaxConcurrentStreams] != 7 || got[h2.SettingInitialWindowSize] != 128<<10 {
			t.Errorf("SETTINGS %v, want MAX_CONCURRENT_STREAMS 7 and INITIAL_WINDOW_SIZE 131072", got)
		}
	}, modes...)
}

// The package-level Serve serves a handler with the defaults, as
// net/http's: HTTP/1.1; and ServeTLS, over TLS, HTTP/1.1 and HTTP/2.
//
// Modes: HTTP/1.1 (Serve), HTTP/1.1 and HTTP/2 over TLS (ServeTLS): the
// package-level functions make a Server of their own with the defaults,
// which serve no h2c, no hand-off and no native API, and which
// mode.serve cannot reach.
func TestPackageServe(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pkg "+r.Proto) })
	t.Run("Serve", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- Serve(ln, h) }()
		one, two := h2Clients(t, nil)
		if got := getBody(t, one, "http://"+ln.Addr().String()+"/"); got != "pkg HTTP/1.1" {
			t.Errorf("package Serve answered %q", got)
		}
		if resp, err := two.Get("http://" + ln.Addr().String() + "/"); err == nil {
			resp.Body.Close()
			t.Errorf("package Serve served h2c (%s) without UnencryptedHTTP2", resp.Proto)
		}
		ln.Close()
		if err := <-done; err == nil {
			t.Error("Serve returned nil after its listener closed")
		}
	})
	t.Run("ServeTLS", func(t *testing.T) {
		cert, pool := testCert(t)
		dir := t.TempDir()
		certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600)
		os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- ServeTLS(ln, h, certFile, keyFile) }()
		one, two := h2Clients(t, pool)
		base := "https://" + ln.Addr().String() + "/"
		if got := getBody(t, one, base); got != "pkg HTTP/1.1" {
			t.Errorf("package ServeTLS answered %q to HTTP/1.1", got)
		}
		if got := getBody(t, two, base); got != "pkg HTTP/2.0" {
			t.Errorf("package ServeTLS answered %q to HTTP/2", got)
		}
		one.CloseIdleConnections()
		two.CloseIdleConnections()
		ln.Close()
		if err := <-done; err == nil {
			t.Error("ServeTLS returned nil after its listener closed")
		}
	})
}

// slowAddrListener hands out connections whose RemoteAddr blocks until
// release is closed, the first one only, as a PROXY-protocol listener's
// does until the client's header arrives.
type slowAddrListener struct {
	net.Listener
	release chan struct{}
	n       atomic.Int32
}

type slowAddrConn struct {
	net.Conn
	release chan struct{}
}

func (l *slowAddrListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil || l.n.Add(1) > 1 {
		return c, err
	}
	return slowAddrConn{c, l.release}, nil
}

func (c slowAddrConn) RemoteAddr() net.Addr {
	<-c.release
	return c.Conn.RemoteAddr()
}

// A connection whose RemoteAddr blocks holds up no other, on every mode:
// the accept loop does not ask for it (net/http's does not either).
func TestBlockingRemoteAddrDoesNotStopAccepting(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.RemoteAddr) })
	nh := func(c *Ctx) { c.WriteString(c.RemoteAddr().String()) }
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		var sl *slowAddrListener
		base, c := m.serveListener(t, &Server{}, h, nh, func(ln net.Listener) net.Listener {
			sl = &slowAddrListener{Listener: ln, release: release}
			return sl
		})
		dial(t, hostOf(t, base)) // the first connection: its RemoteAddr blocks
		waitFor(t, "the first connection accepted", func() bool { return sl.n.Load() == 1 })
		if got := getBody(t, c, base+"/"); !strings.HasPrefix(got, "127.0.0.1:") {
			t.Fatalf("the second connection got %q", got)
		}
	})
}

// A connection whose TLS handshake ends after Shutdown began, and which
// negotiates h2, still reports StateClosed (httptest's Close waits for
// it).
//
// Modes: TLS, a handshake that ends after Shutdown began: before any
// protocol.
func TestConnStateClosedAfterLateHandshake(t *testing.T) {
	closed := make(chan struct{})
	s := &Server{Handler: http.NotFoundHandler(), ErrorLog: discardLog}
	s.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			close(closed)
		}
	}
	cert, pool := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := startTLS(t, s)
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	time.Sleep(50 * time.Millisecond) // accepted, waiting for its handshake
	go s.Shutdown(context.Background())
	time.Sleep(50 * time.Millisecond)
	tc := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"h2"}})
	tc.Handshake()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("no StateClosed for a connection whose handshake ended after Shutdown began")
	}
}

// A plain-HTTP request on the TLS port gets net/http's 400 with a
// reason, not a silent close.
//
// Modes: TLS, before any protocol: plain-HTTP bytes on the TLS port.
func TestPlainHTTPOnTLSPort(t *testing.T) {
	s := &Server{Handler: http.NotFoundHandler(), ErrorLog: discardLog}
	cert, _ := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	nc := dial(t, startTLS(t, s))
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	b, _ := io.ReadAll(nc)
	if !strings.HasPrefix(string(b), "HTTP/1.0 400 Bad Request\r\n") || !strings.Contains(string(b), "HTTPS server") {
		t.Fatalf("a plain-HTTP request on the TLS port read %q", b)
	}
}

// A second WriteHeader is superfluous, as with net/http, on every mode of
// the http.Handler API: the first status stays, and one with a bad code
// (0) after output is not a panic that cuts the response. hotpath's
// engines log it, as net/http's HTTP/1.1 server does; the hand-off's
// HTTP/2 server is net/http's, which ignores it silently.
// (TestAdapterSemanticsSuperfluousWriteHeader compares the HTTP/1.1 log
// and wire with net/http's.)
func TestSuperfluousWriteHeader(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/twice" {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusTeapot)
			io.WriteString(w, "first wins")
			return
		}
		io.WriteString(w, "body")
		w.WriteHeader(0)
	})
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		logged := &lockedBuffer{}
		base, c := m.serve(t, &Server{ErrorLog: log.New(logged, "", 0)}, h, nil)
		if resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/")); resp.StatusCode != 200 || string(body) != "body" {
			t.Errorf("WriteHeader(0) after output: %d %q, want 200 body", resp.StatusCode, body)
		}
		if resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/twice")); resp.StatusCode != 202 || string(body) != "first wins" {
			t.Errorf("WriteHeader twice: %d %q, want 202 first wins", resp.StatusCode, body)
		}
		if m.isHandoff() {
			return
		}
		waitFor(t, "the superfluous calls logged", func() bool { return strings.Count(logged.String(), "superfluous") == 2 })
	}, handlerModes()...)
}

// A panic after a Hijack is logged: a WebSocket handler's must not
// vanish. On both HTTP/1.1 modes of the http.Handler API: Hijack exists
// only on HTTP/1.1 (on HTTP/2, ResponseController.Hijack fails with
// http.ErrNotSupported).
func TestPanicAfterHijackLogged(t *testing.T) {
	logged := &lockedBuffer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			defer nc.Close()
		}
		panic("after the hijack on " + r.URL.Path)
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{ErrorLog: log.New(logged, "", 0)}, h, nil)
		if resp, err := c.Get(base + "/" + m.proto); err == nil {
			resp.Body.Close()
			t.Errorf("a hijacked connection answered %d", resp.StatusCode)
		}
		want := "after the hijack on /" + m.proto
		waitFor(t, "the panic logged", func() bool { return strings.Contains(logged.String(), want) })
	}, mode{proto: "h1"}, mode{proto: "https1"})
}

// A Content-Type the handler sets after its first Write is not the
// response's: as with net/http, the header as it was at the first Write
// (or WriteHeader) counts, and the body's type is sniffed.
func TestContentTypeSetAfterWrite(t *testing.T) {
	mk := func() *Server {
		return &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html><body>hi</body></html>")
			w.Header().Set("Content-Type", "application/late")
		})}
	}
	forHandlerModes(t, mk, func(t *testing.T, s *Server, base string, c *http.Client) {
		req, _ := http.NewRequest("GET", base+"/", nil)
		resp, _ := mustDo(t, c, req)
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("Content-Type %q, want the sniffed text/html; charset=utf-8", ct)
		}
	})
}

// Header()["Date"] = nil suppresses the automatic Date, and
// Header()["Content-Length"] = nil the automatic length, as on net/http,
// on every mode of the http.Handler API.
func TestNilHeaderSuppressesAutomatic(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header()["Content-Length"] = nil
		io.WriteString(w, "small")
	})
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{}, h, nil)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if _, ok := resp.Header["Date"]; ok || resp.ContentLength != -1 || string(body) != "small" {
			t.Fatalf("Date %q, length %d, body %q: want no Date, no Content-Length, the body", resp.Header["Date"], resp.ContentLength, body)
		}
	}, handlerModes()...)
}

// A 1xx response (103 Early Hints) leaves out the Content-Length and
// Transfer-Encoding the handler set for its final response, as net/http,
// on every mode of the http.Handler API (the native API sends no 1xx).
func TestInformationalLeavesOutFraming(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "final")
	})
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		base, c := m.serve(t, &Server{}, h, nil)
		var hints []string
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, hdr textproto.MIMEHeader) error {
			hints = append(hints, fmt.Sprintf("%d Link=%q Content-Length=%q Transfer-Encoding=%q",
				code, hdr.Get("Link"), hdr.Values("Content-Length"), hdr.Values("Transfer-Encoding")))
			return nil
		}}
		req := mustRequest(t, "GET", base+"/").WithContext(httptrace.WithClientTrace(context.Background(), trace))
		resp, body := mustDo(t, c, req)
		if want := `103 Link="</style.css>; rel=preload" Content-Length=[] Transfer-Encoding=[]`; len(hints) != 1 || hints[0] != want {
			t.Errorf("the 1xx responses: %q, want [%s]", hints, want)
		}
		if resp.StatusCode != 200 || resp.ContentLength != 5 || string(body) != "final" {
			t.Errorf("the final response: %d, Content-Length %d, %q", resp.StatusCode, resp.ContentLength, body)
		}
	}, handlerModes()...)
}

// statefulConn is a plain connection that reports a TLS state, as a
// wrapper around a *tls.Conn does (a TLS terminator's, kTLS), with proto
// as the negotiated protocol.
type statefulConn struct {
	net.Conn
	proto string
}

func (c statefulConn) ConnectionState() tls.ConnectionState {
	return tls.ConnectionState{HandshakeComplete: true, ServerName: "wrapped.example", NegotiatedProtocol: c.proto}
}

type statefulListener struct {
	net.Listener
	proto string
}

func (l statefulListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return statefulConn{c, l.proto}, nil
}

// Request.TLS comes from any connection with a ConnectionState method,
// not only a *tls.Conn, as net/http's does, and the connection is served
// by the protocol that state negotiated: on the cleartext modes of the
// http.Handler API (a TLS mode's connections are *tls.Conn), the wrapper
// saying http/1.1 on h1 and h2 on the h2c ones, whose clients then speak
// HTTP/2 over it as over TLS.
func TestRequestTLSFromConnectionState(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			fmt.Fprintf(w, "%s %s %s", r.Proto, r.TLS.ServerName, r.TLS.NegotiatedProtocol)
		}
	})
	// BUG: with HTTP2HandOff, a connection whose ConnectionState says
	// h2 goes to the TLS hand-off (afterTLS), whose net/http server takes
	// a connection that is not a *tls.Conn for HTTP/1.x: it answers the
	// HTTP/2 preface with an HTTP/1.1 error, where hotpath's own engine
	// serves HTTP/2. handoff-h2c is left out until it is fixed.
	var modes []mode
	for _, m := range handlerModes() {
		if m.cleartext() && m.proto != "handoff-h2c" {
			modes = append(modes, m)
		}
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		proto, want := "http/1.1", "HTTP/1.1 wrapped.example http/1.1"
		if m.isH2() {
			proto, want = "h2", "HTTP/2.0 wrapped.example h2"
		}
		base, c := m.serveListener(t, &Server{}, h, nil, func(ln net.Listener) net.Listener { return statefulListener{ln, proto} })
		if got := getBody(t, c, base+"/"); got != want {
			t.Fatalf("Request.TLS from a ConnectionState method: %q, want %q", got, want)
		}
	}, modes...)
}

// TestServerHasHTTPServerAPI holds server.Server to http.Server's API on
// the Go that runs it (Go 1.27 added MaxHeaderValueCount): every exported
// field with the same type, every method with the same signature.
func TestServerHasHTTPServerAPI(t *testing.T) {
	ours, theirs := reflect.TypeFor[Server](), reflect.TypeFor[http.Server]()
	for f := range theirs.Fields() {
		if !f.IsExported() {
			continue
		}
		g, ok := ours.FieldByName(f.Name)
		if !ok {
			t.Errorf("server.Server has no field %s (%v)", f.Name, f.Type)
			continue
		}
		if g.Type != f.Type {
			t.Errorf("server.Server.%s is %v; http.Server's is %v", f.Name, g.Type, f.Type)
		}
	}
	ptrOurs, ptrTheirs := reflect.PointerTo(ours), reflect.PointerTo(theirs)
	for m := range ptrTheirs.Methods() {
		g, ok := ptrOurs.MethodByName(m.Name)
		if !ok {
			t.Errorf("server.Server has no method %s", m.Name)
			continue
		}
		// Compare the signatures without the receiver.
		if got, want := methodSig(g.Type), methodSig(m.Type); got != want {
			t.Errorf("(*server.Server).%s is %s; http.Server's is %s", m.Name, got, want)
		}
	}
}

func methodSig(f reflect.Type) string {
	var b strings.Builder
	b.WriteString("func(")
	for i := 1; i < f.NumIn(); i++ {
		if i > 1 {
			b.WriteString(", ")
		}
		b.WriteString(f.In(i).String())
	}
	b.WriteString(")")
	for i := 0; i < f.NumOut(); i++ {
		b.WriteString(" " + f.Out(i).String())
	}
	return b.String()
}

// Closed is the last ConnState a connection reports: a late report (an
// HTTP/2 worker's idle, after its connection ended) is dropped, and so
// is a repeat.
func TestConnStateNothingAfterClosed(t *testing.T) {
	var got []ConnState
	s := &Server{ConnState: func(_ net.Conn, st http.ConnState) { got = append(got, st) }}
	c := &conn{srv: s}
	c.state.Store(-1)
	for _, st := range []ConnState{StateNew, StateActive, StateActive, StateIdle, StateClosed, StateIdle, StateActive, StateClosed} {
		c.setState(st)
	}
	if want := []ConnState{StateNew, StateActive, StateIdle, StateClosed}; !slices.Equal(got, want) {
		t.Errorf("reported %v, want %v", got, want)
	}
}
