package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
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

// TestFileAndBigBodies: file bodies and big Writes arrive whole and
// exact on every mode and both APIs, all on one connection that goes on
// serving. On the http.Handler API: http.FileServer's whole file, ranges
// and HEAD, with their Content-Length; a handler's io.Copy of a file from
// an offset, with the Content-Type left to sniffing and the file's offset
// at its end after; 64 KiB Writes. On the native API: SendFile, of the
// whole file and from an offset, declaring the length; io.Copy(c, f);
// 64 KiB Writes with a length and chunked; and a file longer than the
// declared length, which sends the declared bytes and fails the handler's
// ReadFrom with ErrContentLength, not a longer body, on every mode (by
// sendfile, a mapped file or a copy). The native HTTP/2
// engine sends the file bodies by reference to the mapped file over h2c
// on Linux and copies them over TLS (h2_file_linux.go): checkMapped. (A
// file that shrinks or a download canceled or cut under its mapped pages:
// TestNativeH2FileTruncatedWhileSent and its neighbours.)
func TestFileAndBigBodies(t *testing.T) {
	const size = 3<<20 + 123
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	copy(data[777:], "<!DOCTYPE html><html>") // sniffed as text/html
	path := fileOf(t, data)
	files := http.FileServer(http.Dir(filepath.Dir(path)))
	name := "/files/" + filepath.Base(path)
	writes := func(w io.Writer) {
		for off := 0; off < len(data); off += 64 << 10 {
			w.Write(data[off:min(off+64<<10, len(data))])
		}
	}
	runModes(t, func(t *testing.T, m mode) {
		errs := make(chan error, 1)    // each handler's own error
		offsets := make(chan int64, 1) // the file's offset after the handler's io.Copy
		mux := http.NewServeMux()
		mux.Handle("/files/", http.StripPrefix("/files", files))
		mux.HandleFunc("/copy", func(w http.ResponseWriter, r *http.Request) {
			f, err := os.Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			f.Seek(777, io.SeekStart)
			n, err := io.Copy(w, f)
			if err == nil && n != int64(len(data)-777) {
				err = fmt.Errorf("io.Copy copied %d bytes, want %d", n, len(data)-777)
			}
			at, _ := f.Seek(0, io.SeekCurrent)
			offsets <- at
			errs <- err
		})
		mux.HandleFunc("/writes", func(w http.ResponseWriter, r *http.Request) { writes(w) })
		nh := func(c *Ctx) {
			f, err := os.Open(path)
			if err != nil {
				errs <- err
				return
			}
			defer f.Close()
			switch string(c.Path()) {
			case "/file":
				err = c.SendFile(f, size)
			case "/sendfile-offset":
				f.Seek(100, io.SeekStart)
				err = c.SendFile(f, size-200)
			case "/copy":
				c.SetContentType("application/octet-stream")
				_, err = io.Copy(c, f)
			case "/writes":
				c.SetContentLength(size)
				writes(c)
			case "/writes-chunked": // big Writes, streamed
				writes(c)
			case "/short-declared":
				c.SetContentLength(size - 10)
				if _, err = c.ReadFrom(io.LimitReader(f, size)); err == ErrContentLength {
					err = nil
				} else {
					err = fmt.Errorf("ReadFrom past the declared length: %v, want ErrContentLength", err)
				}
			case "/overlong": // past a declared length that ends a copy buffer
				c.SetContentLength(1 << 20)
				if _, err = io.CopyN(c, f, 2<<20); err != nil {
					err = nil
				} else {
					err = errors.New("io.CopyN past the declared length: no error")
				}
			}
			errs <- err
		}
		base, c := m.serve(t, &Server{}, mux, nh)
		before := mappedBytes()
		conns := map[string]bool{}
		trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { conns[ci.Conn.LocalAddr().String()] = true }}
		get := func(method, path, rng string) (*http.Response, []byte) {
			t.Helper()
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method, base+path, nil)
			if rng != "" {
				req.Header.Set("Range", rng)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("%s %s: %d bytes, then %v", method, path, len(b), err)
			}
			return resp, b
		}
		handlerErr := func(what string) {
			t.Helper()
			select {
			case err := <-errs:
				if err != nil {
					t.Errorf("%s: the handler: %v", what, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: the handler did not end", what)
			}
		}
		if m.native {
			for _, tc := range []struct {
				path string
				want []byte
			}{
				{"/file", data},
				{"/sendfile-offset", data[100 : size-100]},
				{"/copy", data},
				{"/writes", data},
				{"/writes-chunked", data},
				{"/short-declared", data[:size-10]},
				{"/overlong", data[:1<<20]},
				{"/file", data},
			} {
				resp, b := get("GET", tc.path, "")
				handlerErr(tc.path)
				if resp.StatusCode != 200 || !bytes.Equal(b, tc.want) {
					t.Errorf("%s: status %d, %d bytes, want the file's %d", tc.path, resp.StatusCode, len(b), len(tc.want))
				}
				if tc.path != "/writes-chunked" && tc.path != "/copy" && resp.ContentLength != int64(len(tc.want)) {
					t.Errorf("%s: Content-Length %d, want %d", tc.path, resp.ContentLength, len(tc.want))
				}
			}
		} else {
			for _, tc := range []struct {
				name, rng string
				status    int
				want      []byte
			}{
				{"whole", "", 200, data},
				{"range", "bytes=1000-3000000", 206, data[1000:3000001]},
				{"tail from a page boundary", "bytes=4096-", 206, data[4096:]},
				{"whole again", "", 200, data},
			} {
				resp, b := get("GET", name, tc.rng)
				if resp.StatusCode != tc.status || !bytes.Equal(b, tc.want) {
					t.Errorf("%s: status %d, %d bytes, want %d and the file's %d", tc.name, resp.StatusCode, len(b), tc.status, len(tc.want))
				}
				if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(tc.want)) {
					t.Errorf("%s: Content-Length %q, want %d", tc.name, cl, len(tc.want))
				}
			}
			if resp, b := get("HEAD", name, ""); len(b) != 0 || resp.ContentLength != size {
				t.Errorf("HEAD: %d body bytes, Content-Length %d, want none and %d", len(b), resp.ContentLength, size)
			}
			resp, b := get("GET", "/copy", "")
			handlerErr("io.Copy from an offset")
			if !bytes.Equal(b, data[777:]) {
				t.Errorf("io.Copy from an offset: %d bytes differ from the file's %d", len(b), size-777)
			}
			if ct, want := resp.Header.Get("Content-Type"), http.DetectContentType(data[777:777+512]); ct != want {
				t.Errorf("sniffed Content-Type %q, want %q", ct, want)
			}
			if at := <-offsets; at != size {
				t.Errorf("the file's offset after io.Copy is %d, want %d (its end)", at, size)
			}
			if _, b := get("GET", "/writes", ""); !bytes.Equal(b, data) {
				t.Errorf("64 KiB Writes: %d bytes, want %d", len(b), size)
			}
		}
		if len(conns) != 1 {
			t.Errorf("the requests went on %d connections, want one that goes on serving", len(conns))
		}
		if m.proto == "h2" || m.proto == "h2c" {
			checkMapped(t, base, mappedBytes()-before)
		}
	})
}

// TestNativeBigWriteFromStack: the native API's big Writes go straight to
// the socket without making the handler's buffer escape: a handler that
// writes 128 KiB from a 64 KiB array on its stack costs no allocation per
// request, and its body arrives exact. (Each Write is larger than the 32
// KiB a native response collects before it streams: collected bytes are
// copied, into a buffer that may grow.)
//
// Modes: HTTP/1.1, raw bytes, native API: it counts the allocations of the
// HTTP/1.1 engine's direct writes, read by a client that allocates
// nothing (a raw socket into a fixed buffer); HTTP/2 frames and copies a
// big Write instead (its allocations per request:
// TestNativeH2NativeZeroAllocs). TestFileAndBigBodies checks big Writes'
// bytes on every mode.
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

// TestChunkedStallClosesAtOnce: once a chunked response's write failed
// (a client that stopped reading was cut by WriteStallTimeout), the
// connection closes at once, on both APIs: no last chunk is queued for
// the socket that stalled, to wait out one more stall period. On
// HTTP/1.1 alone (and over TLS): chunked framing and the connection's end after a failed
// write are HTTP/1.1's (HTTP/2 resets the stream alone:
// TestWriteStallCutsNonReaderWithinBound).
func TestChunkedStallClosesAtOnce(t *testing.T) {
	// The regression waits one more stall period; half of one is the
	// bound, so a long period leaves a busy machine's scheduling room.
	const stall = time.Second
	runModes(t, func(t *testing.T, m mode) {
		p := newStallCloseProbe(stall, 0)
		base, c := m.serve(t, p.s, p.handler(), p.native())
		resp, err := stallClient(t, c, 4<<10, 0).Get(base + "/") // and never read the body
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		p.check(t, stall/2)
	}, mode{"h1", false}, mode{"h1", true}, mode{"https1", false}, mode{"https1", true})
}

// stallCloseProbe is a Server with WriteStallTimeout whose handlers write
// without end, and what the stall-and-close tests measure: when the
// handler's write failed, and when the connection closed.
type stallCloseProbe struct {
	s              *Server
	failed, closed chan time.Time
}

// newStallCloseProbe makes the probe; sndbuf > 0 sets the server's send
// buffer on each connection.
func newStallCloseProbe(stall time.Duration, sndbuf int) *stallCloseProbe {
	p := &stallCloseProbe{failed: make(chan time.Time, 1), closed: make(chan time.Time, 1)}
	p.s = &Server{WriteStallTimeout: stall, ConnState: func(nc net.Conn, st ConnState) {
		switch {
		case st == StateNew && sndbuf > 0:
			tcpOf(nc).SetWriteBuffer(sndbuf)
		case st == StateClosed:
			p.closed <- time.Now()
		}
	}}
	return p
}

// write writes 64 KiB chunks to w until a write fails, and notes when.
func (p *stallCloseProbe) write(w io.Writer) {
	chunk := make([]byte, 64<<10)
	for {
		if _, err := w.Write(chunk); err != nil {
			p.failed <- time.Now()
			return
		}
	}
}

func (p *stallCloseProbe) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.write(w) })
}

func (p *stallCloseProbe) native() func(*Ctx) { return func(c *Ctx) { p.write(c) } }

// check waits for the handler's write to fail, then for the connection
// to close, within bound of it.
func (p *stallCloseProbe) check(t *testing.T, bound time.Duration) {
	t.Helper()
	var at time.Time
	select {
	case at = <-p.failed:
	case <-time.After(20 * time.Second):
		t.Fatal("a client that stopped reading was not cut")
	}
	select {
	case end := <-p.closed:
		if d := end.Sub(at); d > bound {
			t.Errorf("closed %v after the write failed, want at once", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not close")
	}
}

// TestBigUploads: on every mode of the http.Handler API, a big upload
// copied from Request.Body arrives exact, with a length and without one,
// on one connection that goes on serving; past MaxRequestBodyBytes a
// client gets a 413, and a body without a length ends the handler's
// copy with *http.MaxBytesError. (HTTP/1.1's body is an io.WriterTo reading straight from the
// socket: TestBigUploadWriteTo.)
func TestBigUploads(t *testing.T) {
	const size = 3<<20 + 77
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	want := fmt.Sprintf("%d %x", size, sha256.Sum256(data))
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		var maxBytesErrs atomic.Int32 // copies that ended with *http.MaxBytesError
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d := sha256.New()
			n, err := io.Copy(d, r.Body)
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				maxBytesErrs.Add(1)
				http.Error(w, "too big", http.StatusRequestEntityTooLarge)
				return
			}
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "%d %x", n, d.Sum(nil))
		})
		for _, limited := range []bool{false, true} {
			s := &Server{}
			if limited {
				s.MaxRequestBodyBytes = 1 << 20
			}
			base, c := m.serve(t, s, h, nil)
			conns := map[string]bool{}
			trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { conns[ci.Conn.LocalAddr().String()] = true }}
			for _, chunked := range []bool{false, true, false} {
				var body io.Reader = bytes.NewReader(data)
				if chunked {
					body = io.MultiReader(body) // no length
				}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/", body)
				errsBefore := maxBytesErrs.Load()
				resp, b := mustDo(t, c, req)
				if limited && chunked && maxBytesErrs.Load() != errsBefore+1 {
					t.Errorf("over the limit, no length: the handler's copy did not end with *http.MaxBytesError")
				}
				switch {
				case !limited && (resp.StatusCode != 200 || string(b) != want):
					t.Fatalf("chunked=%v: %d %q, want %q", chunked, resp.StatusCode, b, want)
				case limited && resp.StatusCode != http.StatusRequestEntityTooLarge:
					t.Fatalf("over the limit (chunked=%v): %d %q, want 413", chunked, resp.StatusCode, b)
				case limited && chunked && string(b) != "too big\n":
					// A declared length over the limit is answered
					// before the handler runs; a body without one is
					// cut as the handler reads it, and the handler's
					// own answer stands (the server answers 413 itself
					// only when the handler wrote nothing).
					t.Fatalf("over the limit, no length: %q, want the handler's 413 for *http.MaxBytesError", b)
				}
			}
			if !limited && len(conns) != 1 {
				t.Errorf("the uploads went on %d connections, want one that goes on serving", len(conns))
			}
		}
	}, handlerModes()...)
}

// TestBigUploadWriteTo: io.Copy from Request.Body takes the body's
// WriteTo (32 KiB reads); a big upload arrives exact with a length and
// chunked, the connection goes on serving, and a body over the limit ends
// the copy with *http.MaxBytesError and a 413, also when it comes in one
// 3 MB chunk, whose limit trips in the direct reads.
//
// Modes: HTTP/1.1, raw bytes: the WriteTo that reads straight from the
// socket is the HTTP/1.1 engine's (HTTP/2 bodies come from the stream's
// buffer), and the chunk sizes are HTTP/1.1 framing. TestBigUploads runs
// the rest on every handler mode.
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
