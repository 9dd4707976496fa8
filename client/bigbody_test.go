package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// A file handed to http.NewRequest is wrapped in io.NopCloser: the
// direct path unwraps it so that sendfile can see the file.
func TestUnwrapNopCloser(t *testing.T) {
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	req, _ := http.NewRequest("POST", "http://x/", f)
	if got := unwrapNopCloser(req.Body); got != io.Reader(f) {
		t.Errorf("unwrapped a file's body to %T, want the *os.File", got)
	}
	sr := strings.NewReader("x")
	if got := unwrapNopCloser(io.NopCloser(sr)); got != io.Reader(sr) {
		t.Errorf("unwrapped io.NopCloser(strings.Reader) to %T", got)
	}
	pr, _ := io.Pipe()
	if got := unwrapNopCloser(pr); got != io.Reader(pr) {
		t.Errorf("a body that is not wrapped came back as %T", got)
	}
}

// Big uploads on a connection without ReadFrom (a DialContext that wraps
// the socket) and on a plain socket: the server gets every byte.
func TestBigUploads(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x %v %v", n, h.Sum(nil), err, r.TransferEncoding)
	}))
	defer srv.Close()
	body := bytes.Repeat([]byte("0123456789abcdef"), 3<<20/16)
	want := fmt.Sprintf("%d %x <nil>", len(body), sha256.Sum256(body))
	wrap := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		return struct{ net.Conn }{nc}, err // no ReadFrom
	}
	for _, tc := range []struct {
		name string
		dial func(ctx context.Context, network, addr string) (net.Conn, error)
		cl   int64
	}{
		{"socket, length", nil, int64(len(body))},
		{"socket, chunked", nil, -1},
		{"wrapped conn, length", wrap, int64(len(body))},
		{"wrapped conn, chunked", wrap, -1},
	} {
		tr := &Transport{DialContext: tc.dial}
		req, _ := http.NewRequest("POST", srv.URL, io.MultiReader(bytes.NewReader(body)))
		req.ContentLength = tc.cl
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(string(got), want) {
			t.Errorf("%s: server read %q, want %q", tc.name, got, want)
		}
		if chunked := strings.HasSuffix(string(got), "[chunked]"); chunked != (tc.cl < 0) {
			t.Errorf("%s: server saw %q", tc.name, got)
		}
		tr.CloseIdleConnections()
	}
}
