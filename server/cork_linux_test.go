package server

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/tcpcork"
)

// recordingListener hands out the accepted connections unchanged (the
// server still sees *net.TCPConn) and keeps them for the test.
type recordingListener struct {
	net.Listener
	conns chan net.Conn
}

func (l recordingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err == nil {
		l.conns <- nc
	}
	return nc, err
}

// startRecorded serves s and returns its address and a channel of the
// server's side of each connection.
func startRecorded(t *testing.T, s *Server) (string, chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := recordingListener{ln, make(chan net.Conn, 4)}
	serveOn(t, s, rl)
	return ln.Addr().String(), rl.conns
}

func corked(t *testing.T, nc net.Conn) bool {
	rc, err := nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v != 0
}

// TestFileBodyCorked: a big file is sent with TCP_CORK set (the client
// stops reading, so the server waits inside sendfile, corked), and the
// cork is gone once the body is sent: the next response on the
// connection is not held back. A body from a pipe, which may trickle, is
// never corked. Both APIs.
func TestFileBodyCorked(t *testing.T) {
	const size = 16 << 20
	path, data := bigFile(t, size)
	sum := sha256.Sum256(data)
	// A pipe body long enough to be corked were it a file.
	const pipeLen = 2 * tcpcork.MinBytes
	pipeBody := make(chan []byte)
	stop := make(chan struct{}) // closed when the test ends, before the server
	closeStop := sync.OnceFunc(func() { close(stop) })
	native := func(c *Ctx) {
		switch string(c.Path()) {
		case "/file":
			f, err := os.Open(path)
			if err != nil {
				panic(err)
			}
			defer f.Close()
			if err := c.SendFile(f, size); err != nil {
				panic(err)
			}
		case "/small":
			c.WriteString("small")
		case "/pipe":
			pr, pw, err := os.Pipe()
			if err != nil {
				panic(err)
			}
			defer pr.Close()
			go func() {
				defer pw.Close()
				for {
					select {
					case b, ok := <-pipeBody:
						if !ok {
							return
						}
						pw.Write(b)
					case <-stop:
						return
					}
				}
			}()
			c.SetContentLength(pipeLen)
			c.ReadFrom(pr)
		}
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file":
			http.ServeFile(w, r, path)
		case "/small":
			io.WriteString(w, "small")
		}
	})
	for _, s := range []*Server{{Native: native, ErrorLog: discardLog}, {Handler: handler, ErrorLog: discardLog}} {
		addr, conns := startRecorded(t, s)
		t.Cleanup(closeStop) // runs before the server's own cleanup
		nc := dial(t, addr)
		server := <-conns
		fmt.Fprintf(nc, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
		deadline := time.Now().Add(5 * time.Second)
		for !corked(t, server) {
			if time.Now().After(deadline) {
				t.Fatal("the file is sent uncorked")
			}
			time.Sleep(5 * time.Millisecond)
		}
		br := bufio.NewReader(nc)
		resp, body := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || sha256.Sum256([]byte(body)) != sum {
			t.Fatalf("file: %d, %d bytes, content differs", resp.StatusCode, len(body))
		}
		fmt.Fprintf(nc, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "small" {
			t.Fatalf("after the file: %d %q", resp.StatusCode, body)
		}
		if corked(t, server) {
			t.Fatal("the connection stays corked after the file")
		}
		if s.Native == nil {
			continue
		}
		fmt.Fprintf(nc, "GET /pipe HTTP/1.1\r\nHost: x\r\n\r\n")
		chunk := make([]byte, 1<<20)
		pipeBody <- chunk
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The first MiB arrives while the pipe waits for more.
		if _, err := io.ReadFull(resp.Body, make([]byte, 1<<20)); err != nil {
			t.Fatal(err)
		}
		if corked(t, server) {
			t.Fatal("a body from a pipe is corked")
		}
		go func() { // the rest, while the client reads
			for sent := len(chunk); sent < pipeLen; sent += len(chunk) {
				select {
				case pipeBody <- chunk:
				case <-stop:
					return
				}
			}
			close(pipeBody)
		}()
		if n, err := io.Copy(io.Discard, resp.Body); n != pipeLen-1<<20 || err != nil {
			t.Fatalf("the rest of the pipe body: %d bytes, %v", n, err)
		}
	}
}
