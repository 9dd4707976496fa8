package hardened

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestServerFillsZeroFields(t *testing.T) {
	srv := Server(&http.Server{Addr: ":0", Handler: http.NotFoundHandler()})
	if srv.ReadHeaderTimeout != ReadHeaderTimeout || srv.ReadTimeout != ReadTimeout ||
		srv.WriteTimeout != WriteTimeout || srv.IdleTimeout != IdleTimeout || srv.MaxHeaderBytes != MaxHeaderBytes {
		t.Fatalf("got %+v", srv)
	}
	if srv.Addr != ":0" || srv.Handler == nil {
		t.Fatal("Server lost Addr or Handler")
	}
}

func TestServerKeepsUserFields(t *testing.T) {
	in := &http.Server{ReadHeaderTimeout: time.Second, ReadTimeout: -1, WriteTimeout: 3 * time.Second,
		IdleTimeout: 5 * time.Minute, MaxHeaderBytes: 1 << 20}
	want := struct {
		ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
		MaxHeaderBytes                                            int
	}{in.ReadHeaderTimeout, in.ReadTimeout, in.WriteTimeout, in.IdleTimeout, in.MaxHeaderBytes}
	if got := Server(in); got != in {
		t.Fatal("Server returned another *http.Server")
	}
	if in.ReadHeaderTimeout != want.ReadHeaderTimeout || in.ReadTimeout != want.ReadTimeout ||
		in.WriteTimeout != want.WriteTimeout || in.IdleTimeout != want.IdleTimeout || in.MaxHeaderBytes != want.MaxHeaderBytes {
		t.Fatalf("Server overrode a field the user set: %+v", in)
	}
}

// A slowloris client is cut off by ReadHeaderTimeout (shortened here).
func TestServerCutsOffSlowHeaders(t *testing.T) {
	srv := Server(&http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: 100 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // and never the end of the head
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	_, err = bufio.NewReader(c).ReadString('\n')
	if err == nil && time.Since(start) > 4*time.Second {
		t.Fatal("connection not closed")
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("server kept a slow-header connection open for 5 s")
	}
}
