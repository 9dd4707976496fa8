package client_test

import (
	"bufio"
	"context"
	"net"
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

// Close while a Read is in flight: if that Read then returns data (not an
// error), nobody releases the connection: it is neither closed nor pooled.
func TestCloseDuringSuccessfulReadLeaksConn(t *testing.T) {
	closed := make(chan struct{})
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		readReq(br)
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
	resp, err := tr.RoundTrip(mustReq(t, "http://"+addr+"/"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Millisecond); resp.Body.Close() }()
	n, err := resp.Body.Read(make([]byte, 10))
	t.Logf("Read: n=%d err=%v", n, err)
	return tr
}
