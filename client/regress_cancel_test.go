package client_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
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

// A cancel landing between the end of the write and the arming of
// ResponseHeaderTimeout is overwritten by SetReadDeadline(now+RHT): the
// request waits for the header timeout instead of returning at once.
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
