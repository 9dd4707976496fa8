package server

import (
	"fmt"
	"io"
	"testing"
)

// TestNativeBodylessRequestReadsEmpty: on the native API, a request that
// carries no body (a GET, a DELETE) reads as an empty body, through
// Ctx.ReadBody and through Ctx.Body, with no error: handlers read the
// body whatever the method (echoNative does). On HTTP/2 such a request
// ends the stream with its HEADERS; the body read dereferenced nil there.
func TestNativeBodylessRequestReadsEmpty(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, nil, func(c *Ctx) {
			b, err := c.ReadBody(nil)
			n, err2 := io.Copy(io.Discard, c.Body())
			fmt.Fprintf(c, "%q %v, %d %v", b, err, n, err2)
		})
		for _, method := range []string{"GET", "DELETE"} {
			resp, body := mustDo(t, c, mustRequest(t, method, base+"/"))
			if resp.StatusCode != 200 || string(body) != `"" <nil>, 0 <nil>` {
				t.Errorf("%s: %d %q; want an empty body read without error", method, resp.StatusCode, body)
			}
		}
	}, nativeModes()...)
}
