package server

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
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

// TestFileBodyNotCorked: a big file goes out by sendfile with TCP_CORK
// never set (corking cost throughput with the client on another core:
// bench/README), whole, and the next response on the connection follows
// it at once. Both APIs.
//
// Modes: HTTP/1.1 over TCP: sendfile and corking are the HTTP/1.1 engine's
// (h1_bigbody.go); HTTP/2 files have TestNativeH2FileBodies.
func TestFileBodyNotCorked(t *testing.T) {
	const size = 16 << 20
	path, data := bigFile(t, size)
	sum := sha256.Sum256(data)
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
		nc := dial(t, addr)
		server := <-conns
		fmt.Fprintf(nc, "GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
		// The client reads nothing yet: the server waits inside sendfile,
		// where a cork would show.
		time.Sleep(50 * time.Millisecond)
		if corked(t, server) {
			t.Fatal("the file is sent corked")
		}
		br := bufio.NewReader(nc)
		resp, body := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || sha256.Sum256([]byte(body)) != sum {
			t.Fatalf("file: %d, %d bytes, content differs", resp.StatusCode, len(body))
		}
		fmt.Fprintf(nc, "GET /small HTTP/1.1\r\nHost: x\r\n\r\n")
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "small" {
			t.Fatalf("after the file: %d %q", resp.StatusCode, body)
		}
	}
}
