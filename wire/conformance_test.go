package wire_test

// Conformance: every vector of internal/vectors through wire, with
// net/http reading the same bytes as the oracle.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/vectors"
	"github.com/hotpathhq/hotpath/wire"
)

// checkVerdict checks wire's answer against the vector's Status.
func checkVerdict(v vectors.Request, n int, err error) error {
	if err != nil && n != 0 {
		return fmt.Errorf("Parse returned n=%d with error %v", n, err)
	}
	if n < 0 || n > len(v.Raw) {
		return fmt.Errorf("Parse returned n=%d for %d bytes", n, len(v.Raw))
	}
	switch v.Status {
	case 0:
		if err != nil {
			return fmt.Errorf("rejected (%v), want accepted", err)
		}
	case vectors.Incomplete:
		if err != wire.ErrNeedMore {
			return fmt.Errorf("got %v, want ErrNeedMore", err)
		}
	default:
		var we *wire.Error
		if !errors.As(err, &we) {
			return fmt.Errorf("got %v, want a *wire.Error with status %d", err, v.Status)
		}
		if we.Status != v.Status {
			return fmt.Errorf("status %d (%s), want %d", we.Status, we.Reason, v.Status)
		}
	}
	return nil
}

func TestRequestVectors(t *testing.T) {
	names := map[string]bool{}
	for _, v := range vectors.Requests {
		if names[v.Name] {
			t.Errorf("duplicate vector name %q", v.Name)
		}
		names[v.Name] = true
		t.Run(v.Name, func(t *testing.T) {
			raw := []byte(v.Raw)
			wr, n, err := parse(raw)
			if err := checkVerdict(v, n, err); err != nil {
				t.Fatal(err)
			}

			if err := checkAgainstNetHTTP(raw, wr, n, err); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRequestVectorsPrefixes delivers every vector as a socket would, in
// growing prefixes: byte by byte for the accepted ones. Parse must answer
// ErrNeedMore until the answer for the whole input appears, and that
// answer after.
func TestRequestVectorsPrefixes(t *testing.T) {
	for _, v := range vectors.Requests {
		t.Run(v.Name, func(t *testing.T) {
			raw := []byte(v.Raw)
			want, n, err := parse(raw)
			if err != nil {
				if err := checkPrefixes(raw, n, err); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i := 0; i <= len(raw); i++ {
				got, m, errm := parse(raw[:i])
				switch {
				case i < n && errm != wire.ErrNeedMore:
					t.Fatalf("prefix %d of a %d-byte head: %d, %v; want ErrNeedMore", i, n, m, errm)
				case i >= n && (errm != nil || m != n):
					t.Fatalf("prefix %d: %d, %v; want %d, nil", i, m, errm, n)
				case i >= n && summary(got) != summary(want):
					t.Fatalf("prefix %d parsed as\n%s\nwhole input as\n%s", i, summary(got), summary(want))
				}
			}
		})
	}
}

// summary prints what Parse found, for comparisons.
func summary(r *wire.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %q minor=%d host=%q cl=%d chunked=%v close=%v expect100=%v upgrade=%v\n",
		r.Method, r.Target, r.Proto, r.ProtoMinor, r.Host, r.ContentLength, r.Chunked, r.Close, r.Expect100, r.Upgrade)
	for _, h := range r.Headers {
		fmt.Fprintf(&b, "%q: %q\n", h.Name, h.Value)
	}
	return b.String()
}

// acceptedWhereNetHTTPRejects lists the vectors wire accepts and a net/http
// server refuses, with the reason. Every other difference between the two
// goes the other way: wire stricter.
var acceptedWhereNetHTTPRejects = map[string]string{
	"lines/leading-CRLF":   "RFC 9112 §2.2: ignore empty lines before a request line",
	"lines/leading-LF":     "RFC 9112 §2.2",
	"lines/leading-8-CRLF": "RFC 9112 §2.2",
}

// TestRequestVectorsNetHTTPServer sends every vector to a net/http server
// and compares its status with the vector's: a difference must be
// explained in the vector's Note, and a head wire accepts must be one
// net/http accepts, but for the few listed above.
func TestRequestVectorsNetHTTPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a net/http server per vector")
	}
	for _, v := range vectors.Requests {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			got := netHTTPServerStatus(t, v.Raw)
			want := v.Status
			switch want {
			case 0:
				want = 200
			case vectors.Incomplete:
				want = 0 // no response
			}
			if got == want || v.Status == vectors.Incomplete && got == 400 {
				return
			}
			t.Logf("net/http %d, hotpath %d: %s", got, want, v.Note)
			if v.Note == "" {
				t.Errorf("net/http answers %d, hotpath %d, and the vector's Note does not say why", got, want)
			}
			if want == 200 && acceptedWhereNetHTTPRejects[v.Name] == "" {
				t.Errorf("hotpath accepts what net/http refuses (%d)", got)
			}
		})
	}
}

// netHTTPServerStatus serves raw, then EOF, to a net/http server over an
// in-memory connection and returns the status of its first response, or 0
// when it closes without one.
func netHTTPServerStatus(t *testing.T, raw string) int {
	conn := &memConn{in: strings.NewReader(raw), closed: make(chan struct{})}
	ln := &oneConnListener{conn: conn, done: make(chan struct{})}
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.Serve(ln)
	select {
	case <-conn.closed:
	case <-time.After(20 * time.Second):
		t.Fatal("net/http server did not close the connection")
	}
	srv.Close()
	out := conn.output()
	if len(out) == 0 {
		return 0
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
	if err != nil {
		t.Fatalf("net/http server wrote %q: %v", out, err)
	}
	return res.StatusCode
}

// memConn is a net.Conn that reads a fixed input and records what is
// written to it.
type memConn struct {
	mu     sync.Mutex
	in     *strings.Reader
	out    bytes.Buffer
	once   sync.Once
	closed chan struct{}
}

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.in.Read(p)
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

func (c *memConn) output() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.out.Bytes())
}

func (c *memConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// oneConnListener hands out one connection, then waits to be closed.
type oneConnListener struct {
	mu   sync.Mutex
	conn net.Conn
	done chan struct{}
	once sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	c := l.conn
	l.conn = nil
	l.mu.Unlock()
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return memAddr{} }

// TestLimits checks each limit at its boundary, for the defaults and for
// small custom limits, and that a limit is reported as soon as the input
// passes it rather than when the line ends.
func TestLimits(t *testing.T) {
	type tc struct {
		name string
		lim  wire.Limits
		raw  string
		want error // nil: accepted
	}
	host := "Host: h\r\n"
	line := func(n int) string { // a request line of n bytes
		return "GET /" + strings.Repeat("a", n-len("GET / HTTP/1.1")) + " HTTP/1.1"
	}
	// head returns a head of exactly n bytes: request line, Host, one
	// filler field, the empty line.
	head := func(n int, eol string) string {
		fixed := "GET / HTTP/1.1" + eol + "Host: h" + eol + "X: " + eol + eol
		return "GET / HTTP/1.1" + eol + "Host: h" + eol + "X: " + strings.Repeat("x", n-len(fixed)) + eol + eol
	}
	fields := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "F%d: v\r\n", i)
		}
		return b.String()
	}
	small := wire.Limits{MaxRequestLineBytes: 32, MaxHeaderBytes: 96, MaxHeaders: 3, MaxBodyBytes: 10}
	def := wire.DefaultLimits()
	tests := []tc{
		{"default/line-at-limit", def, line(8<<10) + "\r\n" + host + "\r\n", nil},
		{"default/line-over", def, line(8<<10+1) + "\r\n" + host + "\r\n", wire.ErrRequestLineTooLong},
		{"default/line-over-unterminated", def, line(8<<10 + 1), wire.ErrRequestLineTooLong},
		{"default/head-at-limit", def, head(64<<10, "\r\n"), nil},
		{"default/head-over", def, head(64<<10+1, "\r\n"), wire.ErrHeaderTooLarge},
		{"default/head-at-limit-LF", def, head(64<<10, "\n"), nil},
		{"default/head-over-LF", def, head(64<<10+1, "\n"), wire.ErrHeaderTooLarge},
		{"default/500-fields", def, "GET / HTTP/1.1\r\n" + host + fields(499) + "\r\n", nil},
		{"default/501-fields", def, "GET / HTTP/1.1\r\n" + host + fields(500) + "\r\n", wire.ErrTooManyHeaders},
		{"default/body-at-limit", def, "POST / HTTP/1.1\r\n" + host + "Content-Length: 4194304\r\n\r\n", nil},
		{"default/body-over", def, "POST / HTTP/1.1\r\n" + host + "Content-Length: 4194305\r\n\r\n", wire.ErrBodyTooLarge},
		{"small/line-at-limit", small, line(32) + "\r\n" + host + "\r\n", nil},
		{"small/line-at-limit-LF", small, line(32) + "\n" + host + "\n", nil},
		{"small/line-over", small, line(33) + "\r\n" + host + "\r\n", wire.ErrRequestLineTooLong},
		{"small/line-over-unterminated", small, line(33), wire.ErrRequestLineTooLong},
		{"small/line-at-limit-then-CR", small, line(32) + "\r", wire.ErrNeedMore},
		{"small/head-at-limit", small, head(96, "\r\n"), nil},
		{"small/head-over", small, head(97, "\r\n"), wire.ErrHeaderTooLarge},
		{"small/head-over-by-2", small, head(98, "\r\n"), wire.ErrHeaderTooLarge},
		{"small/head-over-unterminated", small, head(200, "\r\n")[:150], wire.ErrHeaderTooLarge},
		{"small/3-fields", small, "GET / HTTP/1.1\r\n" + host + fields(2) + "\r\n", nil},
		{"small/4-fields", small, "GET / HTTP/1.1\r\n" + host + fields(3) + "\r\n", wire.ErrTooManyHeaders},
		{"small/body-at-limit", small, "POST / HTTP/1.1\r\n" + host + "Content-Length: 10\r\n\r\n", nil},
		{"small/body-over", small, "POST / HTTP/1.1\r\n" + host + "Content-Length: 11\r\n\r\n", wire.ErrBodyTooLarge},
		{"small/chunked-not-capped-here", small, "POST / HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n", nil},
		{"no-body-limit", wire.Limits{MaxBodyBytes: -1}.WithDefaults(),
			"POST / HTTP/1.1\r\n" + host + "Content-Length: 999999999999999999\r\n\r\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim.WithDefaults()
			var r wire.Request
			n, err := r.Parse([]byte(tt.raw), &lim)
			if err != tt.want {
				t.Fatalf("Parse = %d, %v; want %v", n, err, tt.want)
			}
			if err == nil && n != len(tt.raw) {
				t.Fatalf("head of %d bytes, want %d", n, len(tt.raw))
			}
			var we *wire.Error
			if errors.As(err, &we) && we.Status != map[error]int{
				wire.ErrRequestLineTooLong: 414, wire.ErrHeaderTooLarge: 431,
				wire.ErrTooManyHeaders: 431, wire.ErrBodyTooLarge: 413,
			}[err] {
				t.Fatalf("status %d", we.Status)
			}
		})
	}
}

func TestChunkVectors(t *testing.T) {
	names := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range vectors.Chunks {
		if names[v.Name] {
			t.Errorf("duplicate vector name %q", v.Name)
		}
		names[v.Name] = true
		t.Run(v.Name, func(t *testing.T) {
			raw := []byte(v.Raw)
			var d wire.ChunkedDecoder
			body, used, err := decodeStream(&d, [][]byte{raw})
			var we *wire.Error
			switch {
			case v.Err:
				if !errors.As(err, &we) {
					t.Fatalf("got %v after %q, want a *wire.Error", err, body)
				}
			case v.Incomplete:
				if err != wire.ErrNeedMore {
					t.Fatalf("got %v, want ErrNeedMore", err)
				}
				if string(body) != v.Body {
					t.Fatalf("body %q, want %q", body, v.Body)
				}
			default:
				if err != io.EOF || used != len(raw) || !d.Done() {
					t.Fatalf("got %v after %d of %d bytes (done=%v), want io.EOF at the end", err, used, len(raw), d.Done())
				}
				if string(body) != v.Body {
					t.Fatalf("body %q, want %q", trunc(body), trunc([]byte(v.Body)))
				}
			}

			// The same answer whatever way the input is split: byte by
			// byte, and at random.
			splits := [][][]byte{bytewise(raw)}
			for range 4 {
				var cuts []int
				for i := range raw {
					if rng.IntN(8) == 0 {
						cuts = append(cuts, i)
					}
				}
				splits = append(splits, splitAt(raw, cuts))
			}
			for _, pieces := range splits {
				var d2 wire.ChunkedDecoder
				b2, u2, e2 := decodeStream(&d2, pieces)
				if e2 != err || u2 != used || !bytes.Equal(b2, body) {
					t.Fatalf("in %d pieces: %v after %d bytes; whole: %v after %d bytes", len(pieces), e2, u2, err, used)
				}
			}

			// net/http as the oracle: its chunked reader (which stops at
			// the last-chunk line) and a whole chunked request.
			cb, cerr := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(raw)))
			hb, hused, herr := netHTTPChunked(raw)
			switch {
			case err == io.EOF:
				if cerr != nil || !bytes.Equal(cb, body) {
					t.Fatalf("wire decodes %q, net/http's chunked reader %q, %v", trunc(body), trunc(cb), cerr)
				}
				if herr != nil || !bytes.Equal(hb, body) || hused != used {
					t.Fatalf("wire decodes %d bytes of %d, net/http %d bytes of %d, %v", len(body), used, len(hb), hused, herr)
				}
			case herr == nil && v.Note == "":
				t.Fatalf("wire refuses (%v), net/http reads %q; say why in the vector's Note", err, trunc(hb))
			}
		})
	}
}

func trunc(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q...(%d bytes)", b[:64], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// TestVectorsCounts logs how many vectors each source contributes.
func TestVectorsCounts(t *testing.T) {
	count := map[string]int{}
	for _, v := range vectors.Requests {
		count["request: "+v.Source]++
	}
	for _, v := range vectors.Chunks {
		count["chunked: "+v.Source]++
	}
	for k, n := range count {
		t.Logf("%4d %s", n, k)
	}
	if len(vectors.Requests) < 100 || len(vectors.Chunks) < 50 {
		t.Errorf("tables shrank: %d requests, %d chunked", len(vectors.Requests), len(vectors.Chunks))
	}
}
