package client_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Close during a Read that then hits the body's end: the connection, whose
// deadline Close set in the past, goes back to the pool; the next request
// on it fails with an i/o timeout.
func TestCloseDuringFinalReadPoisonsPool(t *testing.T) {
	addr := scriptServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := readReq(br)
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
