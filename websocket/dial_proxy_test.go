package websocket

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// connectProxy is an HTTP proxy that tunnels CONNECT requests carrying
// want as Proxy-Authorization (any, if want is ""), and answers 407
// otherwise; it counts the tunnels it opened.
func connectProxy(t *testing.T, want string) (*url.URL, *atomic.Int32) {
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	var tunnels atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				if req.Method != http.MethodConnect || want != "" && req.Header.Get("Proxy-Authorization") != want {
					io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
					return
				}
				up, err := net.Dial("tcp", req.Host)
				if err != nil {
					io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
					return
				}
				defer up.Close()
				tunnels.Add(1)
				io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
				go io.Copy(up, br)
				io.Copy(c, up)
			}()
		}
	}()
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}, &tunnels
}

// TestDialProxy: ws:// and wss:// through an HTTP proxy's CONNECT
// tunnel, with the proxy URL's user sent as Basic Proxy-Authorization;
// a proxy that refuses fails Dial with its status.
func TestDialProxy(t *testing.T) {
	plain := httptest.NewServer(echoHandler(t, nil, nil))
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(echoHandler(t, nil, nil))
	t.Cleanup(secure.Close)
	pool := secure.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	proxyURL, tunnels := connectProxy(t, "Basic dXNlcjpwYXNz") // user:pass
	proxyURL.User = url.UserPassword("user", "pass")
	ctx := testCtx(t)
	for _, target := range []string{"ws" + strings.TrimPrefix(plain.URL, "http"), "wss" + strings.TrimPrefix(secure.URL, "https")} {
		before := tunnels.Load()
		c, _, err := Dial(ctx, target, &DialOptions{TLSConfig: &tls.Config{RootCAs: pool}, Proxy: http.ProxyURL(proxyURL)})
		if err != nil {
			t.Fatalf("%s through the proxy: %v", target, err)
		}
		if err := c.Write(ctx, MessageText, []byte("via proxy")); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, []byte("via proxy")) {
			t.Fatalf("%s: %q %v", target, got, err)
		}
		c.CloseNow()
		if tunnels.Load() != before+1 {
			t.Errorf("%s: the connection did not go through the proxy", target)
		}
	}
	bad := *proxyURL
	bad.User = url.UserPassword("user", "wrong")
	_, _, err := Dial(ctx, "ws"+strings.TrimPrefix(plain.URL, "http"), &DialOptions{Proxy: http.ProxyURL(&bad)})
	if err == nil || !strings.Contains(err.Error(), "407") {
		t.Errorf("a proxy that refuses: %v, want its 407", err)
	}
}
