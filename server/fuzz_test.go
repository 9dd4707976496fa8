package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/vectors"
	"github.com/hotpathhq/hotpath/wire"
)

// FuzzServerConn feeds random bytes, in random read sizes, to a live
// connection of the engine (an in-memory conn), on the native API and
// through the http.Handler adapter. It checks what must hold for any
// input: no panic; the connection ends by itself once the input does (no
// hang); bounded output; the output is a sequence of well-formed
// responses, never more final responses than the input has version
// strings, plus one error response (a desync would answer more).
func FuzzServerConn(f *testing.F) {
	for i, v := range vectors.Requests {
		if i%4 == 0 { // a sample of every kind; the fuzzer mutates from there
			f.Add([]byte(v.Raw), uint8(i), i%8 == 0)
		}
	}
	f.Add([]byte("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"), uint8(3), true)
	f.Add([]byte(priPreface+"SM\r\n\r\n"), uint8(0), true)
	f.Add([]byte("PUT / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.0\r\n\r\n"), uint8(0), false)
	var handled int
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled++
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %d %v", r.Method, r.URL.Path, len(b), err)
	})
	native := func(c *Ctx) {
		handled++
		n, err := io.Copy(io.Discard, c.Body())
		fmt.Fprintf(c, "%s %s %d %v", c.Method(), c.Path(), n, err)
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8, handlerAPI bool) {
		fc := &fakeConn{input: data, repeat: 1, readSize: int(split % 64), keep: true}
		s := &Server{ErrorLog: discardLog, MaxRequestBodyBytes: 64 << 10}
		if handlerAPI {
			s.Handler = echo
		} else {
			s.Native = native
		}
		handled = 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			serveFake(s, fc)
		}()
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			t.Fatalf("the connection did not end after its input did: %q", data)
		}
		if want := framedRequests(data, s); handled != want {
			t.Fatalf("the handler ran %d times, wire frames %d requests\ninput %q\noutput %q", handled, want, data, fc.out)
		}
		if len(fc.out) > 16*len(data)+64<<10 {
			t.Fatalf("%d bytes of output for %d of input", len(fc.out), len(data))
		}
		if bytes.Contains(bytes.ToUpper(data), []byte("HEAD")) {
			return // a HEAD response's length cannot be told without its request
		}
		br := bufio.NewReader(bytes.NewReader(fc.out))
		finals := 0
		for {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
			if err != nil {
				t.Fatalf("unparsable response after %d: %v\ninput %q\noutput %q", finals, err, data, fc.out)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil && resp.ContentLength >= 0 {
				t.Fatalf("response body: %v\ninput %q\noutput %q", err, data, fc.out)
			}
			if resp.StatusCode >= 200 {
				finals++
			}
		}
		if max := bytes.Count(data, []byte("HTTP/")) + 1; finals > max {
			t.Fatalf("%d final responses to an input with %d version strings\ninput %q\noutput %q", finals, max-1, data, fc.out)
		}
	})
}

// framedRequests is how many requests a handler must see for input, as
// wire's parser frames it: heads parsed in sequence, each followed by its
// whole body, until an error, an incomplete message, a body over the
// limit or a request that closes the connection. OPTIONS * is answered
// by the server itself.
func framedRequests(data []byte, s *Server) int {
	lim := s.cfg.limits
	var req wire.Request
	count := 0
	if s.Handler != nil && bytes.HasPrefix(data, []byte(priPreface)) {
		return 1 // an http.Handler gets HTTP/2's preface as "PRI *", then the connection closes
	}
	for {
		n, err := req.Parse(data, &lim)
		if err != nil {
			return count
		}
		if lim.MaxBodyBytes >= 0 && req.ContentLength > lim.MaxBodyBytes {
			return count // 413 before the handler
		}
		if !(string(req.Method) == "OPTIONS" && string(req.Target) == "*") {
			count++
		}
		data = data[n:]
		if req.Chunked {
			var d wire.ChunkedDecoder
			d.MaxTrailerBytes = wire.DefaultMaxTrailerBytes
			var total int64
			for {
				chunk, used, err := d.Decode(data)
				data = data[used:]
				total += int64(len(chunk))
				if err == io.EOF {
					break
				}
				if err != nil || total > lim.MaxBodyBytes {
					return count
				}
			}
		} else {
			if int64(len(data)) < req.ContentLength {
				return count
			}
			data = data[req.ContentLength:]
		}
		if req.Close {
			return count
		}
	}
}
