package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The HTTP/2 engine of hotpath's own (the default; not Server.HTTP2HandOff), driven by Go's own
// HTTP/2 client over TLS and over h2c.

// forH2Engine runs f on hotpath's HTTP/2 engine's modes (h2 over TLS
// and h2c, the http.Handler API), through the mode matrix, and checks that
// net/http's hand-off never started. The tests that use it are about the
// HTTP/2 engine: streams, windows, resets.
func forH2Engine(t *testing.T, h http.Handler, f func(t *testing.T, base string, c *http.Client), opts ...func(*Server)) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		for _, o := range opts {
			o(s)
		}
		base, c := m.serve(t, s, h, nil)
		f(t, base, c)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.h2srv != nil || s.h2csrv != nil {
			t.Error("net/http's HTTP/2 hand-off started without HTTP2HandOff")
		}
	}, mode{proto: "h2"}, mode{proto: "h2c"})
}

// echo answers with the request body, and its method and protocol in
// headers.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Method", r.Method)
	w.Header().Set("X-Proto", r.Proto)
	io.Copy(w, r.Body)
})

func mustDo(t *testing.T, c *http.Client, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestNativeH2BigResponse(t *testing.T) {
	big := bytes.Repeat([]byte("abcdefgh"), 5<<20/8)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		for b := big; len(b) > 0; {
			n := min(len(b), 100_000)
			w.Write(b[:n])
			b = b[n:]
		}
	})
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		req, _ := http.NewRequest("GET", base+"/big", nil)
		resp, b := mustDo(t, c, req)
		if resp.StatusCode != 200 || !bytes.Equal(b, big) {
			t.Fatalf("status %d, %d bytes of %d", resp.StatusCode, len(b), len(big))
		}
	})
}

func TestNativeH2ConcurrentStreams(t *testing.T) {
	forH2Engine(t, echo, func(t *testing.T, base string, c *http.Client) {
		var conns sync.Map
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for g := range 50 {
			wg.Go(func() {
				for i := range 4 {
					body := strings.Repeat(fmt.Sprintf("g%d-i%d;", g, i), 100*(g+1))
					trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { conns.Store(ci.Conn.LocalAddr().String(), true) }}
					req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+"/", strings.NewReader(body))
					resp, err := c.Do(req)
					if err != nil {
						errs <- err
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || string(b) != body {
						errs <- fmt.Errorf("stream g%d i%d: %v, got %d bytes of %d", g, i, err, len(b), len(body))
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		n := 0
		conns.Range(func(any, any) bool { n++; return true })
		if n != 1 {
			t.Errorf("requests used %d connections, want 1", n)
		}
	})
}

// A handler that reads its body slowly holds the client back by flow
// control, and still gets every byte in order.
func TestNativeH2SlowReader(t *testing.T) {
	body := bytes.Repeat([]byte("slow reader "), 4<<20/12)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hash := sha256.New()
		buf := make([]byte, 8<<10)
		n := 0
		for {
			k, err := r.Body.Read(buf)
			hash.Write(buf[:k])
			n += k
			if n%(256<<10) < len(buf) {
				time.Sleep(time.Millisecond)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
		}
		fmt.Fprintf(w, "%d %x", n, hash.Sum(nil))
	})
	want := fmt.Sprintf("%d %x", len(body), sha256.Sum256(body))
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		req, _ := http.NewRequest("POST", base+"/", bytes.NewReader(body))
		resp, b := mustDo(t, c, req)
		if resp.StatusCode != 200 || string(b) != want {
			t.Fatalf("status %d: %q, want %q", resp.StatusCode, b, want)
		}
	})
}

// A client that resets a stream cancels the request's context.
func TestNativeH2ClientResetCancels(t *testing.T) {
	started := make(chan struct{}, 2)
	canceled := make(chan error, 2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		started <- struct{}{}
		<-r.Context().Done()
		canceled <- r.Context().Err()
	})
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/wait", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		cancel()
		resp.Body.Close()
		select {
		case err := <-canceled:
			if err == nil {
				t.Fatal("context done without an error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the handler's context was not canceled by the client's reset")
		}
	})
}

// HTTP/2 is served by hotpath's engine by default; HTTP2HandOff hands
// it to net/http's HTTP/2 server instead.
//
// Modes: the choice between engines itself (ALPN, the h2c preface,
// HTTP2HandOff), which the matrix's modes take as given.
func TestNativeH2IsTheDefault(t *testing.T) {
	for _, handOff := range []bool{false, true} {
		s := &Server{Handler: echo, HTTP2HandOff: handOff}
		base, _, c := startH2Both(t, s, true)
		req, _ := http.NewRequest("GET", base+"/", nil)
		resp, _ := mustDo(t, c, req)
		s.mu.Lock()
		native, handoff := len(s.h2conns), s.h2csrv != nil
		s.mu.Unlock()
		if resp.ProtoMajor != 2 || native != map[bool]int{false: 1, true: 0}[handOff] || handoff != handOff {
			t.Errorf("HTTP2HandOff=%v: %s, native connections %d, hand-off started %v", handOff, resp.Proto, native, handoff)
		}
	}
}

// ParseMultipartForm's temporary files are removed when the handler
// returns, as net/http and the HTTP/1.1 adapter do.
func TestNativeH2MultipartTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 10); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		fmt.Fprint(w, len(r.MultipartForm.File["f"]))
	})
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, _ := mw.CreateFormFile("f", "f.bin")
		fw.Write(bytes.Repeat([]byte("x"), 64<<10))
		mw.Close()
		req, _ := http.NewRequest("POST", base+"/", &buf)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		_, body := mustDo(t, c, req)
		if string(body) != "1" {
			t.Fatalf("got %q", body)
		}
		waitFor(t, "the temporary files to go", func() bool {
			ents, _ := os.ReadDir(dir)
			return len(ents) == 0
		})
	})
}

// A body read in small pieces costs time in proportion to its size, not
// its square (the stream's buffer is not shifted on every read).
func TestNativeH2SmallBodyReads(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 512)
		n := 0
		for {
			k, err := r.Body.Read(buf)
			n += k
			if err != nil {
				break
			}
		}
		fmt.Fprint(w, n)
	})
	forH2Engine(t, h, func(t *testing.T, base string, c *http.Client) {
		const size = 8 << 20
		req, _ := http.NewRequest("POST", base+"/", bytes.NewReader(make([]byte, size)))
		_, body := mustDo(t, c, req)
		if string(body) != fmt.Sprint(size) {
			t.Fatalf("got %q", body)
		}
	})
}
