package client

// The client against a server that answers anything: whatever bytes come
// back, a request ends with a response or an error (no panic, no hang),
// the body read never returns more than the response declared, and over
// HTTP/1.1, where net/http's own reader reads the same bytes, the two
// never accept one answer as two different responses.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// scriptConn is a connection to a server that sends answer, whatever it
// is asked, once after (at least) waitWrites writes from the client, and
// then ends the connection (EOF). Deadlines are taken and ignored: every
// read ends, with the answer or EOF.
type scriptConn struct {
	mu         sync.Mutex
	cond       sync.Cond
	answer     []byte
	waitWrites int
	writes     int
	closed     bool
}

func newScriptConn(answer []byte, waitWrites int) *scriptConn {
	c := &scriptConn{answer: answer, waitWrites: waitWrites}
	c.cond.L = &c.mu
	return c
}

func (c *scriptConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	c.writes++
	c.cond.Broadcast()
	return len(p), nil
}

func (c *scriptConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.writes < c.waitWrites && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	if len(c.answer) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.answer)
	c.answer = c.answer[n:]
	return n, nil
}

func (c *scriptConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

func (c *scriptConn) LocalAddr() net.Addr                { return scriptAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr               { return scriptAddr{} }
func (c *scriptConn) SetDeadline(t time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(t time.Time) error { return nil }

type scriptAddr struct{}

func (scriptAddr) Network() string { return "tcp" }
func (scriptAddr) String() string  { return "127.0.0.1:80" }

// fuzzBodyCap bounds what a fuzz case reads of a body.
const fuzzBodyCap = 1 << 20

// readCapped reads at most fuzzBodyCap bytes of body.
func readCapped(body io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(body, fuzzBodyCap))
}

// checkFuzzResponse reads resp's body (up to fuzzBodyCap) and closes it,
// failing t for a final status out of range or a body that reads without
// error to another length than the one declared. It returns the body and
// the read's error.
func checkFuzzResponse(t *testing.T, resp *http.Response, head bool) ([]byte, error) {
	t.Helper()
	if resp.StatusCode < 200 && resp.StatusCode != 101 || resp.StatusCode > 999 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	body, err := readCapped(resp.Body)
	resp.Body.Close()
	if err == nil && !head && resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength && len(body) < fuzzBodyCap {
		t.Fatalf("read %d body bytes without error, Content-Length %d", len(body), resp.ContentLength)
	}
	return body, err
}

// FuzzClientHTTP1: a GET or HEAD answered with the fuzz bytes over
// HTTP/1.1. When net/http's http.ReadResponse also reads a whole response
// from the same bytes, both must agree on its status and body.
func FuzzClientHTTP1(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 301 Moved\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n",
		"HTTP/1.1 200\nContent-Length: 1\n\nx",
		"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n",
		"HTTP/2.0 200 OK\r\n\r\n",
		"\r\n\r\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), true)
	f.Fuzz(func(t *testing.T, answer []byte, head bool) {
		tr := &Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				return newScriptConn(bytes.Clone(answer), 1), nil
			},
			DisableCompression: true, // the same bytes for both readers
		}
		defer tr.CloseIdleConnections()
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		req, _ := http.NewRequest(method, "http://fuzz.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return
		}
		body, berr := checkFuzzResponse(t, resp, head)

		// net/http's reader on the same bytes: skip 1xx heads as its
		// transport does.
		br := bufio.NewReader(bytes.NewReader(answer))
		var want *http.Response
		for {
			r, err := http.ReadResponse(br, req)
			if err != nil {
				return
			}
			if r.StatusCode >= 200 || r.StatusCode == 101 {
				want = r
				break
			}
		}
		wantBody, werr := readCapped(want.Body)
		if berr != nil || werr != nil {
			return // one of them refused the body: no answer to compare
		}
		if want.StatusCode != resp.StatusCode {
			t.Fatalf("status %d, net/http read %d", resp.StatusCode, want.StatusCode)
		}
		if !bytes.Equal(body, wantBody) {
			t.Fatalf("body %q, net/http read %q", body, wantBody)
		}
	})
}

// FuzzClientH2: a GET over h2c (prior knowledge) answered, once the
// request is sent, with the server's SETTINGS and then the fuzz bytes as
// frames, then EOF. The request ends with a response or an error, its
// body's read ends, and the connection's goroutine ends once the
// transport closes its connections.
func FuzzClientH2(f *testing.F) {
	var enc h2.Encoder
	block := func(fields ...string) []byte {
		b := enc.StartBlock(nil)
		for i := 0; i+1 < len(fields); i += 2 {
			b = enc.AppendField(b, fields[i], fields[i+1])
		}
		return b
	}
	ok := block(":status", "200", "content-type", "text/plain", "content-length", "5")
	add := func(frames ...[]byte) {
		f.Add(bytes.Join(frames, nil))
	}
	add(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, ok, 0), h2.AppendData(nil, 1, h2.FlagEndStream, []byte("hello"), 0))
	add(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, block(":status", "204"), 0))
	add(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, block(":status", "100"), 0),
		h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, block(":status", "200"), 0),
		h2.AppendData(nil, 1, 0, []byte("abc"), 3),
		h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, block("x-trailer", "1"), 0))
	add(h2.AppendHeaders(nil, 1, 0, h2.Priority{}, ok[:2], 0), h2.AppendContinuation(nil, 1, h2.FlagEndHeaders, ok[2:]),
		h2.AppendData(nil, 1, h2.FlagEndStream, []byte("hello"), 0))
	add(h2.AppendGoAway(nil, 0, h2.ErrCodeNo, nil))
	add(h2.AppendRSTStream(nil, 1, h2.ErrCodeRefusedStream))
	add(h2.AppendPing(nil, 0, [8]byte{1}), h2.AppendWindowUpdate(nil, 0, 1<<20), h2.AppendSettings(nil, h2.Setting{ID: h2.SettingMaxFrameSize, Val: 1 << 20}))
	add(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, ok, 0), h2.AppendData(nil, 1, h2.FlagEndStream, []byte("hello, too long"), 0))
	add(h2.AppendHeaders(nil, 3, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, ok, 0))
	f.Fuzz(func(t *testing.T, frames []byte) {
		answer := append(h2.AppendSettings(nil), frames...)
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		tr := &Transport{
			Protocols: p,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				// Answer after the preface and the request's HEADERS.
				return newScriptConn(bytes.Clone(answer), 2), nil
			},
			Timeout: 10 * time.Second, // a hang fails the case, not the fuzzer
		}
		defer tr.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodGet, "http://fuzz.test/", nil)
		resp, err := tr.RoundTrip(req)
		if errors.Is(err, errRequestTimeout) {
			t.Fatal("the request waited for its deadline though the connection had ended")
		}
		if err != nil {
			return
		}
		if _, berr := checkFuzzResponse(t, resp, false); errors.Is(berr, errRequestTimeout) {
			t.Fatal("the body read waited for its deadline though the connection had ended")
		}
	})
}

// The fuzz targets' harness works: a well-formed answer through it is a
// response with its body, over HTTP/1.1 and HTTP/2, so the targets' checks
// run on what the fuzzer makes of it rather than on errors alone.
func TestScriptConnAnswers(t *testing.T) {
	h1 := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return newScriptConn([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), 1), nil
	}}
	var enc h2.Encoder
	blk := enc.AppendField(enc.StartBlock(nil), ":status", "200")
	answer := h2.AppendSettings(nil)
	answer = h2.AppendHeaders(answer, 1, h2.FlagEndHeaders, h2.Priority{}, blk, 0)
	answer = h2.AppendData(answer, 1, h2.FlagEndStream, []byte("hello"), 0)
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	h2c := &Transport{Protocols: p, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return newScriptConn(bytes.Clone(answer), 2), nil
	}}
	for name, tr := range map[string]*Transport{"http1": h1, "h2c": h2c} {
		req, _ := http.NewRequest(http.MethodGet, "http://fuzz.test/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "hello" || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %q %v, want 200 \"hello\"", name, resp.StatusCode, body, err)
		}
		tr.CloseIdleConnections()
	}
}
