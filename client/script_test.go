package client

// Scripted servers the tests talk to byte by byte.

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"testing"
)

// scriptServer accepts connections and runs h on each.
func scriptServer(t *testing.T, h func(c net.Conn, br *bufio.Reader)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); defer c.Close(); h(c, bufio.NewReader(c)) }()
		}
	}()
	return ln.Addr().String()
}

// readReq reads one request head (and discards a Content-Length body).
func readReq(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	for {
		if _, err := req.Body.Read(buf); err != nil {
			break
		}
	}
	return req, nil
}

func mustReq(t *testing.T, url string) *http.Request {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
