package websocket

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// rawServer is a hand-written server for Dial: it reads the request,
// answers with answer(key) (the 101 or a refusal), then echoes frames,
// checking each is masked with a key not seen before. Its errors go to
// the test.
func rawServer(t *testing.T, answer func(r *http.Request, accept string) string) string {
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(20 * time.Second))
				br := bufio.NewReader(nc)
				r, err := http.ReadRequest(br)
				if err != nil {
					t.Error(err)
					return
				}
				key := r.Header.Get("Sec-WebSocket-Key")
				if !ws.ValidKey([]byte(key)) || r.Header.Get("Sec-WebSocket-Version") != "13" {
					t.Errorf("request: %v", r.Header)
				}
				io.WriteString(nc, answer(r, ws.AcceptKey(key)))
				keys := map[[4]byte]bool{}
				for {
					h, p, err := readFrame(br, ws.Server)
					if err != nil {
						return
					}
					if keys[h.Mask] {
						t.Errorf("masking key %x used twice", h.Mask)
					}
					keys[h.Mask] = true
					if h.Opcode == ws.OpClose {
						nc.Write(ws.AppendServerFrame(nil, ws.OpClose, true, p))
						return
					}
					nc.Write(ws.AppendServerFrame(nil, h.Opcode, h.Fin, p))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func switching(accept string, extra ...string) string {
	return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n" + strings.Join(extra, "") + "\r\n"
}

// TestDialRawServer: Dial against a hand-written server: the request's
// headers, masked frames with fresh keys, a frame sent with the 101
// (read first), subprotocol and extra headers, and the close handshake.
func TestDialRawServer(t *testing.T) {
	addr := rawServer(t, func(r *http.Request, accept string) string {
		if r.Header.Get("Authorization") != "Bearer x" || r.Header.Get("Sec-WebSocket-Protocol") != "a, b" || r.URL.RequestURI() != "/p?q=1" {
			t.Errorf("request %s %v", r.URL, r.Header)
		}
		return switching(accept, "Sec-WebSocket-Protocol: b\r\n") + string(ws.AppendServerFrame(nil, ws.OpText, true, []byte("hello")))
	})
	ctx := testCtx(t)
	c, _, err := Dial(ctx, "ws://"+addr+"/p?q=1", &DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer x"}},
		Subprotocols: []string{"a", "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subprotocol() != "b" {
		t.Errorf("Subprotocol %q", c.Subprotocol())
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "hello" {
		t.Fatalf("the frame sent with the 101: %q %v", msg, err)
	}
	for _, n := range echoSizes {
		msg := pattern(2, n, n)[:n]
		if err := c.Write(ctx, MessageBinary, msg); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.Read(ctx); err != nil || string(got) != string(msg) {
			t.Fatalf("echo of %d bytes: %d bytes, %v", n, len(got), err)
		}
	}
	if err := c.Close(ws.CloseNormal, "bye"); err != nil {
		t.Fatal(err)
	}
}

// TestDialBadAnswers: a 101 that does not answer the request, or a
// refusal, fails Dial with an error that says why, and the response.
func TestDialBadAnswers(t *testing.T) {
	cases := []struct {
		name   string
		answer func(accept string) string
		want   string
	}{
		{"refused", func(string) string {
			return "HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\n\r\nno way"
		}, "403"},
		{"redirect", func(string) string {
			return "HTTP/1.1 302 Found\r\nLocation: ws://elsewhere/\r\nContent-Length: 0\r\n\r\n"
		}, "302"},
		{"wrong accept", func(string) string { return switching("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") }, "Sec-WebSocket-Accept"},
		{"no upgrade", func(a string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + a + "\r\n\r\n"
		}, "Upgrade"},
		{"subprotocol not offered", func(a string) string { return switching(a, "Sec-WebSocket-Protocol: x\r\n") }, "not offered"},
		{"extension not offered", func(a string) string { return switching(a, "Sec-WebSocket-Extensions: permessage-deflate\r\n") }, "extensions"},
		{"subprotocol none offered", func(a string) string { return switching(a, "Sec-WebSocket-Protocol: a\r\n") }, "not offered"},
		{"not 101", func(a string) string {
			return strings.Replace(switching(a), "101 Switching Protocols\r\n", "200 OK\r\nContent-Length: 0\r\n", 1)
		}, "200"},
		{"connection keep-alive", func(a string) string {
			return strings.Replace(switching(a), "Connection: Upgrade", "Connection: keep-alive", 1)
		}, "Connection"},
		{"upgrade h2c", func(a string) string { return strings.Replace(switching(a), "Upgrade: websocket", "Upgrade: h2c", 1) }, "Upgrade"},
		{"two accepts", func(a string) string { return switching(a, "Sec-WebSocket-Accept: "+a+"\r\n") }, "Sec-WebSocket-Accept"},
		{"accept then another", func(a string) string {
			return switching(a, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n")
		}, "Sec-WebSocket-Accept"},
	}
	offered := []struct {
		name, extra, want string
	}{
		{"subprotocol list", "Sec-WebSocket-Protocol: a, b\r\n", "not offered"},
		{"two subprotocols", "Sec-WebSocket-Protocol: a\r\nSec-WebSocket-Protocol: b\r\n", "subprotocol"},
		{"subprotocol twice", "Sec-WebSocket-Protocol: a\r\nSec-WebSocket-Protocol: a\r\n", "subprotocol"},
		{"subprotocol case", "Sec-WebSocket-Protocol: A\r\n", "not offered"},
		{"two deflates", "Sec-WebSocket-Extensions: permessage-deflate, permessage-deflate\r\n", "more than one"},
		{"deflate twice", "Sec-WebSocket-Extensions: permessage-deflate\r\nSec-WebSocket-Extensions: permessage-deflate\r\n", "more than one"},
		{"other extension", "Sec-WebSocket-Extensions: x-webkit-deflate-frame\r\n", "not offered"},
		{"server window 16", "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=16\r\n", "extensions"},
		{"server window 7", "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=7\r\n", "extensions"},
		{"server window empty", "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits\r\n", "extensions"},
		{"client window 16", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=16\r\n", "extensions"},
		{"client window empty", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n", "extensions"},
		{"client window 09", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=09\r\n", "extensions"},
		{"param twice", "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; server_no_context_takeover\r\n", "extensions"},
		{"unknown param", "Sec-WebSocket-Extensions: permessage-deflate; x=1\r\n", "extensions"},
		{"takeover with value", "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover=1\r\n", "extensions"},
	}
	for _, o := range offered {
		cases = append(cases, struct {
			name   string
			answer func(accept string) string
			want   string
		}{o.name, func(a string) string { return switching(a, o.extra) }, o.want})
	}
	// These offer nothing; the others, subprotocols a and b, and
	// permessage-deflate.
	plain := map[string]bool{"extension not offered": true, "subprotocol none offered": true}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawServer(t, func(_ *http.Request, accept string) string { return tc.answer(accept) })
			opts := &DialOptions{Subprotocols: []string{"a", "b"}, Compression: true}
			if plain[tc.name] {
				opts = nil
			}
			c, resp, err := Dial(testCtx(t), "ws://"+addr, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) || c != nil || resp == nil {
				t.Fatalf("Dial: %v, want an error about %s", err, tc.want)
			}
			if tc.name == "redirect" && resp.Header.Get("Location") != "ws://elsewhere/" {
				t.Errorf("the 302's Location: %v", resp.Header)
			}
			if tc.name == "refused" {
				if body, _ := io.ReadAll(resp.Body); string(body) != "no way" {
					t.Errorf("body %q", body)
				}
			}
		})
	}
	if _, _, err := Dial(testCtx(t), "http://x", &DialOptions{HTTPHeader: http.Header{"Sec-WebSocket-Key": {"k"}}}); err == nil {
		t.Error("Dial let HTTPHeader set the key")
	}
	if _, _, err := Dial(testCtx(t), "ftp://x", nil); err == nil {
		t.Error("Dial took ftp://")
	}
}

// TestDialTLS: wss:// against Accept behind a TLS net/http server.
func TestDialTLS(t *testing.T) {
	ts := httptest.NewTLSServer(echoHandler(t, nil, nil))
	defer ts.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	ctx := testCtx(t)
	c, _, err := Dial(ctx, strings.Replace(ts.URL, "https", "wss", 1), &DialOptions{TLSConfig: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, MessageText, []byte("secure")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "secure" {
		t.Fatalf("%q %v", msg, err)
	}
}

// TestDialContext: a server that never answers the handshake: Dial
// returns when its ctx ends.
func TestDialContext(t *testing.T) {
	ln := listen(t)
	defer ln.Close()
	held := make(chan struct{})
	defer close(held)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			defer nc.Close()
			<-held // until the test ends: no answer to wait for
		}
	}()
	ctx, cancel := testCtxTimeout(100 * time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := Dial(ctx, "ws://"+ln.Addr().String(), nil)
	var ne net.Error
	if err == nil || time.Since(start) > promptly || !(errors.As(err, &ne) && ne.Timeout() || errors.Is(err, ctx.Err())) {
		t.Fatalf("Dial: %v after %v", err, time.Since(start))
	}
}

// headFlood is a server (or a proxy) that reads a request and answers
// with status and then header lines, 4 MiB of them, never ending the
// head: it holds the connection until the test ends.
func headFlood(t *testing.T, status string) string {
	ln := listen(t)
	held := make(chan struct{})
	t.Cleanup(func() { close(held); ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				if _, err := http.ReadRequest(bufio.NewReader(nc)); err != nil {
					return
				}
				line := "X-Pad: " + strings.Repeat("x", 1000) + "\r\n"
				b := []byte(status + "\r\n" + strings.Repeat(line, 4<<10))
				nc.Write(b)
				<-held
			}()
		}
	}()
	return ln.Addr().String()
}

// TestDialResponseHeadLimit: a handshake response (or a proxy's answer
// to CONNECT) whose head does not end fails Dial once it passes
// maxResponseHead, instead of taking memory until the ctx ends.
func TestDialResponseHeadLimit(t *testing.T) {
	for _, proxied := range []bool{false, true} {
		var target string
		var opts DialOptions
		if proxied {
			target = "ws://127.0.0.1:9/"
			opts.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: headFlood(t, "HTTP/1.1 200 Connection established")})
		} else {
			target = "ws://" + headFlood(t, "HTTP/1.1 101 Switching Protocols")
		}
		ctx, cancel := testCtxTimeout(3 * time.Second)
		c, _, err := Dial(ctx, target, &opts)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Fatalf("proxied %v: Dial: %v %v, want a head too large", proxied, c, err)
		}
	}
}

// TestDialMaskedServerFrame: a server frame that is masked (here sent
// with the 101) fails the client's Read, which sends close 1002 (RFC
// 6455 §5.1).
func TestDialMaskedServerFrame(t *testing.T) {
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	got := make(chan ws.CloseCode, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(promptly))
		br := bufio.NewReader(nc)
		r, err := http.ReadRequest(br)
		if err != nil {
			t.Error(err)
			return
		}
		io.WriteString(nc, switching(ws.AcceptKey(r.Header.Get("Sec-WebSocket-Key")))+string(ws.AppendClientFrame(nil, ws.OpText, true, rawMask, []byte("hi"))))
		for {
			h, p, err := readFrame(br, ws.Server)
			if err != nil {
				t.Errorf("the client's frames: %v", err)
				got <- 0
				return
			}
			if h.Opcode == ws.OpClose {
				code, _, _ := ws.ParseClose(p)
				got <- code
				return
			}
		}
	}()
	ctx := testCtx(t)
	c, _, err := Dial(ctx, "ws://"+ln.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if _, msg, err := c.Read(ctx); err == nil || CloseStatus(err) != ws.CloseProtocolError {
		t.Fatalf("Read: %q %v, want a protocol error", msg, err)
	}
	if code := <-got; code != ws.CloseProtocolError {
		t.Fatalf("the client's close frame says %d, want 1002", code)
	}
}

// TestDialUserinfo: a URL's user and password go as Basic Authorization,
// as net/http's client (and so coder/websocket) sends them, unless
// HTTPHeader has an Authorization of its own; errors do not show the
// password.
func TestDialUserinfo(t *testing.T) {
	auth := make(chan string, 2)
	addr := rawServer(t, func(r *http.Request, accept string) string {
		auth <- r.Header.Get("Authorization")
		return switching(accept)
	})
	ctx := testCtx(t)
	for _, tc := range []struct {
		hdr  http.Header
		want string
	}{
		{nil, "Basic dXNlcjpwYXNz"},
		{http.Header{"Authorization": {"Bearer x"}}, "Bearer x"},
	} {
		c, _, err := Dial(ctx, "ws://user:pass@"+addr+"/", &DialOptions{HTTPHeader: tc.hdr})
		if err != nil {
			t.Fatal(err)
		}
		c.CloseNow()
		if got := <-auth; got != tc.want {
			t.Errorf("Authorization %q, want %q", got, tc.want)
		}
	}
	_, _, err := Dial(ctx, "ws://user:secret@127.0.0.1:1/", nil) // refused
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Dial: %v, want an error without the password", err)
	}
}

// TestDialHeaderValidation: HTTPHeader names that are not tokens, values
// with control bytes, and the handshake's own headers (in any case) fail
// Dial before it dials (port 1: nothing answers there).
func TestDialHeaderValidation(t *testing.T) {
	for _, h := range []http.Header{
		{"X-A: b": {"1"}},
		{"": {"1"}},
		{"Upgrade ": {"x"}},
		{"Sec-WebSocket-Key\t": {"x"}},
		{"X": {"a\rb"}},
		{"X": {"a\x01b"}},
		{"X\n": {"1"}},
		{"sec-websocket-version": {"8"}},
		{"CONNECTION": {"close"}},
		{"Host": {"evil"}},
	} {
		_, _, err := Dial(testCtx(t), "ws://127.0.0.1:1/", &DialOptions{HTTPHeader: h})
		if err == nil || !strings.Contains(err.Error(), "HTTPHeader") {
			t.Errorf("HTTPHeader %q: %v, want an error about HTTPHeader", h, err)
		}
	}
}

// TestDialTLSConfigH2: a TLSConfig shared with an HTTP/2 client (h2 in
// NextProtos) against a server that speaks HTTP/2: Dial, which speaks
// HTTP/1.1, does not offer h2, and the handshake goes over HTTP/1.1. The
// caller's config is left as it was.
func TestDialTLSConfigH2(t *testing.T) {
	ts := httptest.NewUnstartedServer(echoHandler(t, nil, nil))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	cfg := &tls.Config{RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}}
	ctx := testCtx(t)
	c, _, err := Dial(ctx, strings.Replace(ts.URL, "https", "wss", 1), &DialOptions{TLSConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	echoWhole(t, ctx, c, MessageText, 10)
	if len(cfg.NextProtos) != 2 || cfg.NextProtos[0] != "h2" {
		t.Errorf("the caller's NextProtos became %q", cfg.NextProtos)
	}

	// A protocol Dial does not speak, offered and chosen, fails Dial
	// with an error that says so.
	other := httptest.NewUnstartedServer(echoHandler(t, nil, nil))
	other.TLS = &tls.Config{NextProtos: []string{"x-other"}}
	other.StartTLS()
	defer other.Close()
	roots.AddCert(other.Certificate())
	_, _, err = Dial(ctx, strings.Replace(other.URL, "https", "wss", 1), &DialOptions{TLSConfig: &tls.Config{RootCAs: roots, NextProtos: []string{"x-other"}}})
	if err == nil || !strings.Contains(err.Error(), "ALPN") {
		t.Errorf("Dial with x-other chosen: %v, want an error about ALPN", err)
	}
}

// TestDialSubprotocolValidation: subprotocols must be distinct tokens
// (RFC 6455 §4.1): one with a CR LF would add a header of its own to the
// request, "a, b" or "" would offer something else than asked. Dial
// fails before it dials (port 1: nothing answers there).
func TestDialSubprotocolValidation(t *testing.T) {
	for _, subs := range [][]string{
		{"chat\r\nX-Evil: 1"},
		{"a, b"},
		{""},
		{"a b"},
		{"a", "a"},
		{"a\x00"},
	} {
		_, _, err := Dial(testCtx(t), "ws://127.0.0.1:1/", &DialOptions{Subprotocols: subs})
		if err == nil || !strings.Contains(err.Error(), "Subprotocols") {
			t.Errorf("Subprotocols %q: %v, want an error about Subprotocols", subs, err)
		}
	}
}
