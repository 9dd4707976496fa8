package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/vectors"
	"github.com/hotpathhq/hotpath/wire"
)

// echoHead answers with what the server understood of the request, in a
// form the test can rebuild from the vector independently.
func echoHead(c *Ctx) {
	body, err := c.ReadBody(nil)
	if err != nil {
		return // the server answers the body error itself
	}
	// In a header, so HEAD requests are echoed too.
	c.SetHeader("X-Echo", fmt.Sprintf("%s|%s|%s|%s|%d|%q", c.Method(), c.Target(), c.Proto(), c.Host(), len(c.Request().Headers), body))
}

// expectedEcho rebuilds echoHead's answer for an accepted vector: the head
// from wire.Parse (checked against net/http in the wire tests) and the
// body from http.ReadRequest.
func expectedEcho(t *testing.T, raw string) string {
	t.Helper()
	var req wire.Request
	lim := wire.DefaultLimits()
	if _, err := req.Parse([]byte(raw), &lim); err != nil {
		t.Fatalf("wire rejects a vector marked valid: %v", err)
	}
	body := ""
	if hr, err := http.ReadRequest(bufio.NewReader(strings.NewReader(strings.TrimLeft(raw, "\r\n")))); err == nil {
		b, _ := io.ReadAll(hr.Body)
		body = string(b)
	}
	return fmt.Sprintf("%s|%s|%s|%s|%d|%q", req.Method, req.Target, req.Proto, req.Host, len(req.Headers), body)
}

// TestConformanceVectorsOverTCP sends every conformance vector to a live
// server and checks the verdict: accepted vectors are echoed exactly as
// parsed, rejected ones get their status, a reason and a closed connection.
//
// Modes: HTTP/1.1, raw bytes: the vectors are HTTP/1.1 request heads
// (internal/vectors).
func TestConformanceVectorsOverTCP(t *testing.T) {
	addr := startServer(t, &Server{Native: echoHead})
	for _, v := range vectors.Requests {
		t.Run(v.Name, func(t *testing.T) {
			nc := dial(t, addr)
			io.WriteString(nc, withFullBody(v.Raw))
			nc.(*net.TCPConn).CloseWrite()
			all, err := io.ReadAll(nc)
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			switch {
			case v.Status == vectors.Incomplete:
				if len(all) != 0 {
					t.Fatalf("cut-short request answered: %q", all)
				}
				return
			case len(all) == 0:
				t.Fatalf("no response (want %d); %s", v.Status, v.Note)
			}
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
			if err != nil {
				t.Fatalf("unparsable response %q: %v", all, err)
			}
			body, _ := io.ReadAll(resp.Body)
			if v.Status != 0 {
				if resp.StatusCode != v.Status || !resp.Close {
					t.Fatalf("got %d close=%v (%q), want %d and close; %s", resp.StatusCode, resp.Close, body, v.Status, v.Note)
				}
				return
			}
			if resp.StatusCode != 200 {
				t.Fatalf("valid request answered %d: %q", resp.StatusCode, body)
			}
			if strings.HasPrefix(v.Raw, "OPTIONS * ") {
				if resp.ContentLength != 0 || resp.Header.Get("X-Echo") != "" {
					t.Fatalf("OPTIONS * reached the handler, or got a body: %q", all)
				}
				return // answered by the server, as net/http does
			}
			if got, want := resp.Header.Get("X-Echo"), expectedEcho(t, withFullBody(v.Raw)); got != want {
				t.Fatalf("server understood\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestConformanceOneBytePerRead delivers every accepted vector one byte
// per read, then the same vector whole, on one connection: both must be
// understood identically.
func TestConformanceOneBytePerRead(t *testing.T) {
	for _, v := range vectors.Requests {
		if v.Status != 0 {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			whole := &fakeConn{input: []byte(v.Raw), repeat: 1, keep: true}
			serveFake(&Server{Native: echoHead}, whole)
			trickled := &fakeConn{input: []byte(v.Raw), repeat: 1, readSize: 1, keep: true}
			serveFake(&Server{Native: echoHead}, trickled)
			if got, want := bodyOf(t, trickled.out), bodyOf(t, whole.out); got != want {
				t.Fatalf("one byte per read:\n%s\nwhole:\n%s", got, want)
			}
		})
	}
}

func bodyOf(t *testing.T, out []byte) string {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(out))
	resp, err := http.ReadResponse(br, nil)
	for err == nil && resp.StatusCode == 100 { // an interim 100 Continue
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		t.Fatalf("response %q: %v", out, err)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("X-Echo"))
}

// withFullBody pads a vector whose head declares more body than it
// carries (the limit vectors), so the exchange can complete.
func withFullBody(raw string) string {
	var req wire.Request
	lim := wire.DefaultLimits()
	n, err := req.Parse([]byte(raw), &lim)
	if err != nil || req.Chunked {
		return raw
	}
	if missing := req.ContentLength - int64(len(raw)-n); missing > 0 {
		return raw + strings.Repeat("x", int(missing))
	}
	return raw
}

// TestTrickledOverTCP writes a request one byte per write with the
// connection's Nagle algorithm off, the way a fragmenting middlebox or an
// attacker would.
//
// Modes: HTTP/1.1, raw bytes: a head fragmented a byte per write.
func TestTrickledOverTCP(t *testing.T) {
	addr := startServer(t, &Server{Native: echoHead})
	nc := dial(t, addr)
	raw := "POST /trickle?x=1 HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
	for i := 0; i < len(raw); i++ {
		if _, err := nc.Write([]byte{raw[i]}); err != nil {
			t.Fatal(err)
		}
		if i%8 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	resp, _ := readResponse(t, bufio.NewReader(nc), "POST")
	if got, want := resp.Header.Get("X-Echo"), expectedEcho(t, raw); resp.StatusCode != 200 || got != want {
		t.Fatalf("got %d %q, want %q", resp.StatusCode, got, want)
	}
}
