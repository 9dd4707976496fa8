package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

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

// A file that fails to read (a directory here) is the body's error, not
// the socket's: the request fails with it, without probing for an early
// response.
func TestFileBodyReadError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	dir, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.URL, dir)
	req.ContentLength = 1 << 20
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	_, err = (&http.Client{Transport: tr}).Do(req)
	if !errors.Is(err, errRequestBody) {
		t.Fatalf("got %v, want the request body's error", err)
	}
}

// failAfter is a body of n bytes whose next read fails.
type failAfter struct{ n int }

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("boom")
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

// A big body that fails right where its declared length ends fails the
// request, as a small one does and as on net/http's transport.
func TestBodyFailsAtItsEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	for _, size := range []int{1000, 1 << 20} {
		req, _ := http.NewRequest("POST", srv.URL, &failAfter{size})
		req.ContentLength = int64(size)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, errRequestBody) {
			t.Errorf("%d bytes: got %v, want the request body's error", size, err)
		}
	}
}
