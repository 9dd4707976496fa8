package client

// The HTTP/2 client connection against hotpath's server over h2c, against
// net/http's HTTP/2 server over TLS, and against a raw frame server
// (rawH2) for what a real server will not do on demand: GOAWAY at a given
// point, REFUSED_STREAM, a body that does not match its content-length.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// h2cServer serves h on hotpath's server, cleartext HTTP/2 with prior
// knowledge, until the test ends.
func h2cServer(t testing.TB, h http.Handler) string {
	t.Helper()
	s := &server.Server{Handler: h, Protocols: h2cServerProtocols(), ErrorLog: log.New(io.Discard, "", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

// dialH2C opens an h2Conn to addr over cleartext.
func dialH2C(t testing.TB, tr *Transport, addr string) *h2Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := newH2Conn(tr, connKey{host: addr}, nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.close)
	return cc
}

// tlsServer serves h on net/http's HTTP/2 server over TLS and returns an
// h2Conn to it.
func tlsServer(t *testing.T, tr *Transport, h http.Handler) (*h2Conn, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	addr := srv.Listener.Addr().String()
	tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "example.com", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN negotiated %q, want h2", p)
	}
	cc, err := newH2Conn(tr, connKey{host: addr, tls: true}, tc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cc.close)
	return cc, "https://" + addr
}

// bothServers runs f against hotpath's server (h2c) and net/http's
// (TLS), each serving h.
func bothServers(t *testing.T, tr *Transport, h http.Handler, f func(t *testing.T, cc *h2Conn, base string)) {
	t.Run("hotpath-h2c", func(t *testing.T) {
		addr := h2cServer(t, h)
		f(t, dialH2C(t, tr, addr), "http://"+addr)
	})
	t.Run("nethttp-tls", func(t *testing.T) {
		cc, base := tlsServer(t, tr, h)
		f(t, cc, base)
	})
}

// send reserves a stream and sends req on cc.
func send(t testing.TB, cc *h2Conn, req *http.Request) (*http.Response, error) {
	t.Helper()
	if !cc.reserve() {
		t.Fatal("reserve: no stream available")
	}
	return cc.roundTrip(req, req.Context(), time.Time{})
}

// fetch sends req and reads its body whole.
func fetch(t testing.TB, cc *h2Conn, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := send(t, cc, req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", req.Method, req.URL, err)
	}
	return resp, b
}

func newReq(t testing.TB, method, url string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// waitIdle waits for cc to have no stream open: streams close on the
// read loop, a moment after the last frame's bytes were read.
func waitIdle(t *testing.T, cc *h2Conn) {
	t.Helper()
	for i := 0; !cc.idle(); i++ {
		if i > 500 {
			t.Fatalf("connection still has %d streams in use", cc.ids.Active())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var infoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Proto", r.Proto)
	w.Header().Set("X-Ua", r.Header.Get("User-Agent"))
	w.Header().Set("X-Ae", r.Header.Get("Accept-Encoding"))
	w.Header().Set("X-Custom-Header", r.Header.Get("X-Custom-Header"))
	w.Header().Set("X-Length", strconv.FormatInt(r.ContentLength, 10))
	w.Header().Set("X-Host", r.Host)
	w.Header().Set("X-Uri", r.RequestURI)
	w.Header().Add("X-Multi", "a")
	w.Header().Add("X-Multi", "b")
	n, _ := io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "hello %s, read %d", r.Method, n)
})

// TestH2Get: a GET and a GET with a body, their request fields as the
// server saw them, and the response's head and body.
func TestH2Get(t *testing.T) {
	bothServers(t, &Transport{}, infoHandler, func(t *testing.T, cc *h2Conn, base string) {
		req := newReq(t, "GET", base+"/path/x?q=1&r=%20", nil)
		req.Header.Set("X-Custom-Header", "v1")
		req.Header.Set("Connection", "keep-alive") // connection-specific: dropped
		resp, body := fetch(t, cc, req)
		if resp.StatusCode != 200 || resp.Status != "200 OK" || resp.Proto != "HTTP/2.0" || resp.ProtoMajor != 2 {
			t.Errorf("status %q %d, proto %q %d", resp.Status, resp.StatusCode, resp.Proto, resp.ProtoMajor)
		}
		if string(body) != "hello GET, read 0" || resp.ContentLength != int64(len(body)) {
			t.Errorf("body %q, ContentLength %d", body, resp.ContentLength)
		}
		h := resp.Header
		for k, want := range map[string]string{
			"X-Proto": "HTTP/2.0", "X-Ua": "Go-http-client/2.0", "X-Ae": "gzip", "X-Custom-Header": "v1",
			"X-Uri": "/path/x?q=1&r=%20", "X-Host": req.URL.Host, "Content-Type": "text/plain; charset=utf-8",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
		if got := h["X-Multi"]; len(got) != 2 || got[0] != "a" || got[1] != "b" {
			t.Errorf("X-Multi = %q", got)
		}
		if resp.Request != req {
			t.Error("resp.Request is not the request")
		}
		if (resp.TLS != nil) != strings.HasPrefix(base, "https") {
			t.Errorf("resp.TLS = %v for %s", resp.TLS, base)
		}

		// A GET with a body, and a POST without one (content-length: 0).
		req = newReq(t, "GET", base+"/", strings.NewReader("0123456789"))
		resp, body = fetch(t, cc, req)
		if string(body) != "hello GET, read 10" || resp.Header.Get("X-Length") != "10" {
			t.Errorf("GET with a body: %q, server saw length %s", body, resp.Header.Get("X-Length"))
		}
		req = newReq(t, "POST", base+"/", http.NoBody)
		req.Header.Set("User-Agent", "mine")
		resp, body = fetch(t, cc, req)
		if string(body) != "hello POST, read 0" || resp.Header.Get("X-Length") != "0" || resp.Header.Get("X-Ua") != "mine" {
			t.Errorf("empty POST: %q, length %s, UA %q", body, resp.Header.Get("X-Length"), resp.Header.Get("X-Ua"))
		}
		waitIdle(t, cc)
	})
}

// TestH2PostBeyondWindows: bodies larger than every initial window, of
// known and unknown length, arrive whole; an echo larger than the
// client's stream window does not deadlock (the rest of the upload goes
// on once the response head is in).
func TestH2PostBeyondWindows(t *testing.T) {
	sum := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		fmt.Fprintf(w, "%d %x %v", n, h.Sum(nil), err)
	})
	body := make([]byte, 3<<20+123)
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := fmt.Sprintf("%d %x <nil>", len(body), sha256.Sum256(body))
	bothServers(t, &Transport{}, sum, func(t *testing.T, cc *h2Conn, base string) {
		_, got := fetch(t, cc, newReq(t, "POST", base+"/", bytes.NewReader(body)))
		if string(got) != want {
			t.Errorf("known length: server got %s, want %s", got, want)
		}
		req := newReq(t, "PUT", base+"/", io.MultiReader(bytes.NewReader(body)))
		req.ContentLength = -1
		_, got = fetch(t, cc, req)
		if string(got) != want {
			t.Errorf("unknown length: server got %s, want %s", got, want)
		}
	})

	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		io.Copy(w, r.Body)
	})
	big := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16) // past the client's 4 MiB stream window
	bothServers(t, &Transport{}, echo, func(t *testing.T, cc *h2Conn, base string) {
		_, got := fetch(t, cc, newReq(t, "POST", base+"/", bytes.NewReader(big)))
		if !bytes.Equal(got, big) {
			t.Errorf("echo: got %d bytes back of %d", len(got), len(big))
		}
	})
}

// TestH2RequestBodyErrors: a body that fails, or that is longer or
// shorter than declared, fails the request with errRequestBody, and the
// connection goes on.
func TestH2RequestBodyErrors(t *testing.T) {
	addr := h2cServer(t, infoHandler)
	cc := dialH2C(t, &Transport{}, addr)
	boom := errors.New("boom")
	for name, tc := range map[string]struct {
		body io.Reader
		cl   int64
		want error
	}{
		"fails":   {io.MultiReader(strings.NewReader("abc"), iotestErr{boom}), -1, boom},
		"longer":  {strings.NewReader("0123456789"), 5, nil},
		"shorter": {io.MultiReader(strings.NewReader("01")), 5, nil},
	} {
		req := newReq(t, "POST", "http://"+addr+"/", tc.body)
		req.ContentLength = tc.cl
		resp, err := send(t, cc, req)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, errRequestBody) || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want errRequestBody", name, err)
		}
	}
	_, b := fetch(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if string(b) != "hello GET, read 0" {
		t.Errorf("after the failures: %q", b)
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

// TestH2ConcurrentStreams: 100 requests at once share one connection,
// each gets its own answer, and the streams were in flight together.
func TestH2ConcurrentStreams(t *testing.T) {
	var mu sync.Mutex
	inFlight, peak := 0, 0
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		if inFlight == 100 {
			close(release)
		}
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		fmt.Fprintf(w, "answer to %s %s", r.URL.Path, strings.Repeat("x", 1000))
	})
	addr := h2cServer(t, h)
	cc := dialH2C(t, &Transport{}, addr)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Go(func() {
			if !cc.reserve() {
				errs <- fmt.Errorf("%d: no stream", i)
				return
			}
			req, _ := http.NewRequest("GET", fmt.Sprintf("http://%s/%d", addr, i), nil)
			resp, err := cc.roundTrip(req, req.Context(), time.Now().Add(20*time.Second))
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("answer to /%d ", i); err != nil || !strings.HasPrefix(string(b), want) {
				errs <- fmt.Errorf("%d: %q, %v", i, b, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak != 100 {
		t.Errorf("at most %d requests in the handler at once, want 100", peak)
	}
	waitIdle(t, cc)
}

// TestH2Trailers: response trailers announced in the head are keys of
// resp.Trailer at once and have their values at EOF; request trailers
// reach the server.
func TestH2Trailers(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Trailer", "X-Sum, X-Count")
		w.Write([]byte("some body"))
		w.(http.Flusher).Flush()
		w.Header().Set("X-Sum", "abc")
		w.Header().Set("X-Count", "9")
		w.Header().Set(http.TrailerPrefix+"X-Req-Trailer", r.Trailer.Get("X-Client"))
	})
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		req := newReq(t, "POST", base+"/", io.MultiReader(strings.NewReader("request body")))
		req.Trailer = http.Header{"X-Client": nil}
		req.ContentLength = -1
		req.Body = &trailerSetter{r: req.Body, set: func() { req.Trailer.Set("X-Client", "from-client") }}
		resp, err := send(t, cc, req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, ok := resp.Trailer["X-Sum"]; !ok {
			t.Errorf("announced trailer X-Sum not a key before the body: %v", resp.Trailer)
		}
		if resp.Header.Get("Trailer") != "" {
			t.Errorf("Trailer field left in Header: %v", resp.Header)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != "some body" {
			t.Fatalf("body %q, %v", b, err)
		}
		if resp.Trailer.Get("X-Sum") != "abc" || resp.Trailer.Get("X-Count") != "9" {
			t.Errorf("trailers %v", resp.Trailer)
		}
		if got := resp.Trailer.Get("X-Req-Trailer"); got != "from-client" {
			t.Errorf("the server saw request trailer X-Client = %q", got)
		}
	})
}

// trailerSetter sets the request's trailer values when its body ends, as
// a caller streaming a body would.
type trailerSetter struct {
	r   io.ReadCloser
	set func()
}

func (b *trailerSetter) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.set()
	}
	return n, err
}
func (b *trailerSetter) Close() error { return b.r.Close() }

// TestH2Head: a HEAD response has an empty body and the length the
// server declared.
func TestH2Head(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1234")
		w.Header().Set("X-Method", r.Method)
		if r.Method != "HEAD" {
			w.Write(make([]byte, 1234))
		}
	})
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		resp, b := fetch(t, cc, newReq(t, "HEAD", base+"/", nil))
		if resp.StatusCode != 200 || resp.ContentLength != 1234 || len(b) != 0 || resp.Body != http.NoBody || resp.Header.Get("X-Method") != "HEAD" {
			t.Errorf("HEAD: %d, ContentLength %d, %d body bytes, body %T", resp.StatusCode, resp.ContentLength, len(b), resp.Body)
		}
		resp, b = fetch(t, cc, newReq(t, "GET", base+"/", nil))
		if len(b) != 1234 || resp.ContentLength != 1234 {
			t.Errorf("GET after HEAD: %d bytes, ContentLength %d", len(b), resp.ContentLength)
		}
		waitIdle(t, cc)
	})
}

// TestH2Gzip: gzip is asked for and undone transparently, as net/http
// does; not when DisableCompression is set or the caller asked itself.
func TestH2Gzip(t *testing.T) {
	text := strings.Repeat("compressible text ", 1000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, text)
			return
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		io.WriteString(zw, text)
		zw.Close()
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
		w.Write(buf.Bytes())
	})
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		resp, b := fetch(t, cc, newReq(t, "GET", base+"/", nil))
		if string(b) != text || !resp.Uncompressed || resp.ContentLength != -1 ||
			resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Length") != "" {
			t.Errorf("transparent gzip: %d bytes, Uncompressed %v, ContentLength %d, %v", len(b), resp.Uncompressed, resp.ContentLength, resp.Header)
		}
		req := newReq(t, "GET", base+"/", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, b = fetch(t, cc, req)
		if resp.Uncompressed || resp.Header.Get("Content-Encoding") != "gzip" || bytes.Equal(b, []byte(text)) {
			t.Errorf("caller's own Accept-Encoding: Uncompressed %v, %d bytes", resp.Uncompressed, len(b))
		}
	})
	addr := h2cServer(t, h)
	cc := dialH2C(t, &Transport{DisableCompression: true}, addr)
	resp, b := fetch(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if resp.Uncompressed || string(b) != text {
		t.Errorf("DisableCompression: Uncompressed %v, %d bytes", resp.Uncompressed, len(b))
	}
}

// TestH2BigHeaders: a request block larger than a frame goes out in
// CONTINUATION frames, and a response block so split comes back whole.
func TestH2BigHeaders(t *testing.T) {
	big := make([]byte, 60<<10)
	for i := range big {
		big[i] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[i*7919%62]
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Got", strconv.Itoa(len(r.Header.Get("X-Big"))))
		w.Header().Set("X-Back", r.Header.Get("X-Big"))
	})
	cc, base := tlsServer(t, &Transport{}, h)
	req := newReq(t, "GET", base+"/", nil)
	req.Header.Set("X-Big", string(big))
	resp, _ := fetch(t, cc, req)
	if resp.Header.Get("X-Got") != strconv.Itoa(len(big)) || resp.Header.Get("X-Back") != string(big) {
		t.Errorf("server got %s bytes of X-Big, sent back %d", resp.Header.Get("X-Got"), len(resp.Header.Get("X-Back")))
	}
}

// TestH2CancelMidBody: canceling the context while the body streams
// resets the stream (the handler sees its request canceled), the read
// fails with the context's error, and the connection serves the next
// request.
func TestH2CancelMidBody(t *testing.T) {
	canceled := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
		case "/hang":
		default:
			io.WriteString(w, "next")
			return
		}
		select {
		case <-r.Context().Done():
			canceled <- true
		case <-time.After(5 * time.Second):
			canceled <- false
		}
	})
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := newReq(t, "GET", base+"/slow", nil).WithContext(ctx)
		resp, err := send(t, cc, req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.ReadFull(resp.Body, make([]byte, 1000))
		if err != nil {
			t.Fatalf("first bytes: %d, %v", n, err)
		}
		go func() {
			time.Sleep(20 * time.Millisecond)
			cancel()
		}()
		_, err = resp.Body.Read(make([]byte, 10))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read after cancel: %v, want context.Canceled", err)
		}
		if !<-canceled {
			t.Error("the handler's request was not canceled: no RST_STREAM")
		}
		resp.Body.Close()
		_, b := fetch(t, cc, newReq(t, "GET", base+"/next", nil))
		if string(b) != "next" {
			t.Errorf("next request on the connection: %q", b)
		}
		waitIdle(t, cc)

		// Canceled before the head: roundTrip returns the context's error.
		// 300 ms: time for the request to reach its handler first on a
		// loaded machine (with 30 ms it could end before it was sent, and
		// no handler would ever report).
		ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err = send(t, cc, newReq(t, "GET", base+"/hang", nil).WithContext(ctx))
		select {
		case ok := <-canceled:
			if !ok {
				t.Error("the handler of a request canceled before its head was not canceled")
			}
		case <-time.After(10 * time.Second):
			t.Error("the handler of a request canceled before its head never ran")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("context done before the head: %v", err)
		}
	})
}

// TestH2Deadline: past the deadline, waiting for the head or reading the
// body fails with a timeout that is a net.Error and DeadlineExceeded,
// and the connection goes on.
func TestH2Deadline(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/head":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/body":
			w.Write([]byte("part"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		default:
			io.WriteString(w, "ok")
		}
	})
	isTimeout := func(err error) bool {
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, context.DeadlineExceeded)
	}
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		start := time.Now()
		if !cc.reserve() {
			t.Fatal("no stream")
		}
		req := newReq(t, "GET", base+"/head", nil)
		_, err := cc.roundTrip(req, req.Context(), time.Now().Add(100*time.Millisecond))
		if !isTimeout(err) || time.Since(start) > 2*time.Second {
			t.Errorf("waiting for the head: %v after %v, want a timeout after 100ms", err, time.Since(start))
		}

		if !cc.reserve() {
			t.Fatal("no stream")
		}
		req = newReq(t, "GET", base+"/body", nil)
		resp, err := cc.roundTrip(req, req.Context(), time.Now().Add(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		if string(b) != "part" || !isTimeout(err) {
			t.Errorf("reading the body: %q, %v; want a timeout after the first part", b, err)
		}
		resp.Body.Close()

		_, b = fetch(t, cc, newReq(t, "GET", base+"/", nil))
		if string(b) != "ok" {
			t.Errorf("after the timeouts: %q", b)
		}
		// A deadline already past fails at once.
		if !cc.reserve() {
			t.Fatal("no stream")
		}
		if _, err := cc.roundTrip(req, req.Context(), time.Now().Add(-time.Second)); !isTimeout(err) {
			t.Errorf("past deadline: %v", err)
		}
		waitIdle(t, cc)
	})
}

// nBytesHandler answers ?n=N with N bytes, in 64 KiB writes.
var nBytesHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	chunk := make([]byte, 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
})

// TestH2SlowReaderDoesNotStallOthers: a stream whose body nobody reads
// holds at most its own window; another stream on the connection
// downloads more than the connection's window meanwhile.
func TestH2SlowReaderDoesNotStallOthers(t *testing.T) {
	bothServers(t, &Transport{}, nBytesHandler, func(t *testing.T, cc *h2Conn, base string) {
		slow, err := send(t, cc, newReq(t, "GET", base+"/?n=20000000", nil))
		if err != nil {
			t.Fatal(err)
		}
		defer slow.Body.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for i := range 3 { // 3 × 8 MiB: past the 16 MiB connection window
			resp, err := send(t, cc, newReq(t, "GET", base+"/?n=8388608", nil).WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != 8<<20 || err != nil {
				t.Fatalf("download %d beside a stalled stream: %d bytes, %v", i, n, err)
			}
		}
		s := slow.Body.(*h2Stream)
		cc.mu.Lock()
		held := len(s.buf) - s.off
		cc.mu.Unlock()
		if held == 0 || held > h2StreamWindow {
			t.Errorf("the unread stream holds %d bytes, want some, at most its window %d", held, h2StreamWindow)
		}
	})
}

// The benchmark's server runs in a child process (this test binary,
// running TestH2BenchServer), so that the process's CPU time and
// allocations are the client's alone. H2BENCH_SERVER_CPUS, if set, pins
// the child with taskset (e.g. "1" while the benchmark runs under
// taskset -c 0).
const benchServerEnv = "HOTPATH_H2_BENCH_SERVER"

var benchBody = []byte("Hello, World! A small response body.\n")

// TestH2BenchServer is BenchmarkH2Client's server when run as its child;
// otherwise it skips.
func TestH2BenchServer(t *testing.T) {
	if os.Getenv(benchServerEnv) == "" {
		t.Skip("BenchmarkH2Client's server process")
	}
	addr := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(benchBody)
	}))
	fmt.Println("ADDR", addr)
	io.Copy(io.Discard, os.Stdin) // until the parent goes
}

// startBenchServer starts the child server and returns its address, or
// returns H2BENCH_ADDR, a server started by hand (for strace or perf on
// the client alone).
func startBenchServer(b *testing.B) string {
	if addr := os.Getenv("H2BENCH_ADDR"); addr != "" {
		return addr
	}
	args := []string{os.Args[0], "-test.run=^TestH2BenchServer$", "-test.count=1"}
	if cpus := os.Getenv("H2BENCH_SERVER_CPUS"); cpus != "" {
		args = append([]string{"taskset", "-c", cpus}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), benchServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go io.Copy(io.Discard, stdout)
			return addr
		}
	}
	b.Fatal("the server process did not start")
	return ""
}

// BenchmarkH2Client: GETs of a small body from hotpath's server over h2c,
// one at a time and 100 at once on one connection, by this client and by
// net/http's HTTP/2 client. cpu-ns/op is the client process's CPU per
// request (the server runs in another process), user-ns/op and
// sys-ns/op its parts: on loopback the system part, the same system calls
// for both clients, is most of it at one stream.
func BenchmarkH2Client(b *testing.B) {
	addr := startBenchServer(b)
	url := "http://" + addr + "/"
	run := func(b *testing.B, streams int, get func(req *http.Request) error) {
		b.ReportAllocs()
		user0, sys0 := cpuTime()
		if streams == 1 {
			req := newReq(b, "GET", url, nil)
			for b.Loop() {
				if err := get(req); err != nil {
					b.Fatal(err)
				}
			}
		} else {
			b.SetParallelism((streams + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			b.RunParallel(func(pb *testing.PB) {
				req := newReq(b, "GET", url, nil)
				for pb.Next() {
					if err := get(req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		user, sys := cpuTime()
		user, sys = user-user0, sys-sys0
		b.ReportMetric(float64(user+sys)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(user)/float64(b.N), "user-ns/op")
		b.ReportMetric(float64(sys)/float64(b.N), "sys-ns/op")
	}
	for _, streams := range []int{1, 100} {
		hotpath := func(b *testing.B, timeout time.Duration) {
			cc := dialH2C(b, &Transport{}, addr)
			run(b, streams, func(req *http.Request) error {
				for !cc.reserve() {
					runtime.Gosched()
				}
				var deadline time.Time
				if timeout > 0 {
					deadline = time.Now().Add(timeout) // as Transport.Timeout
				}
				resp, err := cc.roundTrip(req, req.Context(), deadline)
				if err != nil {
					return err
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && n != int64(len(benchBody)) {
					err = fmt.Errorf("%d bytes", n)
				}
				return err
			})
		}
		b.Run(fmt.Sprintf("hotpath/streams=%d", streams), func(b *testing.B) { hotpath(b, 0) })
		// With a deadline per request, as client.New's 30 s Timeout sets.
		b.Run(fmt.Sprintf("hotpath-timeout/streams=%d", streams), func(b *testing.B) { hotpath(b, 30*time.Second) })
		b.Run(fmt.Sprintf("nethttp/streams=%d", streams), func(b *testing.B) {
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			tr := &http.Transport{Protocols: &p, MaxIdleConnsPerHost: 1}
			b.Cleanup(tr.CloseIdleConnections)
			c := &http.Client{Transport: tr}
			run(b, streams, func(req *http.Request) error {
				resp, err := c.Do(req)
				if err != nil {
					return err
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err == nil && (n != int64(len(benchBody)) || resp.ProtoMajor != 2) {
					err = fmt.Errorf("%d bytes over %s", n, resp.Proto)
				}
				return err
			})
		})
	}
}

// TestH2EarlyErrorResponse: a server that answers an upload with an error
// before reading it gets its answer to the client, not a write error: the
// rest of the body is not sent (as net/http), and the connection goes on.
func TestH2EarlyErrorResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upload" {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "ok")
	})
	big := make([]byte, 16<<20) // past the server's windows: the upload must stop
	bothServers(t, &Transport{}, h, func(t *testing.T, cc *h2Conn, base string) {
		resp, b := fetch(t, cc, newReq(t, "POST", base+"/upload", bytes.NewReader(big)))
		if resp.StatusCode != 413 || !strings.Contains(string(b), "too large") {
			t.Errorf("early answer: %d %q", resp.StatusCode, b)
		}
		_, b = fetch(t, cc, newReq(t, "GET", base+"/", nil))
		if string(b) != "ok" {
			t.Errorf("after the early answer: %q", b)
		}
		waitIdle(t, cc)
	})
}

// TestH2CloseReturnsCredit: bodies closed unread give their bytes' credit
// back to the connection: four unread 4 MiB windows fill the 16 MiB
// connection window, and once they are closed another download runs. A
// Close during a blocked Read ends the Read.
func TestH2CloseReturnsCredit(t *testing.T) {
	bothServers(t, &Transport{}, nBytesHandler, func(t *testing.T, cc *h2Conn, base string) {
		var held []*http.Response
		for range h2ConnWindow / h2StreamWindow {
			resp, err := send(t, cc, newReq(t, "GET", base+"/?n=20000000", nil))
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, resp)
		}
		for i := 0; ; i++ {
			cc.mu.Lock()
			avail := cc.inflow.Available()
			cc.mu.Unlock()
			if avail == 0 {
				break
			}
			if i > 1000 {
				t.Fatalf("connection window never filled: %d left", avail)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// A Read blocked on a stalled stream, ended by Close.
		resp, err := send(t, cc, newReq(t, "GET", base+"/?n=1000", nil))
		if err != nil {
			t.Fatal(err)
		}
		readErr := make(chan error, 1)
		go func() {
			_, err := resp.Body.Read(make([]byte, 10))
			readErr <- err
		}()
		time.Sleep(20 * time.Millisecond)
		resp.Body.Close()
		select {
		case err := <-readErr:
			if err != errClosedBody {
				t.Errorf("Read during Close: %v, want errClosedBody", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not end a blocked Read")
		}
		for _, r := range held {
			r.Body.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err = send(t, cc, newReq(t, "GET", base+"/?n=8000000", nil).WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if n != 8000000 || err != nil {
			t.Errorf("download after closing the unread bodies: %d bytes, %v", n, err)
		}
	})
}

// TestH2ResponseHeaderLimit: a response head over MaxResponseHeaderBytes
// fails its request (the stream is reset, the decoder stays in step) and
// the connection serves the next one.
func TestH2ResponseHeaderLimit(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("X-Big", strings.Repeat("x", 8<<10))
		}
		w.Header().Set("X-Small", "s")
		io.WriteString(w, "ok")
	})
	bothServers(t, &Transport{MaxResponseHeaderBytes: 4 << 10}, h, func(t *testing.T, cc *h2Conn, base string) {
		_, err := send(t, cc, newReq(t, "GET", base+"/big", nil))
		if err == nil || !strings.Contains(err.Error(), "MaxResponseHeaderBytes") {
			t.Errorf("head over the limit: %v", err)
		}
		resp, b := fetch(t, cc, newReq(t, "GET", base+"/", nil))
		if string(b) != "ok" || resp.Header.Get("X-Small") != "s" {
			t.Errorf("after the refused head: %q %v", b, resp.Header)
		}
	})
}

// TestH2ServerShutdown: net/http's graceful shutdown sends GOAWAY: the
// client takes no new stream on the connection, and the request in
// flight finishes.
func TestH2ServerShutdown(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		io.WriteString(w, "finished")
	})
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tc, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "example.com", NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := newH2Conn(&Transport{}, connKey{host: "x", tls: true}, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.close()
	done := make(chan error, 1)
	req := newReq(t, "GET", srv.URL+"/", nil)
	if !cc.reserve() {
		t.Fatal("no stream")
	}
	go func() {
		resp, err := cc.roundTrip(req, req.Context(), time.Time{})
		if err == nil {
			var b []byte
			b, err = io.ReadAll(resp.Body)
			if string(b) != "finished" {
				err = fmt.Errorf("body %q, %v", b, err)
			}
		}
		done <- err
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- srv.Config.Shutdown(context.Background()) }()
	for i := 0; ; i++ {
		cc.mu.Lock()
		gone := cc.ids.GoingAway()
		cc.mu.Unlock()
		if gone {
			break
		}
		if i > 1000 {
			t.Fatal("no GOAWAY after Shutdown")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if cc.reserve() {
		t.Error("reserve succeeded after the server's GOAWAY")
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the request in flight at GOAWAY: %v", err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestH2CToHTTP1Server: an h2c-only transport (prior knowledge) asking a
// server without h2c gets an error that says so, not a frame-size error
// about the HTTP/1.1 answer read as a frame header.
func TestH2CToHTTP1Server(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &Transport{Protocols: p}
	defer tr.CloseIdleConnections()
	_, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err == nil || !strings.Contains(err.Error(), "does not speak h2c") {
		t.Fatalf("err = %v, want one that says the server does not speak h2c", err)
	}
}

// roundTrip is send for tests that close no request body themselves.
func (cc *h2Conn) roundTrip(req *http.Request, ctx context.Context, deadline time.Time) (*http.Response, error) {
	resp, _, err := cc.send(req, ctx, deadline)
	return resp, err
}

// h2cServerProtocols is server.Server's Protocols for HTTP/1.1 and h2c.
func h2cServerProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}
