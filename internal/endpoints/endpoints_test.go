package endpoints

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/hotpathhq/hotpath/server"
)

// /goroutines answers the server's goroutine count, on both APIs.
func TestGoroutines(t *testing.T) {
	for _, s := range []*server.Server{{Native: Native}, {Handler: Handler()}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go s.Serve(ln)
		resp, err := http.Get("http://" + ln.Addr().String() + "/goroutines")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if n, err := strconv.Atoi(string(b)); err != nil || n < 2 || resp.Header.Get("Content-Type") != textPlain {
			t.Errorf("/goroutines: %q (%s), want a count of at least 2 (this test and the server's)", b, resp.Header.Get("Content-Type"))
		}
	}
}
