package client_test

import (
	"bufio"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// A GET that hits ResponseHeaderTimeout on a reused connection is sent
// again (up to 3 more times); net/http sends it once.
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

func mustReq(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
