package wire_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/hotpathhq/hotpath/wire"
)

func ExampleRequest_Parse() {
	buf := []byte("POST /upload?id=7 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\n\r\nhello")
	lim := wire.DefaultLimits()
	var req wire.Request // reuse one per connection: Parse allocates nothing
	n, err := req.Parse(buf, &lim)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s %s host=%s length=%d body=%q\n",
		req.Method, req.Path(), req.Query(), req.Host, req.ContentLength, buf[n:n+int(req.ContentLength)])

	// Smuggling shapes are refused with the status to answer.
	_, err = req.Parse([]byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"), &lim)
	var we *wire.Error
	if errors.As(err, &we) {
		fmt.Println(we.Status, we.Reason)
	}
	// Output:
	// POST /upload id=7 host=example.com length=5 body="hello"
	// 400 both Content-Length and Transfer-Encoding present
}

func ExampleChunkedDecoder() {
	src := []byte("5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: ok\r\n\r\nNEXT")
	var d wire.ChunkedDecoder
	d.Reset()
	var body []byte
	for {
		data, n, err := d.Decode(src)
		body = append(body, data...)
		src = src[n:]
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err) // ErrNeedMore: read more input; *wire.Error: reject
		}
	}
	fmt.Printf("%q, then %q\n", body, src)
	// Output: "hello world", then "NEXT"
}
