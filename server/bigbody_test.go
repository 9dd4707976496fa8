package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// bigFile writes n pseudo-random bytes to a temporary file and returns
// its path and contents.
func bigFile(t *testing.T, n int) (string, []byte) {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestBigBodiesOnBothAPIs: a file copied into a response with a declared
// length (sendfile), a file through http.FileServer with a range, and big
// Writes, arrive whole and exact, on keep-alive connections that go on
// serving; a file longer than the declared length is an error, not a
// longer body.
func TestBigBodiesOnBothAPIs(t *testing.T) {
	const size = 3<<20 + 123
	path, data := bigFile(t, size)
	sum := sha256.Sum256(data)
	native := func(c *Ctx) {
		f, err := os.Open(path)
		if err != nil {
			c.Error(500, err.Error())
			return
		}
		defer f.Close()
		switch string(c.Path()) {
		case "/file":
			if err := c.SendFile(f, size); err != nil {
				panic(err)
			}
		case "/short-declared":
			c.SetContentLength(size - 10)
			if _, err := c.ReadFrom(io.LimitReader(f, size)); err != ErrBodyTooLong {
				panic(fmt.Sprint("want ErrBodyTooLong, got ", err))
			}
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/files/", http.StripPrefix("/files/", http.FileServer(http.Dir(filepath.Dir(path)))))
	mux.HandleFunc("/writes", func(w http.ResponseWriter, r *http.Request) {
		for off := 0; off < len(data); off += 64 << 10 {
			w.Write(data[off:min(off+64<<10, len(data))])
		}
	})
	for _, s := range []*Server{{Native: native, ErrorLog: discardLog}, {Handler: mux, ErrorLog: discardLog}} {
		addr := startServer(t, s)
		nc := dial(t, addr)
		br := bufio.NewReader(nc)
		paths := []string{"/file", "/file"}
		if s.Handler != nil {
			paths = []string{"/files/big", "/writes", "/files/big"}
		}
		for _, p := range paths {
			fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", p)
			resp, body := readResponse(t, br, "GET")
			if resp.StatusCode != 200 || sha256.Sum256([]byte(body)) != sum {
				t.Fatalf("%s: %d, %d bytes, content differs", p, resp.StatusCode, len(body))
			}
		}
		if s.Handler != nil {
			fmt.Fprintf(nc, "GET /files/big HTTP/1.1\r\nHost: x\r\nRange: bytes=1000-2000999\r\n\r\n")
			resp, body := readResponse(t, br, "GET")
			if resp.StatusCode != 206 || !bytes.Equal([]byte(body), data[1000:2001000]) {
				t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(body))
			}
			continue
		}
		fmt.Fprintf(nc, "GET /short-declared HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, body := readResponse(t, br, "GET")
		if resp.StatusCode != 200 || len(body) != size-10 || !bytes.Equal([]byte(body), data[:size-10]) {
			t.Fatalf("declared shorter than the file: %d, %d bytes", resp.StatusCode, len(body))
		}
	}
}

// TestBigUploadWriteTo: io.Copy from Request.Body takes the body's
// WriteTo (32 KiB reads); a big upload arrives exact with a length and
// chunked, the connection goes on serving, and a body over the limit ends
// the copy with *http.MaxBytesError and a 413.
func TestBigUploadWriteTo(t *testing.T) {
	const size = 3<<20 + 77
	_, data := bigFile(t, size)
	sum := sha256.Sum256(data)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Body.(io.WriterTo); !ok {
			t.Errorf("Request.Body %T is not an io.WriterTo", r.Body)
		}
		d := sha256.New() // no ReadFrom: io.Copy must use the body's WriteTo
		n, err := io.Copy(d, r.Body)
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "too big", http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "%d %x", n, d.Sum(nil))
	})
	want := fmt.Sprintf("%d %x", size, sum)
	s := &Server{Handler: h, ErrorLog: discardLog}
	addr := startServer(t, s)
	nc := dial(t, addr)
	br := bufio.NewReader(nc)
	send := func(chunked bool) {
		go func() {
			if chunked {
				fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
				for off := 0; off < len(data); off += 100 << 10 {
					part := data[off:min(off+100<<10, len(data))]
					fmt.Fprintf(nc, "%x\r\n", len(part))
					nc.Write(part)
					io.WriteString(nc, "\r\n")
				}
				io.WriteString(nc, "0\r\n\r\n")
				return
			}
			fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
			nc.Write(data)
		}()
		resp, body := readResponse(t, br, "POST")
		if resp.StatusCode != 200 || body != want {
			t.Fatalf("chunked=%v: %d %q, want %q", chunked, resp.StatusCode, body, want)
		}
	}
	send(false)
	send(true)
	send(false)

	limited := &Server{Handler: h, ErrorLog: discardLog, MaxRequestBodyBytes: 1 << 20}
	limitedAddr := startServer(t, limited)
	for _, chunked := range []bool{false, true} {
		nc := dial(t, limitedAddr) // per iteration: the writer below may outlive it
		br := bufio.NewReader(nc)
		go func() {
			if chunked { // one 3 MB chunk: the limit trips in the direct reads
				fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", size)
			} else {
				fmt.Fprintf(nc, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
			}
			nc.Write(data)
		}()
		resp, _ := readResponse(t, br, "POST")
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("over the limit (chunked=%v): %d, want 413", chunked, resp.StatusCode)
		}
	}
}
