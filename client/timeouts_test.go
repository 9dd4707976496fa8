package client_test

// Timeouts and cancellation of a request in flight.

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// cancelAfterWrite cancels the request's context as soon as the request
// has been written: the moment a caller's cancel can land.
type cancelAfterWrite struct {
	net.Conn
	cancel context.CancelFunc
}

func (c *cancelAfterWrite) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.cancel()
	time.Sleep(20 * time.Millisecond) // let the AfterFunc run
	return n, err
}

// A cancel that lands between the end of the write and the arming of
// ResponseHeaderTimeout is not lost (overwritten by the header deadline):
// the request returns at once, not at the header timeout.
func TestCancelAfterWriteNotLost(t *testing.T) {
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		readReq(br)
		time.Sleep(3 * time.Second) // never answers in time
	})
	for _, name := range []string{"net/http", "hotpath"} {
		ctx, cancel := context.WithCancel(context.Background())
		dial := func(ctx2 context.Context, n, a string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx2, n, a)
			if err != nil {
				return nil, err
			}
			return &cancelAfterWrite{nc, cancel}, nil
		}
		var rt http.RoundTripper = &http.Transport{DialContext: dial, ResponseHeaderTimeout: 2 * time.Second}
		if name == "hotpath" {
			rt = &client.Transport{DialContext: dial, ResponseHeaderTimeout: 2 * time.Second}
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
		start := time.Now()
		_, err := rt.RoundTrip(req)
		el := time.Since(start)
		t.Logf("%s: err=%v after %v", name, err, el.Round(time.Millisecond))
		if el > time.Second {
			t.Errorf("%s: cancel ignored for %v", name, el.Round(time.Millisecond))
		}
	}
}

// A GET that hits ResponseHeaderTimeout on a reused connection is sent
// once, as net/http does, not retried.
func TestHeaderTimeoutNotRetried(t *testing.T) {
	for _, name := range []string{"net/http", "hotpath"} {
		var slowHits atomic.Int32
		addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
			for {
				req, err := readReq(br)
				if err != nil {
					return
				}
				if req.URL.Path == "/slow" {
					slowHits.Add(1)
					time.Sleep(300 * time.Millisecond)
					return
				}
				time.Sleep(20 * time.Millisecond) // hold so 4 conns open
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			}
		})
		var rt http.RoundTripper = &http.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}
		if name == "hotpath" {
			rt = &client.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}
		}
		done := make(chan struct{})
		for range 4 { // warm four idle connections
			go func() {
				resp, err := rt.RoundTrip(mustReq(t, "http://"+addr+"/fast"))
				if err == nil {
					resp.Body.Close()
				}
				done <- struct{}{}
			}()
		}
		for range 4 {
			<-done
		}
		_, err := rt.RoundTrip(mustReq(t, "http://"+addr+"/slow"))
		t.Logf("%s: err=%v, server got /slow %d times", name, err, slowHits.Load())
		if slowHits.Load() != 1 {
			t.Errorf("%s: /slow sent %d times after a header timeout", name, slowHits.Load())
		}
	}
}
