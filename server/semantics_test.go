package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response semantics, each on every mode it applies to (modes_test.go):
// what a handler does and what the client then sees must not depend on
// the protocol, the engine or the API.

// A Write past the declared Content-Length fails and sends nothing of it:
// the client reads exactly the declared body. On the handler API the
// error is net/http's http.ErrContentLength.
func TestSemWritePastDeclaredLength(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		errs := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
			_, err := io.WriteString(w, " world")
			errs <- err
		})
		nh := func(c *Ctx) {
			c.SetContentLength(5)
			c.WriteString("hello")
			_, err := c.WriteString(" world")
			errs <- err
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if string(body) != "hello" || resp.ContentLength != 5 {
			t.Errorf("body %q with Content-Length %d, want hello with 5", body, resp.ContentLength)
		}
		err := <-errs
		if err == nil {
			t.Fatal("a Write past the declared length succeeded")
		}
		if !m.native && !errors.Is(err, http.ErrContentLength) {
			t.Errorf("Write past the length: %v, want http.ErrContentLength", err)
		}
	})
}

// A handler that writes less than it declared and returns leaves a body
// the client cannot take for complete: its read ends in an error.
func TestSemWriteShortOfDeclaredLength(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "hello")
		})
		nh := func(c *Ctx) {
			c.SetContentLength(10)
			c.WriteString("hello")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, err := c.Do(mustRequest(t, "GET", base+"/"))
		if err != nil {
			return // refused before the head: nothing looks complete either
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil {
			t.Errorf("a 10-byte response cut at %q read as complete", b)
		}
	})
}

// Without a declared length, a body the handler finishes gets an exact
// Content-Length; one the handler streams past the buffer arrives whole.
func TestSemComputedLengthAndStreamedBody(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 8<<10) // 128 KiB, past every collection buffer
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/big" {
				io.WriteString(w, big)
				return
			}
			io.WriteString(w, "hello")
		})
		nh := func(c *Ctx) {
			if string(c.Path()) == "/big" {
				c.WriteString(big)
				return
			}
			c.WriteString("hello")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if string(body) != "hello" || resp.ContentLength != 5 {
			t.Errorf("small body %q, Content-Length %d; want hello, 5", body, resp.ContentLength)
		}
		_, body = mustDo(t, c, mustRequest(t, "GET", base+"/big"))
		if string(body) != big {
			t.Errorf("streamed body: %d bytes, want %d", len(body), len(big))
		}
	})
}

// Status, header fields and body arrive as the handler set them.
func TestSemStatusAndFields(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Answer", "42")
			w.Header().Add("X-Many", "a")
			w.Header().Add("X-Many", "b")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "made")
		})
		nh := func(c *Ctx) {
			c.SetHeader("X-Answer", "42")
			c.AddHeader("X-Many", "a")
			c.AddHeader("X-Many", "b")
			c.SetStatus(http.StatusCreated)
			c.WriteString("made")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if resp.StatusCode != 201 || string(body) != "made" || resp.Header.Get("X-Answer") != "42" ||
			strings.Join(resp.Header.Values("X-Many"), ",") != "a,b" {
			t.Errorf("got %d %q %v", resp.StatusCode, body, resp.Header)
		}
	})
}

// A request field whose value starts or ends with whitespace, which Go's
// own client sends as given, is answered on every mode. (On HTTP/2,
// §8.2.1 calls such a request malformed; refused with a stream reset, it
// sent net/http's client into reconnecting without end, since it retries
// a PROTOCOL_ERROR reset on a new connection. net/http's server accepts
// it; HTTP/1.1 trims the whitespace as optional.)
func TestSemPaddedFieldValueAnswered(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, strings.TrimSpace(r.Header.Get("X-Pad")))
		})
		nh := func(c *Ctx) { c.Write(bytes.TrimSpace(c.Header("X-Pad"))) }
		base, c := m.serve(t, &Server{}, h, nh)
		req := mustRequest(t, "GET", base+"/")
		req.Header.Set("X-Pad", "  padded\t")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, body := mustDo(t, c, req.WithContext(ctx))
		if resp.StatusCode != 200 || string(body) != "padded" {
			t.Errorf("got %d %q, want 200 padded", resp.StatusCode, body)
		}
	})
}

// A HEAD response carries the GET's Content-Length and no body.
func TestSemHeadHasLengthNoBody(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
		nh := func(c *Ctx) { c.WriteString("hello") }
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "HEAD", base+"/"))
		if len(body) != 0 || resp.ContentLength != 5 {
			t.Errorf("HEAD: body %q, Content-Length %d; want none, 5", body, resp.ContentLength)
		}
	})
}

// Trailers announced before the body arrive after it: on the handler API
// declared in the Trailer header or set with http.TrailerPrefix, on the
// native API with SetTrailer.
func TestSemTrailers(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Sum")
			io.WriteString(w, "body")
			w.Header().Set("X-Sum", "42")
			w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
		})
		nh := func(c *Ctx) {
			c.SetTrailer("X-Sum", "42")
			c.SetTrailer("X-Late", "yes")
			c.WriteString("body")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if string(body) != "body" || resp.Trailer.Get("X-Sum") != "42" || resp.Trailer.Get("X-Late") != "yes" {
			t.Errorf("body %q, trailers %v; want body, X-Sum: 42, X-Late: yes", body, resp.Trailer)
		}
	})
}

// A 103 Early Hints goes out before the final response, with its fields.
func TestSemEarlyHints(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			io.WriteString(w, "page")
		})
		base, c := m.serve(t, &Server{}, h, nil)
		var hints []string
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, hdr textproto.MIMEHeader) error {
			hints = append(hints, fmt.Sprint(code, " ", hdr.Get("Link")))
			return nil
		}}
		req := mustRequest(t, "GET", base+"/").WithContext(httptrace.WithClientTrace(context.Background(), trace))
		resp, body := mustDo(t, c, req)
		if len(hints) != 1 || hints[0] != "103 </style.css>; rel=preload" || string(body) != "page" || resp.Header.Get("Link") != "" {
			t.Errorf("hints %q, final %d %q Link=%q", hints, resp.StatusCode, body, resp.Header.Get("Link"))
		}
	}, handlerModes()...)
}

// A flushed part reaches the client while the handler still runs.
func TestSemFlushStreams(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		seen := make(chan struct{})
		wait := func() {
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
			}
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first;")
			w.(http.Flusher).Flush()
			wait()
			io.WriteString(w, "second")
		})
		nh := func(c *Ctx) {
			c.WriteString("first;")
			c.Flush()
			wait()
			c.WriteString("second")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, err := c.Do(mustRequest(t, "GET", base+"/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		first, err := br.ReadString(';')
		close(seen)
		if err != nil || first != "first;" {
			t.Fatalf("before the handler went on: %q, %v", first, err)
		}
		rest, err := io.ReadAll(br)
		if err != nil || string(rest) != "second" {
			t.Errorf("rest %q, %v", rest, err)
		}
	})
}

// A panic never leaves a response that reads as complete. Before any
// output, the native API answers 500; an http.Handler's response is
// aborted (no response), as on net/http. After a flush, the body read
// fails on both.
func TestSemPanicNeverLooksComplete(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/late" {
				io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
			}
			panic("boom")
		})
		nh := func(c *Ctx) {
			if string(c.Path()) == "/late" {
				c.WriteString("partial")
				c.Flush()
			}
			panic("boom")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		resp, err := c.Do(mustRequest(t, "GET", base+"/early"))
		switch {
		case m.native && (err != nil || resp.StatusCode != 500):
			t.Errorf("native panic before output: %v %v, want a 500", resp, err)
		case !m.native && err == nil:
			b, rerr := io.ReadAll(resp.Body)
			if rerr == nil {
				t.Errorf("handler panic before output gave a complete %d %q", resp.StatusCode, b)
			}
		}
		if resp != nil {
			resp.Body.Close()
		}
		resp, err = c.Do(mustRequest(t, "GET", base+"/late"))
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if b, err := io.ReadAll(resp.Body); err == nil {
			t.Errorf("panic after a flush: body %q read as complete", b)
		}
	})
}

// A handler that ends its goroutine with runtime.Goexit (t.Fatal in a
// test's handler does) has its response aborted on both APIs, as net/http
// does: no response reads as complete, before or after a flush. The
// stream's place and the connection's worker go back, so the connection
// serves on (a server allowing 2 streams answers after 4 such requests)
// and reports itself idle once nothing runs.
func TestSemGoexitIsAPanic(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/ok":
				io.WriteString(w, "ok")
				return
			case "/late":
				io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
			}
			runtime.Goexit()
		})
		nh := func(c *Ctx) {
			switch string(c.Path()) {
			case "/ok":
				c.WriteString("ok")
				return
			case "/late":
				c.WriteString("partial")
				c.Flush()
			}
			runtime.Goexit()
		}
		var mu sync.Mutex
		last := map[net.Conn]ConnState{}
		s := &Server{HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 2}, ConnState: func(c net.Conn, st ConnState) {
			mu.Lock()
			last[c] = st
			mu.Unlock()
		}}
		base, c := m.serve(t, s, h, nh)
		for i := range 4 {
			resp, err := c.Do(mustRequest(t, "GET", base+"/early"))
			if err == nil {
				b, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr == nil {
					t.Fatalf("request %d: Goexit before output gave a complete %d %q", i, resp.StatusCode, b)
				}
			}
		}
		if resp, err := c.Do(mustRequest(t, "GET", base+"/late")); err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil {
				t.Errorf("Goexit after a flush: body %q read as complete", b)
			}
		}
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/ok"))
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("after the Goexits: %d %q, want 200 ok", resp.StatusCode, body)
		}
		if !m.isH2() || strings.HasPrefix(m.proto, "handoff") {
			return // HTTP/1.1 closes the connection after a Goexit; the hand-off is net/http's
		}
		// Nothing runs now: every HTTP/2 connection has no stream assigned
		// to a worker, and ConnState says idle.
		deadline := time.Now().Add(10 * time.Second)
		for {
			var busy []string
			s.mu.Lock()
			for sc := range s.h2native {
				sc.mu.Lock()
				if sc.assigned != 0 || sc.running != 0 {
					busy = append(busy, fmt.Sprintf("assigned %d, running %d, workers %d", sc.assigned, sc.running, sc.workers))
				}
				sc.mu.Unlock()
			}
			s.mu.Unlock()
			mu.Lock()
			for _, st := range last {
				if st != StateIdle {
					busy = append(busy, "ConnState "+st.String())
				}
			}
			mu.Unlock()
			if len(busy) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("with nothing running: %v", busy)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// The request limits answer the same status on every mode: 413 for a
// declared body over MaxRequestBodyBytes, 431 past MaxHeaderCount.
func TestSemRequestLimits(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, "ok")
		})
		nh := func(c *Ctx) {
			io.Copy(io.Discard, c.Body())
			c.WriteString("ok")
		}
		base, c := m.serve(t, &Server{MaxRequestBodyBytes: 10, MaxHeaderCount: 8}, h, nh)
		req := mustRequest(t, "POST", base+"/")
		req.Body = io.NopCloser(strings.NewReader(strings.Repeat("x", 20)))
		req.ContentLength = 20
		if resp, _ := mustDo(t, c, req); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("20-byte body over a 10-byte limit: %d, want 413", resp.StatusCode)
		}
		req = mustRequest(t, "GET", base+"/")
		for i := range 12 {
			req.Header.Set(fmt.Sprintf("X-F%d", i), "v")
		}
		if resp, _ := mustDo(t, c, req); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("12 fields over a limit of 8: %d, want 431", resp.StatusCode)
		}
		req = mustRequest(t, "POST", base+"/")
		req.Body = io.NopCloser(strings.NewReader("small"))
		if resp, body := mustDo(t, c, req); resp.StatusCode != 200 || string(body) != "ok" {
			t.Errorf("a request within the limits: %d %q", resp.StatusCode, body)
		}
	})
}

// A request body of unknown length (chunked on HTTP/1.1, DATA frames
// without a length on HTTP/2) reaches the handler whole.
func TestSemRequestBodyUnknownLength(t *testing.T) {
	payload := strings.Repeat("abcdefgh", 40<<10) // 320 KiB: several windows and buffers
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%d %v %v", len(b), err, string(b) == payload)
		})
		nh := func(c *Ctx) {
			b, err := io.ReadAll(c.Body())
			fmt.Fprintf(c, "%d %v %v", len(b), err, string(b) == payload)
		}
		base, c := m.serve(t, &Server{}, h, nh)
		req := mustRequest(t, "POST", base+"/")
		req.Body = io.NopCloser(strings.NewReader(payload))
		req.ContentLength = -1
		_, body := mustDo(t, c, req)
		if want := fmt.Sprintf("%d <nil> true", len(payload)); string(body) != want {
			t.Errorf("handler saw %q, want %q", body, want)
		}
	})
}
