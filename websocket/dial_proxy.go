package websocket

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// dialProxy opens a tunnel to addr through the HTTP proxy at proxy
// (CONNECT, RFC 9110 §9.3.6): http:// proxies in the clear, https://
// ones over TLS. What comes back is the tunnel: the WebSocket handshake
// (and TLS for wss://) goes over it as over a direct connection.
func dialProxy(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), proxy *url.URL, addr string, opts *DialOptions) (net.Conn, error) {
	paddr := proxy.Host
	switch proxy.Scheme {
	case "http":
		if proxy.Port() == "" {
			paddr = net.JoinHostPort(proxy.Hostname(), "80")
		}
	case "https":
		if proxy.Port() == "" {
			paddr = net.JoinHostPort(proxy.Hostname(), "443")
		}
	default:
		return nil, fmt.Errorf("proxy %s: scheme %q not supported (http or https)", proxy.Redacted(), proxy.Scheme)
	}
	nc, err := dial(ctx, "tcp", paddr)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", proxy.Redacted(), err)
	}
	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	defer stop()
	fail := func(err error) (net.Conn, error) {
		nc.Close()
		return nil, fmt.Errorf("proxy %s: %w", proxy.Redacted(), err)
	}
	if proxy.Scheme == "https" {
		tc := tls.Client(nc, &tls.Config{ServerName: proxy.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(err)
		}
		nc = tc
	}
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: addr},
		Host:   addr,
		Header: http.Header{},
	}
	for k, vs := range opts.ProxyConnectHeader {
		req.Header[k] = vs
	}
	if u := proxy.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	if err := req.Write(nc); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(&headReader{r: nc, n: maxResponseHead})
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("CONNECT %s answered %s", addr, resp.Status))
	}
	if br.Buffered() > 0 {
		return fail(fmt.Errorf("CONNECT %s: the proxy sent bytes before the tunnel's first", addr))
	}
	if !stop() {
		return fail(context.Cause(ctx))
	}
	nc.SetDeadline(time.Time{})
	return nc, nil
}
