package middleware

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hotpathhq/hotpath/server"
)

// engines runs a test against h served by net/http and by hotpath's
// server, each on a 127.0.0.1:0 listener; the func gets the base URL.
func engines(t *testing.T, h http.Handler, test func(t *testing.T, base string)) {
	t.Run("nethttp", func(t *testing.T) {
		ts := httptest.NewServer(h)
		defer ts.Close()
		test(t, ts.URL)
	})
	t.Run("hotpath", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &server.Server{Handler: h}
		done := make(chan struct{})
		go func() { defer close(done); srv.Serve(ln) }()
		defer func() { srv.Close(); <-done }()
		test(t, "http://"+ln.Addr().String())
	})
}

// discardWriter is a ResponseWriter that costs nothing, for benchmarks.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
