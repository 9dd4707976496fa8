package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
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
	if _, ok := errors.AsType[*fs.PathError](err); !ok {
		t.Fatalf("got %v, want the request body's error (a *fs.PathError)", err)
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
		if ue, ok := err.(*url.Error); !ok || ue.Err.Error() != "boom" {
			t.Errorf("%d bytes: got %v, want the request body's error, as is", size, err)
		}
	}
}

// pieces is a body that writes itself in pieces of the given sizes, then
// fails with err if set.
type pieces struct {
	sizes []int
	err   error
}

func (p *pieces) Read([]byte) (int, error) { panic("pieces: Read, where WriteTo was due") }

func (p *pieces) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i, size := range p.sizes {
		k, err := w.Write(bytes.Repeat([]byte{byte('a' + i%26)}, size))
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, p.err
}

func (p *pieces) bytes() []byte {
	var b []byte
	for i, size := range p.sizes {
		b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, size)...)
	}
	return b
}

// A chunked body that writes itself (io.WriterTo) is framed write by
// write: small writes gathered, big ones sent as they are, on a socket
// (writev) and on a wrapped connection; trailers follow; the body's own
// failure fails the request as the body's.
func TestChunkedBodyWriterTo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x %v %v trailer=%q", n, h.Sum(nil), err, r.TransferEncoding, r.Trailer.Get("X-Sum"))
	}))
	defer srv.Close()
	wrap := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		return struct{ net.Conn }{nc}, err // no writev
	}
	bodies := map[string][]int{
		"one big":         {3 << 20},
		"small ones":      {1, 10, 100, 1000, 4095, 3, 4000, 4000, 4000},
		"mixed":           {10, 64 << 10, 5, 4096, 1, 300 << 10, 4095, 4097, 7},
		"empty writes":    {0, 5, 0, 70000, 0},
		"nothing written": {},
	}
	for _, dial := range []struct {
		name string
		fn   func(ctx context.Context, network, addr string) (net.Conn, error)
	}{{"socket", nil}, {"wrapped conn", wrap}} {
		tr := &Transport{DialContext: dial.fn}
		c := &http.Client{Transport: tr}
		for name, sizes := range bodies {
			for _, withTrailer := range []bool{false, true} {
				body := &pieces{sizes: sizes}
				req, _ := http.NewRequest("POST", srv.URL, body)
				req.ContentLength = -1
				wantTrailer := ""
				if withTrailer {
					wantTrailer = "abc"
					req.Trailer = http.Header{"X-Sum": {wantTrailer}}
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s, %s: %v", dial.name, name, err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				b := body.bytes()
				want := fmt.Sprintf("%d %x <nil> [chunked] trailer=%q", len(b), sha256.Sum256(b), wantTrailer)
				if string(got) != want {
					t.Errorf("%s, %s, trailer %v: server read %q, want %q", dial.name, name, withTrailer, got, want)
				}
			}
		}
		// The body fails after a small and a big write.
		bodyErr := errors.New("the source went away")
		req, _ := http.NewRequest("POST", srv.URL, &pieces{sizes: []int{100, 100 << 10}, err: bodyErr})
		req.ContentLength = -1
		_, err := c.Do(req)
		if !errors.Is(err, bodyErr) {
			t.Errorf("%s: a failing body: %v, want the body's error as is", dial.name, err)
		}
		tr.CloseIdleConnections()
	}
}

// A big body of declared length that writes itself goes to the socket
// write by write; one shorter or longer than declared, or one that
// fails, fails the request as the body's.
func TestLengthBodyWriterTo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x %v", n, h.Sum(nil), err)
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	sizes := []int{10, 64 << 10, 5, 1 << 20, 3}
	body := &pieces{sizes: sizes}
	b := body.bytes()
	req, _ := http.NewRequest("POST", srv.URL, body)
	req.ContentLength = int64(len(b))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%d %x <nil>", len(b), sha256.Sum256(b)); string(got) != want {
		t.Errorf("server read %q, want %q", got, want)
	}
	bodyErr := errors.New("the source went away")
	for _, tc := range []struct {
		name string
		cl   int64
		err  error
		want string
	}{
		{"shorter than declared", int64(len(b)) + 1, nil, fmt.Sprintf("with Body length %d", len(b))},
		{"longer than declared", int64(len(b)) - 1, nil, fmt.Sprintf("with Body length > %d", len(b)-1)},
		{"failing", int64(len(b)) + 100, bodyErr, bodyErr.Error()},
	} {
		req, _ := http.NewRequest("POST", srv.URL, &pieces{sizes: sizes, err: tc.err})
		req.ContentLength = tc.cl
		_, err := c.Do(req)
		// The body's own error comes as is, as net/http's; a length that
		// does not match is the transport's error about the body.
		if tc.err != nil && !errors.Is(err, tc.err) || tc.err == nil && !errors.Is(err, errRequestBody) || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%s: %v, want an error of the body's with %q", tc.name, err, tc.want)
		}
	}
}

// A body in a string (strings.Reader, whose WriteTo calls WriteString)
// goes out without a copy of it, chunked or with its length.
func TestStringBodyNotCopied(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v", n, err)
	}))
	defer srv.Close()
	tr := &Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	body := strings.Repeat("0123456789abcdef", 4<<20/16)
	for _, cl := range []int64{int64(len(body)), -1} {
		post := func() {
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
			req.ContentLength = cl
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("%d <nil>", len(body)); string(got) != want {
				t.Fatalf("length %d: server read %q, want %q", cl, got, want)
			}
		}
		post() // the connection, the server's buffers
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		post()
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(body))/4 {
			t.Errorf("length %d: %d bytes allocated to send a %d-byte string body", cl, alloc, len(body))
		}
	}
}

// A file body of any size goes by the socket's ReadFrom (sendfile), as
// net/http's does.
func TestSmallFileBodyUsesReadFrom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	var readFrom atomic.Bool
	tr := &Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, n, a)
		if err != nil {
			return nil, err
		}
		return &readFromConn{TCPConn: c.(*net.TCPConn), called: &readFrom}, nil
	}}
	defer tr.CloseIdleConnections()
	f := tempFile(t, 1024)
	req, _ := http.NewRequest("PUT", srv.URL, f)
	req.ContentLength = 1024
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !readFrom.Load() {
		t.Error("ReadFrom not called for a file body")
	}
}

type readFromConn struct {
	*net.TCPConn
	called *atomic.Bool
}

func (c *readFromConn) ReadFrom(r io.Reader) (int64, error) {
	c.called.Store(true)
	return c.TCPConn.ReadFrom(r)
}

// tempFile is an open file of n bytes, removed with the test.
func tempFile(t *testing.T, n int) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
