package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// A native handler: the Ctx is reused across the connection's requests
// and nothing is allocated per request.
func ExampleServer() {
	hello := []byte("Hello, World!")
	srv := &server.Server{
		Native: func(c *server.Ctx) {
			switch string(c.Path()) { // the conversion in a switch does not allocate
			case "/":
				c.SetContentType("text/plain; charset=utf-8")
				c.Write(hello)
			default:
				c.Error(http.StatusNotFound, "not found\n")
			}
		},
		IdleTimeout: 30 * time.Second, // every other timeout and limit keeps its safe default
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Length"), string(body))
	// Output: 200 OK 13 Hello, World!
}

// Reading a request body as a stream, and answering bad input.
func ExampleCtx_Body() {
	srv := &server.Server{
		MaxRequestBodyBytes: 1 << 10,
		Native: func(c *server.Ctx) {
			sc := bufio.NewScanner(c.Body())
			lines := 0
			for sc.Scan() {
				lines++
			}
			if sc.Err() != nil {
				return // a body over the limit is answered 413 by the server
			}
			fmt.Fprintf(c, "%d lines\n", lines)
		},
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()

	url := "http://" + ln.Addr().String() + "/"
	for _, body := range []string{"a\nb\nc\n", string(make([]byte, 2<<10))} {
		resp, err := http.Post(url, "text/plain", struct{ io.Reader }{strings.NewReader(body)}) // length hidden: sent chunked
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s", resp.StatusCode, b)
	}
	// Output:
	// 200 3 lines
	// 413 Request Entity Too Large: request body exceeds Server.MaxRequestBodyBytes (1024)
}
