package load_test

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptServer serves each request with write(conn, n) (n = request index on the conn).
func scriptServer(t *testing.T, write func(c net.Conn, n int) bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				br := bufio.NewReader(c)
				for n := 0; ; n++ {
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						if line == "\r\n" {
							break
						}
					}
					if !write(c, n) {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func slowWrite(c net.Conn, s string) {
	for i := 0; i < len(s); i++ {
		c.Write([]byte{s[i]})
		time.Sleep(50 * time.Microsecond)
	}
}

var _ = strings.Repeat
