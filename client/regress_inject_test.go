package client_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"

	"github.com/hotpathhq/hotpath/client"
)

func TestHostAndURLInjection(t *testing.T) {
	got := make(chan http.Header, 4)
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readReq(br)
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
