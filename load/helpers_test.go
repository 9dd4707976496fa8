package load

import (
	"bufio"
	"net"
	"runtime"
	"testing"
	"time"
)

// scriptServer serves each request head with write(conn, n), n being the
// request's index on its connection; write returns false to close.
func scriptServer(t *testing.T, write func(c net.Conn, n int) bool) string {
	t.Helper()
	return serveConns(t, func(c net.Conn, br *bufio.Reader, _ <-chan struct{}) {
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
	})
}

// slowWrite writes s one byte at a time, to split a response across reads.
func slowWrite(c net.Conn, s string) {
	for i := 0; i < len(s); i++ {
		c.Write([]byte{s[i]})
		time.Sleep(50 * time.Microsecond)
	}
}

func goroutinesSettle(t *testing.T, before int) {
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("goroutines %d > %d after Run:\n%s", n, before, buf[:min(len(buf), 3000)])
	}
}
