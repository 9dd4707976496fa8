package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
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
// Writes (with a length and chunked), arrive whole and exact, on keep-alive connections that go on
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
		case "/writes", "/writes-chunked": // big Writes, straight to the socket
			if string(c.Path()) == "/writes" {
				c.SetContentLength(size)
			}
			for off := 0; off < len(data); off += 64 << 10 {
				c.Write(data[off:min(off+64<<10, len(data))])
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
		paths := []string{"/file", "/writes", "/writes-chunked", "/file"}
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

// TestNativeBigWriteFromStack: the native API's big Writes go straight to
// the socket without making the handler's buffer escape: a handler that
// writes 128 KiB from a 64 KiB array on its stack costs no allocation per
// request, and its body arrives exact. (Each Write is larger than the 32
// KiB a native response collects before it streams: collected bytes are
// copied, into a buffer that may grow.)
func TestNativeBigWriteFromStack(t *testing.T) {
	skipUnderRace(t)
	const half = 64 << 10
	h := func(c *Ctx) {
		var buf [half]byte
		for i := range buf {
			buf[i] = byte(i)
		}
		c.SetContentLength(2 * half)
		c.Write(buf[:])
		c.Write(buf[:])
	}
	addr := startServer(t, &Server{Native: h, ErrorLog: discardLog})
	nc := dial(t, addr)
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	nc.Write(req)
	br := bufio.NewReader(nc)
	resp, body := readResponse(t, br, "GET")
	if resp.StatusCode != 200 || len(body) != 2*half || body[half+1000] != byte(1000%256) || body[2*half-1] != byte((half-1)%256) {
		t.Fatalf("%d, %d bytes", resp.StatusCode, len(body))
	}
	// The response's size, head included, to read each next one whole
	// without allocating.
	nc.Write(req)
	var respLen int
	buf := make([]byte, 4*half)
	for end := bytes.Index(buf[:respLen], []byte("\r\n\r\n")); end < 0 || respLen < end+4+2*half; end = bytes.Index(buf[:respLen], []byte("\r\n\r\n")) {
		n, err := nc.Read(buf[respLen:])
		if err != nil {
			t.Fatal(err)
		}
		respLen += n
	}
	allocs := testing.AllocsPerRun(50, func() {
		nc.Write(req)
		for got := 0; got < respLen; {
			n, err := nc.Read(buf[got:respLen])
			if err != nil {
				panic(err)
			}
			got += n
		}
	})
	if allocs > 0 {
		t.Errorf("%.2f allocations per request, want 0", allocs)
	}
}

// TestNativeBigWriteStall: the native API's big Writes keep
// WriteStallTimeout's meaning: a client that reads slowly but keeps
// moving gets the whole body, one that stops reading is cut.
func TestNativeBigWriteStall(t *testing.T) {
	const stall = 200 * time.Millisecond
	wrote := make(chan error, 1)
	h := func(c *Ctx) {
		chunk := make([]byte, 64<<10)
		n := 64 // 4 MiB for /slow
		if string(c.Path()) == "/never" {
			n = 4000 // 256 MB: far more than socket buffers hold
		}
		c.SetContentLength(int64(n * len(chunk)))
		var err error
		for i := 0; i < n && err == nil; i++ {
			_, err = c.Write(chunk)
		}
		wrote <- err
	}
	addr := startServer(t, &Server{Native: h, WriteStallTimeout: stall, ErrorLog: discardLog})
	nc := dial(t, addr)
	io.WriteString(nc, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256<<10)
	var got int64
	for { // 256 KiB every 100 ms: slower than the server writes, never stalled for 200 ms
		n, err := io.ReadFull(resp.Body, buf)
		got += int64(n)
		if err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != 4<<20 {
		t.Fatalf("slow reader got %d bytes", got)
	}
	if err := <-wrote; err != nil {
		t.Fatalf("slow reader: %v", err)
	}
	nc2 := dial(t, addr)
	io.WriteString(nc2, "GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
	expectCut(t, wrote, "a client that never reads took 256 MB", "a client that stopped reading was not cut")
}

// TestChunkedStallClosesAtOnce: once a chunked response's write failed
// (a client that stopped reading was cut by WriteStallTimeout), the
// connection closes at once, on both APIs: no last chunk is queued for
// the socket that stalled, to wait out one more stall period.
func TestChunkedStallClosesAtOnce(t *testing.T) {
	const stall = 500 * time.Millisecond
	for _, native := range []bool{false, true} {
		failed := make(chan time.Time, 1)
		closed := make(chan time.Time, 1)
		write := func(w io.Writer) {
			chunk := make([]byte, 64<<10)
			for {
				if _, err := w.Write(chunk); err != nil {
					failed <- time.Now()
					return
				}
			}
		}
		s := &Server{WriteStallTimeout: stall, ErrorLog: discardLog, ConnState: func(_ net.Conn, st ConnState) {
			if st == StateClosed {
				closed <- time.Now()
			}
		}}
		if native {
			s.Native = func(c *Ctx) { write(c) }
		} else {
			s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { write(w) })
		}
		nc := dial(t, startServer(t, s))
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n") // and never read
		var at time.Time
		select {
		case at = <-failed:
		case <-time.After(20 * time.Second):
			t.Fatalf("native %v: a client that stopped reading was not cut", native)
		}
		select {
		case end := <-closed:
			if d := end.Sub(at); d > stall/2 {
				t.Errorf("native %v: closed %v after the write failed, want at once", native, d)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("native %v: the connection did not close", native)
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
