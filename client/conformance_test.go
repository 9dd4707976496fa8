package client_test

// The client conformance suite: one table of scenarios, each run through
// http.Client with net/http's Transport and with client.Transport, against
// a net/http server and a hotpath server with the same handlers. A
// scenario returns what a caller can observe (status, headers, body,
// trailers, the kind of error); the two transports must observe the same.

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
)

// testMux serves every endpoint the scenarios use.
func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		io.WriteString(w, "hello")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			// No answer to a body that broke off: over TLS, net/http's
			// transport closes a canceled connection with close_notify and
			// now and then reads an answer sent after the cancel, a race
			// that made the comparison flaky.
			panic(http.ErrAbortHandler)
		}
		fmt.Fprintf(w, "%s %s cl=%d te=%v ua=%q x=%q host=%s body=%s", r.Method, r.URL.RequestURI(), r.ContentLength,
			r.TransferEncoding, r.UserAgent(), r.Header.Get("X-Test"), r.Host, b)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
	})
	mux.HandleFunc("/big/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Write(pattern(n))
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "data")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Sum", "42")
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			io.WriteString(w, "plain")
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "compressed hello")
		zw.Close()
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
		http.Redirect(w, r, "/cookie", http.StatusFound)
	})
	mux.HandleFunc("/redirect307", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/cookie", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		if err != nil {
			io.WriteString(w, "no cookie")
			return
		}
		io.WriteString(w, "cookie="+c.Value)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			panic(http.ErrAbortHandler) // no answer to a request the client gave up (see /echo)
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/stall-body", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	return mux
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// servers starts the two servers with testMux and returns their base URLs.
func servers(t *testing.T) map[string]string {
	t.Helper()
	std := httptest.NewServer(testMux())
	t.Cleanup(std.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hp := &server.Server{Handler: testMux()}
	go hp.Serve(ln)
	t.Cleanup(func() { hp.Close() })
	return map[string]string{"net/http server": std.URL, "hotpath server": "http://" + ln.Addr().String()}
}

// transports returns the two RoundTrippers under test, fresh.
func transports() map[string]func() http.RoundTripper {
	return map[string]func() http.RoundTripper{
		"http.Transport":   func() http.RoundTripper { return &http.Transport{} },
		"client.Transport": func() http.RoundTripper { return &client.Transport{} },
	}
}

// observe summarizes a response or an error the way a caller sees it.
func observe(resp *http.Response, err error) string {
	if err != nil {
		return "error: " + errorKind(err)
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(resp.Body)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %s cl=%d uncompressed=%v", resp.Proto, resp.Status, resp.ContentLength, resp.Uncompressed)
	for _, k := range []string{"Content-Type", "Content-Length", "X-Multi", "Content-Encoding", "Location", "Trailer"} {
		if v := resp.Header.Values(k); v != nil {
			fmt.Fprintf(&sb, " %s=%v", k, v)
		}
	}
	if len(body) > 200 {
		fmt.Fprintf(&sb, " body=%d bytes sha=%x", len(body), sha256.Sum256(body))
	} else {
		fmt.Fprintf(&sb, " body=%q", body)
	}
	if rerr != nil {
		fmt.Fprintf(&sb, " read error: %s", errorKind(rerr))
	}
	if len(resp.Trailer) > 0 {
		fmt.Fprintf(&sb, " trailer=%v", resp.Trailer)
	}
	return sb.String()
}

// errorKind classifies an error by what callers test for.
func errorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline exceeded"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected EOF"
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return "net error: " + op.Op
	}
	return "other"
}

// scenario is one row of the table: it runs requests through c against
// base and returns observations.
type scenario struct {
	name string
	run  func(t *testing.T, c *http.Client, base string) string
}

func get(c *http.Client, url string) string { return observe(c.Get(url)) }

var scenarios = []scenario{
	{"GET", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/hello") }},
	{"GET with query and escaped path", func(t *testing.T, c *http.Client, base string) string {
		return get(c, base+"/echo/../echo?a=1&b=%20x")
	}},
	{"HEAD", func(t *testing.T, c *http.Client, base string) string { return observe(c.Head(base + "/big/100")) }},
	{"204", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/status/204") }},
	{"304", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/status/304") }},
	{"404", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/missing") }},
	{"request headers", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("GET", base+"/echo", nil)
		req.Header.Set("X-Test", "  padded  ")
		req.Host = "example.test"
		return observe(c.Do(req))
	}},
	{"empty User-Agent omitted", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("GET", base+"/echo", nil)
		req.Header.Set("User-Agent", "")
		return observe(c.Do(req))
	}},
	{"POST with Content-Length", func(t *testing.T, c *http.Client, base string) string {
		return observe(c.Post(base+"/echo", "text/plain", strings.NewReader("payload")))
	}},
	{"POST without body", func(t *testing.T, c *http.Client, base string) string {
		return observe(c.Post(base+"/echo", "text/plain", nil))
	}},
	{"POST chunked", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(strings.NewReader("chu"), strings.NewReader("nked")))
		return observe(c.Do(req))
	}},
	{"POST 1 MiB", func(t *testing.T, c *http.Client, base string) string {
		return observe(c.Post(base+"/echo", "application/octet-stream", bytes.NewReader(pattern(1<<20))))
	}},
	// Big uploads: a file with its length (sendfile, on both transports),
	// a big body of unknown length (chunked), and bodies that do not
	// match their declared length or fail part-way.
	{"POST 3 MB file with its length", func(t *testing.T, c *http.Client, base string) string {
		f := bodyFile(t, 3<<20)
		req, _ := http.NewRequest("POST", base+"/echo", f)
		req.ContentLength = 3 << 20
		return observe(c.Do(req))
	}},
	{"POST 3 MB file at an offset, as io.Reader", func(t *testing.T, c *http.Client, base string) string {
		f := bodyFile(t, 3<<20)
		f.Seek(1000, io.SeekStart)
		req, _ := http.NewRequest("POST", base+"/echo", struct{ io.Reader }{f})
		req.ContentLength = 3<<20 - 1000
		return observe(c.Do(req))
	}},
	{"POST 3 MB chunked", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(bytes.NewReader(pattern(3<<20))))
		return observe(c.Do(req))
	}},
	{"POST 1 MiB body shorter than its length", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(bytes.NewReader(pattern(500_000))))
		req.ContentLength = 1 << 20
		_, err := c.Do(req)
		return fmt.Sprintf("refused=%v", err != nil)
	}},
	{"POST 1 MiB body longer than its length", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(bytes.NewReader(pattern(1<<20))))
		req.ContentLength = 100_000
		const held = "refused, or answered to the declared length only, or its answer cut off"
		resp, err := c.Do(req)
		if err != nil {
			return held
		}
		// net/http's transport may return the server's answer to the
		// declared length when it arrives before its own check of the
		// rest fails (its read and write loops race; seen under load in
		// CI); client.Transport checks before it reads the answer.
		if _, ours := c.Transport.(*client.Transport); ours {
			t.Error("client.Transport sent a body longer than its length without an error")
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			// The answer broke off: the transport's write loop failed
			// the request after its read loop had returned the head
			// (seen over TLS under load: 200 and 1,054 bytes, then an
			// error). The request failed all the same.
			return held
		}
		// /echo answers a line about the request, then its body: the
		// declared 100,000 bytes when only those went out.
		if _, echoed, ok := strings.Cut(string(b), " body="); ok && len(echoed) == 100_000 && resp.StatusCode == 200 {
			return held
		}
		return fmt.Sprintf("answered %d with %d bytes", resp.StatusCode, len(b))
	}},
	{"POST 1 MiB body failing part-way", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("POST", base+"/echo", io.MultiReader(bytes.NewReader(pattern(300_000)), iotestErrReader{}))
		req.ContentLength = 1 << 20
		_, err := c.Do(req)
		return fmt.Sprintf("refused=%v body error kept=%v", err != nil, errors.Is(err, errBodyBroke))
	}},
	{"307 redirect replays the body (GetBody)", func(t *testing.T, c *http.Client, base string) string {
		return observe(c.Post(base+"/redirect307", "text/plain", strings.NewReader("again")))
	}},
	{"302 redirect with a cookie", func(t *testing.T, c *http.Client, base string) string {
		jar, _ := cookiejar.New(nil)
		cc := *c
		cc.Jar = jar
		return get(&cc, base+"/redirect")
	}},
	{"large Content-Length body", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/big/3000000") }},
	{"large chunked body", func(t *testing.T, c *http.Client, base string) string {
		return get(c, base+"/big/3000000?chunked=1")
	}},
	{"trailers", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/trailers") }},
	{"transparent gzip", func(t *testing.T, c *http.Client, base string) string { return get(c, base+"/gzip") }},
	{"explicit Accept-Encoding is left alone", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("GET", base+"/gzip", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := c.Do(req)
		if err != nil {
			return "error: " + errorKind(err)
		}
		defer resp.Body.Close()
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return "not gzip: " + err.Error()
		}
		b, _ := io.ReadAll(zr)
		return fmt.Sprintf("encoding=%s uncompressed=%v body=%q", resp.Header.Get("Content-Encoding"), resp.Uncompressed, b)
	}},
	{"Expect: 100-continue", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("PUT", base+"/echo", strings.NewReader("after continue"))
		req.Header.Set("Expect", "100-continue")
		return observe(c.Do(req))
	}},
	{"keep-alive reuse", func(t *testing.T, c *http.Client, base string) string {
		var out []string
		for i := 0; i < 5; i++ {
			out = append(out, get(c, base+"/hello"))
		}
		return strings.Join(out, "\n")
	}},
	{"cancel while dialing", func(t *testing.T, c *http.Client, base string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://blackhole.test/", nil)
		return observe(c.Do(req))
	}},
	{"cancel while writing the body", func(t *testing.T, c *http.Client, base string) string {
		ctx, cancel := context.WithCancel(context.Background())
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte("start"))
			time.Sleep(50 * time.Millisecond)
			cancel()
			// Both transports read the body on some goroutine that only
			// the body's own end can wake.
			time.Sleep(50 * time.Millisecond)
			pw.CloseWithError(errors.New("body writer gone"))
		}()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/echo", pr)
		return observe(c.Do(req))
	}},
	{"cancel while waiting for headers", func(t *testing.T, c *http.Client, base string) string {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/slow", nil)
		return observe(c.Do(req))
	}},
	{"cancel while reading the body", func(t *testing.T, c *http.Client, base string) string {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/stall-body", nil)
		resp, err := c.Do(req)
		if err != nil {
			return "error: " + errorKind(err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 4)
		n, err := io.ReadFull(resp.Body, buf)
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err2 := resp.Body.Read(make([]byte, 10))
		return fmt.Sprintf("first=%q %v then %s", buf[:n], err, errorKind(err2))
	}},
	{"client timeout", func(t *testing.T, c *http.Client, base string) string {
		cc := *c
		cc.Timeout = 100 * time.Millisecond
		return get(&cc, base+"/slow")
	}},
	{"connection refused", func(t *testing.T, c *http.Client, base string) string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		return get(c, "http://"+addr+"/")
	}},
	{"invalid header value refused", func(t *testing.T, c *http.Client, base string) string {
		req, _ := http.NewRequest("GET", base+"/echo", nil)
		req.Header.Set("X-Test", "a\r\nInjected: 1")
		_, err := c.Do(req)
		return fmt.Sprintf("refused=%v", err != nil)
	}},
}

// bodyFile returns an open temporary file of n pattern bytes.
func bodyFile(t *testing.T, n int) *os.File {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.Write(pattern(n)); err != nil {
		t.Fatal(err)
	}
	f.Seek(0, io.SeekStart)
	return f
}

var errBodyBroke = errors.New("the body's source broke")

// iotestErrReader fails every read.
type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errBodyBroke }

// blackholeDial blocks until the context ends: a dial that never
// completes, the same for both transports.
func blackholeDial(ctx context.Context, network, addr string) (net.Conn, error) {
	if strings.HasPrefix(addr, "blackhole.test") {
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: network, Err: ctx.Err()}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func TestConformance(t *testing.T) {
	bases := servers(t)
	for srvName, base := range bases {
		for _, sc := range scenarios {
			t.Run(srvName+"/"+sc.name, func(t *testing.T) {
				compareTransports(t, sc, base, &http.Transport{DialContext: blackholeDial}, &client.Transport{DialContext: blackholeDial})
			})
		}
	}
}

// compareTransports runs sc against base through net/http's transport
// (std) and client.Transport (fast), and fails t unless a caller observes
// the same from both. It returns what the fast one observed.
func compareTransports(t *testing.T, sc scenario, base string, std *http.Transport, fast *client.Transport) string {
	t.Helper()
	defer std.CloseIdleConnections()
	defer fast.CloseIdleConnections()
	want := sc.run(t, &http.Client{Transport: std}, base)
	got := sc.run(t, &http.Client{Transport: fast}, base)
	t.Logf("observed: %s", got)
	if got != want {
		t.Errorf("observations differ\nhttp.Transport:   %s\nclient.Transport: %s", want, got)
	}
	return got
}

// TestMalformedResponses: bad responses are errors, never a truncated or
// misread body, for both transports.
func TestMalformedResponses(t *testing.T) {
	cases := []struct {
		name, raw  string
		stdAccepts bool // net/http reads it; client.Transport refuses (stricter)
	}{
		{"garbage", "NOT HTTP AT ALL\r\n\r\n", false},
		// A smuggling shape: net/http lets chunked win; wire refuses both.
		{"length and chunked", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", true},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", false},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", false},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n", false},
		{"obs-fold", "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := rawServer(t, tc.raw)
			for name, mk := range transports() {
				c := &http.Client{Transport: mk()}
				resp, err := c.Get("http://" + addr + "/")
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if want := !(tc.stdAccepts && name == "http.Transport"); want != (err != nil) {
					t.Errorf("%s: error %v for %q, want an error: %v", name, err, tc.raw, want)
				}
			}
		})
	}
}

// rawServer answers every connection's first read with raw and closes it.
func rawServer(t *testing.T, raw string) string {
	return acceptLoop(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		c.Read(buf)
		io.WriteString(c, raw)
	})
}

// acceptLoop listens on loopback and runs serve on each connection in a
// goroutine of its own, closing the connection after it; it returns the
// address. The listener closes when the test ends.
func acceptLoop(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// TestStaleIdleConnectionRetried: a server that closes idle keep-alive
// connections makes the next request fail on the stale one; idempotent
// requests and replayable bodies are retried on a new connection, a POST
// without GetBody is not.
func TestStaleIdleConnectionRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(testMux())
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateIdle:
			c.Close() // close every connection as soon as it goes idle
		}
	}
	srv.Start()
	defer srv.Close()
	tr := &client.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for i := 0; i < 3; i++ {
		if got := get(c, srv.URL+"/hello"); !strings.Contains(got, `body="hello"`) {
			t.Fatalf("request %d: %s", i, got)
		}
		time.Sleep(20 * time.Millisecond) // let the close reach the client
	}
	if n := conns.Load(); n != 3 {
		t.Fatalf("%d connections for 3 requests, want 3", n)
	}
}

// TestStaleConnectionRetryRules: a server answers one request per
// connection with keep-alive, then closes it without a word. The next
// request meets the stale connection. Both transports must agree on what
// is retried (net/http's rule: a replayable request, i.e. idempotent or
// with an idempotency key, with no body or a GetBody; or anything with a
// rewindable body when nothing was written): GET is retried, POST is not.
func TestStaleConnectionRetryRules(t *testing.T) {
	addr := acceptLoop(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		if n, _ := c.Read(buf); n > 0 {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
		time.Sleep(20 * time.Millisecond)
	})
	url := "http://" + addr + "/"
	cases := []struct {
		name string
		do   func(c *http.Client) string
	}{
		{"GET", func(c *http.Client) string { return get(c, url) }},
		{"POST without GetBody", func(c *http.Client) string {
			return observe(c.Post(url, "text/plain", io.NopCloser(strings.NewReader("x"))))
		}},
		{"POST with GetBody", func(c *http.Client) string {
			return observe(c.Post(url, "text/plain", strings.NewReader("x")))
		}},
		{"POST with Idempotency-Key", func(c *http.Client) string {
			req, _ := http.NewRequest("POST", url, strings.NewReader("x"))
			req.Header.Set("Idempotency-Key", "k1")
			return observe(c.Do(req))
		}},
	}
	for _, tc := range cases {
		var seen []string
		for _, tr := range []http.RoundTripper{&http.Transport{}, &client.Transport{}} {
			c := &http.Client{Transport: tr}
			if got := get(c, url); !strings.Contains(got, `body="ok"`) {
				t.Fatalf("priming request: %s", got)
			}
			time.Sleep(60 * time.Millisecond) // the server has closed it by now
			seen = append(seen, tc.do(c))
			c.CloseIdleConnections()
		}
		if seen[0] != seen[1] {
			t.Errorf("%s on a stale connection:\nhttp.Transport:   %s\nclient.Transport: %s", tc.name, seen[0], seen[1])
		}
		if tc.name == "GET" && !strings.Contains(seen[1], `body="ok"`) {
			t.Errorf("GET was not retried: %s", seen[1])
		}
	}
}

// TestNoGoroutineLeak: after CloseIdleConnections no goroutine of the
// transport remains.
func TestNoGoroutineLeak(t *testing.T) {
	bases := servers(t)
	before := countGoroutines()
	tr := &client.Transport{}
	c := &http.Client{Transport: tr}
	for _, base := range bases {
		for i := 0; i < 20; i++ {
			get(c, base+"/hello")
			get(c, base+"/big/100000?chunked=1")
		}
	}
	tr.CloseIdleConnections()
	deadline := time.Now().Add(2 * time.Second)
	for countGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := countGoroutines(); n > before {
		t.Fatalf("%d goroutines after CloseIdleConnections, %d before", n, before)
	}
}

func countGoroutines() int {
	// Settle: give exiting goroutines a moment.
	time.Sleep(5 * time.Millisecond)
	return runtime.NumGoroutine()
}

// TestRawResponsesReadAlike: responses net/http's own servers never send,
// read the same way by both transports.
func TestRawResponsesReadAlike(t *testing.T) {
	for _, raw := range []string{
		"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nok",                                                                               // no reason phrase
		"HTTP/1.1 299 Custom Reason\r\nContent-Length: 2\r\n\r\nok",                                                                 // unregistered code
		"HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Sum: 1\r\n\r\n",                   // trailer announced
		"HTTP/1.0 200 OK\r\n\r\nuntil close",                                                                                        // HTTP/1.0, close-delimited
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", // 1xx skipped
	} {
		addr := rawServer(t, raw)
		var seen []string
		for _, rt := range []http.RoundTripper{&http.Transport{}, &client.Transport{}} {
			seen = append(seen, observe((&http.Client{Transport: rt}).Get("http://"+addr+"/")))
		}
		if seen[0] != seen[1] {
			t.Errorf("%q:\nhttp.Transport:   %s\nclient.Transport: %s", raw, seen[0], seen[1])
		}
	}
}
