package client_test

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// Plain sockets: Close from another goroutine while a Read loop drains a
// streaming body. Count connections the server never sees closed.
func TestCloseDuringReadLoopPlainConn(t *testing.T) {
	var open atomic.Int32
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		readReq(br)
		open.Add(1)
		defer open.Add(-1)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n"))
		chunk := make([]byte, 512)
		for {
			c.SetWriteDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	var tr http.RoundTripper = &client.Transport{}
	if testing.Verbose() && os.Getenv("STD") != "" {
		tr = &http.Transport{}
	}
	const runs = 30
	for range runs {
		resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/"))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 256)
			for {
				if _, err := resp.Body.Read(buf); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Millisecond)
		resp.Body.Close()
		<-done
	}
	time.Sleep(time.Second) // server writes fail fast once the client closes
	if n := open.Load(); n > 0 {
		t.Errorf("%d of %d connections never closed after Body.Close", n, runs)
	}
}
