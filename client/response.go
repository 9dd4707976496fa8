package client

// What both engines' responses share: the Status strings, the cap on 1xx
// heads, the transparent gzip body, and a closed body's error.

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
)

// statusText holds "200 OK"-style Status strings for the registered codes.
var statusText = func() (t [600]string) {
	for code := 100; code < 600; code++ {
		if s := http.StatusText(code); s != "" {
			t[code] = strconv.Itoa(code) + " " + s
		}
	}
	return t
}()

var errClosedBody = errors.New("http: read on closed response body")

// errTooMany1xx fails a request answered with 1xx heads, not handed to
// Got1xxResponse, whose size passed MaxResponseHeaderBytes in all, on
// either protocol: net/http's transport bounds them by size too (since Go
// 1.24; before, at five), not by count.
var errTooMany1xx = errorString("client: too many 1xx informational responses (their heads passed MaxResponseHeaderBytes)")

// gzipBody decompresses a gzip body on its first Read, as http.Transport
// does for the gzip it asked for, on either protocol; a body closed unread
// costs no decompressor.
type gzipBody struct {
	body   io.ReadCloser
	zr     *gzip.Reader
	err    error
	closed atomic.Bool // Close may race a Read, as on any body
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.closed.Load() {
		return 0, errClosedBody
	}
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

// Close closes the body; a Read after it fails, even with decompressed
// bytes still buffered, as net/http's gzip reader does.
func (g *gzipBody) Close() error {
	g.closed.Store(true)
	return g.body.Close()
}
