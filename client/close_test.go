package client_test

// Closing a body from another goroutine, mid-read: connections are
// released and the pool stays clean.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// slowReturn: Read returns its bytes 100 ms late, so a Close from another
// goroutine lands after the bytes arrived and before Read returns.
type slowReturn struct{ net.Conn }

func (c slowReturn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && p[0] != 'H' { // body reads only, not the head
		time.Sleep(200 * time.Millisecond)
	}
	return n, err
}

// Close while a Read is in flight, when that Read then returns data (not
// an error): the connection is still released, closed or pooled.
func TestCloseDuringSuccessfulReadReleasesConn(t *testing.T) {
	closed := make(chan struct{})
	addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
		client.ReadReq(br)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n"))
		time.Sleep(10 * time.Millisecond)
		c.Write([]byte("abc"))
		br.ReadByte() // returns when the client closes
		close(closed)
	})
	readRacingClose(t, addr)
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Error("connection still open 2 s after Body.Close")
	}
}

// readRacingClose GETs addr through a Transport whose body reads return
// late, closes the body from another goroutine while a Read is in flight,
// and returns the Transport for what the test checks next.
func readRacingClose(t *testing.T, addr string) *client.Transport {
	t.Helper()
	tr := &client.Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, n, a)
		return slowReturn{nc}, err
	}}
	resp, err := tr.RoundTrip(client.MustReq(t, "http://"+addr+"/"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Millisecond); resp.Body.Close() }()
	n, err := resp.Body.Read(make([]byte, 10))
	t.Logf("Read: n=%d err=%v", n, err)
	return tr
}

// Plain sockets: Close from another goroutine while a Read loop drains a
// streaming body leaves no connection the server never sees closed.
func TestCloseDuringReadLoopPlainConn(t *testing.T) {
	var open atomic.Int32
	addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
		client.ReadReq(br)
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
		resp, err := tr.RoundTrip(client.MustReq(t, "http://"+addr+"/"))
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

// Close during a Read that then hits the body's end does not put the
// connection, whose deadline Close set in the past, back in the pool: the
// next request does not fail with an i/o timeout.
func TestCloseDuringFinalReadKeepsPoolClean(t *testing.T) {
	addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := client.ReadReq(br)
			if err != nil {
				return
			}
			if req.Method == "GET" {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"))
				time.Sleep(10 * time.Millisecond)
				c.Write([]byte("abc"))
				continue
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
		}
	})
	tr := readRacingClose(t, addr)
	req, _ := http.NewRequest("POST", "http://"+addr+"/", io.NopCloser(strings.NewReader("payload")))
	req.ContentLength = 7
	resp2, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("POST on the pooled connection: %v", err)
	}
	resp2.Body.Close()
}
