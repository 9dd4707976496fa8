package client_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// Bytes a server sends on a connection after the response ended (a body
// on a HEAD answer, a buggy extra response) are read as the answer to the
// next request on that connection. net/http sees them arrive on the idle
// connection and drops it.
func TestUnsolicitedBytesOnIdleConn(t *testing.T) {
	for _, name := range []string{"net/http", "hotpath"} {
		addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
			n := 0
			for {
				if _, err := readReq(br); err != nil {
					return
				}
				n++
				if n == 1 {
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"))
					time.Sleep(20 * time.Millisecond)
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nWRONG"))
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
		get()
		time.Sleep(100 * time.Millisecond) // idle, well under a second
		if got := get(); got == "WRONG" {
			t.Errorf("%s: second GET got %q", name, got)
		}
	}
}
