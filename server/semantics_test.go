package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strconv"
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
		nh := func(c *Ctx) { c.Write(bytes.TrimSpace(c.RequestHeader("X-Pad"))) }
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

// TestSemBodylessStatuses: a 204 or 304 carries no body and no
// Content-Length, whatever the handler set and wrote (an http.Handler's Write
// fails with http.ErrBodyNotAllowed, as on net/http; the native API drops
// the bytes), and the connection stays usable: the next response is read
// whole on the same connection.
func TestSemBodylessStatuses(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		var writeErrs sync.Map // status -> the error the handler's Write returned
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
			if code == 0 {
				io.WriteString(w, "fine")
				return
			}
			if !m.isHandoff() {
				// net/http's HTTP/2 server (the hand-off) sends a
				// handler's length on a 204 or 304 (RFC 9110 §8.6
				// forbids it on a 204), and Go's HTTP/2 client then
				// waits for that body; hotpath's engines drop it.
				w.Header().Set("Content-Length", "7")
			}
			w.WriteHeader(code)
			_, err := io.WriteString(w, "ignored")
			writeErrs.Store(code, err)
		})
		nh := func(c *Ctx) {
			code, _ := strconv.Atoi(strings.TrimPrefix(string(c.Path()), "/"))
			if code == 0 {
				c.WriteString("fine")
				return
			}
			c.SetStatus(code)
			c.WriteString("ignored")
		}
		base, c := m.serve(t, &Server{}, h, nh)
		for _, code := range []int{204, 304} {
			resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"+strconv.Itoa(code)))
			if resp.StatusCode != code || len(body) != 0 || resp.Header.Get("Content-Length") != "" {
				t.Errorf("%d: got %d, body %q, Content-Length %q; want no body, no length",
					code, resp.StatusCode, body, resp.Header.Get("Content-Length"))
			}
			if !m.native {
				if err, _ := writeErrs.Load(code); err != http.ErrBodyNotAllowed {
					t.Errorf("%d: the handler's Write returned %v, want http.ErrBodyNotAllowed", code, err)
				}
			}
			if _, body := mustDo(t, c, mustRequest(t, "GET", base+"/")); string(body) != "fine" {
				t.Errorf("after %d: %q; the connection's framing broke", code, body)
			}
		}
	})
}

// TestSemExpectContinue: a client that sends Expect: 100-continue gets
// 100 Continue when the handler reads the body. When the handler answers
// without reading, HTTP/2 sends no 100 (the stream ends with the answer);
// HTTP/1.1 discards the small unread body to keep the connection, and
// asking for it sends the 100 first, as net/http's HTTP/1.1 server does
// (TestAdapterSemanticsExpectContinue compares the two on the wire).
// Either way the next request on the client is served. (What HTTP/1.1 does with the
// connection afterwards, and the races of a body read on another
// goroutine, are HTTP/1.1's: TestExpectContinue and its neighbours.)
func TestSemExpectContinue(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/refuse" {
				http.Error(w, "no", http.StatusForbidden)
				return
			}
			io.Copy(w, r.Body)
		})
		nh := func(c *Ctx) {
			if string(c.Path()) == "/refuse" {
				c.Error(http.StatusForbidden, "no")
				return
			}
			b, err := c.ReadBody(nil)
			if err != nil {
				c.Error(http.StatusBadRequest, err.Error())
				return
			}
			c.Write(b)
		}
		base, c := m.serve(t, &Server{}, h, nh)
		c.Transport.(*http.Transport).ExpectContinueTimeout = time.Minute // wait for the 100, however long
		for _, tc := range []struct {
			path   string
			status int
			got100 bool // on HTTP/2
		}{{"/read", 200, true}, {"/refuse", 403, false}, {"/read", 200, true}} {
			var got100 bool
			trace := &httptrace.ClientTrace{Got100Continue: func() { got100 = true }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", base+tc.path, strings.NewReader("payload"))
			req.Header.Set("Expect", "100-continue")
			resp, b := mustDo(t, c, req)
			want100 := tc.got100 || !m.isH2()
			if resp.StatusCode != tc.status || got100 != want100 || tc.status == 200 && string(b) != "payload" {
				t.Errorf("%s: %d %q, 100 seen %v; want %d, 100 %v", tc.path, resp.StatusCode, b, got100, tc.status, want100)
			}
		}
	})
}

// TestSemConnState: ConnState reports what net/http's servers do, on
// every mode: each connection starts new, is active while a handler runs
// and idle between requests, and ends closed; every transition is one
// net/http makes (httptest panics on others, such as new -> idle), and
// none reports hijacked but the hand-off's: its connections leave the
// engine for net/http's HTTP/2 server, and say so (HTTP2HandOff's doc).
func TestSemConnState(t *testing.T) {
	valid := map[[2]ConnState]bool{
		{-1, StateNew}: true, {StateNew, StateActive}: true, {StateNew, StateClosed}: true,
		{StateActive, StateIdle}: true, {StateActive, StateClosed}: true,
		{StateIdle, StateActive}: true, {StateIdle, StateClosed}: true,
	}
	runModes(t, func(t *testing.T, m mode) {
		var mu sync.Mutex
		states := map[net.Conn][]ConnState{}
		// lastOf reports the connections that served a request (went
		// active, or hijacked by the hand-off) and the last state of one.
		// A client may dial a spare it never uses: net/http's h2c client
		// did, about 1 run in 100 under -race ([new closed]: it had
		// counted as a second connection and the wait timed out).
		lastOf := func() (last ConnState, conns int) {
			mu.Lock()
			defer mu.Unlock()
			last = -1
			for _, v := range states {
				if slices.Contains(v, StateActive) || slices.Contains(v, StateHijacked) {
					last, conns = v[len(v)-1], conns+1
				}
			}
			return last, conns
		}
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wait" {
				<-release
			}
			io.WriteString(w, "ok")
		})
		nh := func(c *Ctx) {
			if string(c.Path()) == "/wait" {
				<-release
			}
			c.WriteString("ok")
		}
		allowed := valid
		if m.isHandoff() {
			allowed = maps.Clone(valid)
			allowed[[2]ConnState{StateNew, StateHijacked}] = true
			allowed[[2]ConnState{StateActive, StateHijacked}] = true // h2c: the preface read as a request
		}
		s := &Server{ConnState: func(c net.Conn, st ConnState) {
			mu.Lock()
			defer mu.Unlock()
			prev := ConnState(-1)
			if v := states[c]; len(v) > 0 {
				prev = v[len(v)-1]
			}
			if !allowed[[2]ConnState{prev, st}] {
				t.Errorf("ConnState went %v -> %v", prev, st)
			}
			states[c] = append(states[c], st)
		}}
		handoff := m.isHandoff()
		base, c := m.serve(t, s, h, nh)
		mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if handoff {
			close(release)
			if st, n := lastOf(); n != 1 || st != StateHijacked {
				t.Errorf("hand-off: %d connections, last state %v; want 1, hijacked", n, st)
			}
			return
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := c.Do(mustRequest(t, "GET", base+"/wait")); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		waitFor(t, "the connection active", func() bool { st, n := lastOf(); return n == 1 && st == StateActive })
		close(release)
		<-done
		waitFor(t, "the connection idle", func() bool { st, n := lastOf(); return n == 1 && st == StateIdle })
		c.CloseIdleConnections()
		waitFor(t, "the connection closed", func() bool { st, n := lastOf(); return n == 1 && st == StateClosed })
	})
}

// TestSemHead: a HEAD response carries no body. One the handler
// collected carries the GET's Content-Length; one that went streaming
// (a body past the collection limit) carries no framing (no
// Transfer-Encoding); either way the GET that follows on the same
// connection is read whole.
func TestSemHead(t *testing.T) {
	small, big := []byte("Hello, World!"), bytes.Repeat([]byte("z"), 100<<10)
	runModes(t, func(t *testing.T, m mode) {
		body := func(path string) []byte {
			if path == "/big" {
				return big
			}
			return small
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body(r.URL.Path)) })
		nh := func(c *Ctx) { c.Write(body(string(c.Path()))) }
		base, c := m.serve(t, &Server{}, h, nh)
		for _, path := range []string{"/small", "/big"} {
			resp, b := mustDo(t, c, mustRequest(t, "HEAD", base+path))
			if len(b) != 0 || len(resp.TransferEncoding) != 0 {
				t.Errorf("HEAD %s: body of %d bytes, Transfer-Encoding %v; want neither", path, len(b), resp.TransferEncoding)
			}
			if path == "/small" && resp.ContentLength != int64(len(small)) {
				t.Errorf("HEAD %s: Content-Length %d, want the GET's %d", path, resp.ContentLength, len(small))
			}
			if _, b := mustDo(t, c, mustRequest(t, "GET", base+path)); !bytes.Equal(b, body(path)) {
				t.Errorf("GET %s after HEAD: %d bytes, want %d", path, len(b), len(body(path)))
			}
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

// TestSemPanic: what a handler's panic leaves, on every mode and both
// APIs. A panic never leaves a response that reads as complete: before
// any output the native API answers 500 (a complete, honest response);
// an http.Handler's response is aborted, as on net/http (HTTP/1.1: the
// connection ends with no response; HTTP/2: the stream is reset). After
// a flush, the body read fails on both APIs. panic(http.ErrAbortHandler)
// aborts the same way and is not logged; other panics are logged. The
// server goes on serving: on HTTP/2 the same connection serves the next
// request.
func TestSemPanic(t *testing.T) {
	cases := []struct {
		path    string
		value   any  // what the handler panics with
		flushed bool // the head and part of the body went out first
	}{
		{"/before-output", "boom-before", false},
		{"/after-flush", "boom-after", true},
		{"/abort-before-output", http.ErrAbortHandler, false},
		{"/abort-after-flush", http.ErrAbortHandler, true},
	}
	runModes(t, func(t *testing.T, m mode) {
		byPath := map[string]int{}
		for i, tc := range cases {
			byPath[tc.path] = i
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i, ok := byPath[r.URL.Path]
			if !ok {
				io.WriteString(w, "fine")
				return
			}
			if cases[i].flushed {
				io.WriteString(w, "partial")
				w.(http.Flusher).Flush()
			}
			panic(cases[i].value)
		})
		nh := func(c *Ctx) {
			i, ok := byPath[string(c.Path())]
			if !ok {
				c.WriteString("fine")
				return
			}
			if cases[i].flushed {
				c.WriteString("partial")
				c.Flush()
			}
			panic(cases[i].value)
		}
		logged := &lockedBuffer{}
		base, c := m.serve(t, &Server{ErrorLog: log.New(logged, "", 0)}, h, nh)
		// do sends GET path and returns the response, its body, and the
		// local address of the connection it went out on last (Go's
		// client retries a GET whose reused connection closed unanswered).
		do := func(path string) (*http.Response, []byte, string, error) {
			var addr string
			trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
				addr = ci.Conn.LocalAddr().String()
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", base+path, nil)
			resp, err := c.Do(req)
			if err != nil {
				return nil, nil, addr, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp, b, addr, err
		}
		for _, tc := range cases {
			_, abort := tc.value.(error)
			resp, body, panicConn, err := do(tc.path)
			switch {
			case m.native && !tc.flushed:
				// The native API answers 500 (doc.go), for
				// http.ErrAbortHandler too: its response is whole.
				if err != nil || resp.StatusCode != 500 || !strings.Contains(string(body), "panicked") {
					t.Errorf("%s: %v %v %q; want a complete 500 saying the handler panicked", tc.path, resp, err, body)
				}
				if !m.isH2() && !resp.Close {
					t.Errorf("%s: the 500 after a panic keeps the HTTP/1.1 connection", tc.path)
				}
			case err == nil:
				t.Errorf("%s: %d %q read as complete after a panic", tc.path, resp.StatusCode, body)
			}
			resp, body, nextConn, err := do("/")
			if err != nil || string(body) != "fine" {
				t.Fatalf("after %s: %v %v %q; the server must go on serving", tc.path, resp, err, body)
			}
			switch {
			case !m.isH2() && nextConn == panicConn:
				t.Errorf("%s: the next request reused its HTTP/1.1 connection; a panic ends it", tc.path)
			case m.isH2() && nextConn != panicConn:
				t.Errorf("%s: the next request needed a new HTTP/2 connection; a panic costs its stream only", tc.path)
			}
			if want := fmt.Sprint(tc.value); !abort {
				waitFor(t, "the panic logged", func() bool { return strings.Contains(logged.String(), want) })
			}
		}
		if strings.Contains(logged.String(), "abort") {
			t.Errorf("http.ErrAbortHandler was logged: %q", logged.String())
		}
	})
}

// TestSemGetAndPost: on every mode of the http.Handler API, a GET, and
// uploads echoed back whole: small and ~3 MB (past every HTTP/2 window),
// with a length and without one (chunked on HTTP/1.1).
func TestSemGetAndPost(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), 3<<20/36) // ~3 MB, past every window
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, echo, nil)
		req, _ := http.NewRequest("GET", base+"/", nil)
		resp, b := mustDo(t, c, req)
		if resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("X-Proto") != resp.Proto {
			t.Fatalf("GET: %s %d %q %v", resp.Proto, resp.StatusCode, b, resp.Header)
		}
		for _, body := range [][]byte{[]byte("hello"), big} {
			req, _ := http.NewRequest("POST", base+"/upload", bytes.NewReader(body))
			resp, b := mustDo(t, c, req)
			if resp.StatusCode != 200 || resp.Header.Get("X-Method") != "POST" || sha256.Sum256(b) != sha256.Sum256(body) {
				t.Fatalf("POST of %d bytes: status %d, got %d bytes back", len(body), resp.StatusCode, len(b))
			}
			// A body of unknown length (no content-length).
			req, _ = http.NewRequest("PUT", base+"/upload", io.MultiReader(bytes.NewReader(body)))
			req.ContentLength = -1
			resp, b = mustDo(t, c, req)
			if resp.StatusCode != 200 || !bytes.Equal(b, body) {
				t.Fatalf("PUT of %d bytes, unknown length: status %d, got %d bytes back", len(body), resp.StatusCode, len(b))
			}
		}
	}, handlerModes()...)
}

// TestSemTrailersPassThrough: a streamed upload's request trailer reaches
// the handler once the body is read, and the handler's response trailers
// (declared, and set with http.TrailerPrefix) reach the client, on every
// mode of the http.Handler API.
func TestSemTrailersPassThrough(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Declared")
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
		w.Header().Set("X-Declared", "sum="+r.Trailer.Get("X-Req-Sum"))
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, h, nil)
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("POST", base+"/", pr)
		req.Trailer = http.Header{"X-Req-Sum": nil}
		go func() {
			pw.Write([]byte("body with trailers"))
			req.Trailer.Set("X-Req-Sum", "42")
			pw.Close()
		}()
		resp, b := mustDo(t, c, req)
		if string(b) != "body with trailers" {
			t.Fatalf("body %q", b)
		}
		if got := resp.Trailer.Get("X-Declared"); got != "sum=42" {
			t.Errorf("declared trailer %q, want sum=42 (request trailer passed through); trailers %v", got, resp.Trailer)
		}
		if got := resp.Trailer.Get("X-Late"); got != "late" {
			t.Errorf("TrailerPrefix trailer %q, want late; trailers %v", got, resp.Trailer)
		}
	}, handlerModes()...)
}

// Request trailers reach Request.Trailer when the body has been read to
// its end, on the handler's goroutine, as with net/http: before that the
// declared keys have no values (and the reader never writes the map the
// handler reads: -race checks).
func TestSemRequestTrailersAfterBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		before := fmt.Sprint(r.Trailer)
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "before=%s after=%s", before, r.Trailer)
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, h, nil)
		req, _ := http.NewRequest("POST", base+"/", io.MultiReader(strings.NewReader("uploaded data")))
		req.ContentLength = -1
		req.Trailer = http.Header{"X-Checksum": {"c0ffee"}}
		_, body := mustDo(t, c, req)
		if want := "before=map[X-Checksum:[]] after=map[X-Checksum:[c0ffee]]"; string(body) != want {
			t.Fatalf("got %q, want %q", body, want)
		}
	}, handlerModes()...)
}

// nativeModes is allModes for the native API alone.
func nativeModes() []mode {
	var ms []mode
	for _, m := range allModes {
		if m.native {
			ms = append(ms, m)
		}
	}
	return ms
}

// TestSemDateHeader: every response carries a Date of now, on every mode
// of the native API (the http.Handler API's are compared with net/http's
// by the differential tests).
func TestSemDateHeader(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, nil, helloNative)
		resp, _ := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		d, err := http.ParseTime(resp.Header.Get("Date"))
		if err != nil {
			t.Fatalf("Date %q: %v", resp.Header.Get("Date"), err)
		}
		if age := time.Since(d); age < -2*time.Second || age > 2*time.Second {
			t.Errorf("Date %v is %v away from now", d, age)
		}
	}, nativeModes()...)
}

// TestSemNativeResponseHeaders: the native API's header calls on every
// mode: Set replaces (names in any case), Add appends, Del removes,
// control bytes in values become spaces (no field injected), a name that
// is not a token is dropped, Transfer-Encoding is the server's.
func TestSemNativeResponseHeaders(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, nil, func(c *Ctx) {
			c.SetHeader("X-One", "first")
			c.SetHeader("x-one", "replaced")
			c.AddHeader("Set-Cookie", "a=1")
			c.AddHeader("Set-Cookie", "b=2")
			c.SetHeader("X-Gone", "soon")
			c.DelHeader("x-gone")
			c.SetHeader("X-Evil", "v\r\nSet-Cookie: injected=1")
			c.SetHeader("Bad Name", "dropped")
			c.SetHeader("Transfer-Encoding", "gzip")
			c.SetHeaderBytes("X-Bytes", []byte("b"))
			c.SetHeader("Content-Type", "text/x-test")
			c.WriteString("ok")
		})
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		h := resp.Header
		checks := []struct{ name, got, want string }{
			{"X-One", h.Get("X-One"), "replaced"},
			{"Set-Cookie", strings.Join(h.Values("Set-Cookie"), ","), "a=1,b=2"},
			{"X-Gone", h.Get("X-Gone"), ""},
			{"X-Evil", h.Get("X-Evil"), "v  Set-Cookie: injected=1"},
			{"Bad Name", h.Get("Bad Name"), ""},
			{"Transfer-Encoding", strings.Join(resp.TransferEncoding, ","), ""},
			{"X-Bytes", h.Get("X-Bytes"), "b"},
			{"Content-Type", h.Get("Content-Type"), "text/x-test"},
			{"body", string(body), "ok"},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
			}
		}
		if len(h.Values("X-One")) != 1 {
			t.Errorf("X-One sent %d times", len(h.Values("X-One")))
		}
	}, nativeModes()...)
}

// TestSemNativeStreaming: the native API's bodies on every mode: one past
// the collection limit streams (chunked on HTTP/1.1), one with a declared
// length keeps it, a flushed event reaches the client while the handler
// still runs, and a body shorter than its declared length never reads as
// complete.
func TestSemNativeStreaming(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB
	runModes(t, func(t *testing.T, m mode) {
		release := make(chan struct{})
		base, c := m.serve(t, &Server{}, nil, func(c *Ctx) {
			switch string(c.Path()) {
			case "/big":
				c.Write(big)
			case "/length":
				c.SetContentLength(int64(len(big)))
				c.Write(big[:1000])
				c.Write(big[1000:])
			case "/flush":
				c.WriteString("event: one\n\n")
				c.Flush()
				<-release
				c.WriteString("event: two\n\n")
			case "/short":
				c.SetContentLength(10)
				c.WriteString("abc")
			}
		})
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/big"))
		if !bytes.Equal(body, big) || !m.isH2() && len(resp.TransferEncoding) != 1 {
			t.Errorf("/big: TE %v, %d bytes; want %d bytes (chunked on HTTP/1.1)", resp.TransferEncoding, len(body), len(big))
		}
		resp, body = mustDo(t, c, mustRequest(t, "GET", base+"/length"))
		if resp.ContentLength != int64(len(big)) || !bytes.Equal(body, big) {
			t.Errorf("/length: Content-Length %d, %d bytes", resp.ContentLength, len(body))
		}
		resp, err := c.Do(mustRequest(t, "GET", base+"/flush"))
		if err != nil {
			t.Fatal(err)
		}
		first := make([]byte, len("event: one\n\n"))
		if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "event: one\n\n" {
			t.Fatalf("first event before the handler finished: %q %v", first, err)
		}
		close(release)
		rest, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(rest) != "event: two\n\n" {
			t.Errorf("second event %q", rest)
		}
		resp, err = c.Do(mustRequest(t, "GET", base+"/short"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, err := io.ReadAll(resp.Body); err == nil {
			t.Errorf("/short: %q read as complete; a body shorter than its Content-Length must not", b)
		}
	}, nativeModes()...)
}

// TestSemContextCanceledWhenHandlerReturns: an http.Handler's request
// context lives while the handler runs and is canceled when it returns,
// with the *http.Server under ServerContextKey, on every handler mode.
func TestSemContextCanceledWhenHandlerReturns(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		var ctxs = make(chan context.Context, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctxs <- r.Context()
			derived, cancel := context.WithCancel(r.Context())
			defer cancel()
			go func() { <-derived.Done() }()
			if r.Context().Err() != nil {
				t.Error("context canceled while the handler runs")
			}
			io.WriteString(w, "ok")
		})
		base, c := m.serve(t, &Server{}, h, nil)
		mustDo(t, c, mustRequest(t, "GET", base+"/"))
		ctx := <-ctxs
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("request context not canceled after the handler returned")
		}
		if ctx.Err() != context.Canceled {
			t.Errorf("Err = %v", ctx.Err())
		}
		if srv, _ := ctx.Value(http.ServerContextKey).(*http.Server); srv == nil {
			t.Error("no *http.Server under ServerContextKey")
		}
	}, handlerModes()...)
}

// TestSemFlusherStreamsEvents: an http.Handler's flushed event reaches
// the client while the handler still runs (server-sent events), on every
// handler mode.
func TestSemFlusherStreamsEvents(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			<-release
			fmt.Fprint(w, "data: two\n\n")
		})
		base, c := m.serve(t, &Server{}, h, nil)
		resp, err := c.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		line, _ := br.ReadString('\n')
		if line != "data: one\n" {
			t.Fatalf("first event %q before the handler finished", line)
		}
		close(release)
		rest, _ := io.ReadAll(br)
		if string(rest) != "\ndata: two\n\n" {
			t.Fatalf("rest %q", rest)
		}
	}, handlerModes()...)
}

// TestSemBodyLimitReachesClient: a body limit the user sets
// (MaxRequestBodyBytes) answers 413 naming it, and the client reads that
// answer instead of a connection reset: for a declared length and a body
// of unknown length, with and without Expect: 100-continue, ten times
// each on one client, on every handler mode.
func TestSemBodyLimitReachesClient(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return // the server answers 413 itself
		}
		fmt.Fprintf(w, "%d", n)
	})
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{MaxRequestBodyBytes: 1 << 20}, h, nil)
		c.Transport.(*http.Transport).ExpectContinueTimeout = time.Second
		for _, chunked := range []bool{false, true} {
			for _, expect := range []bool{false, true} {
				for i := 0; i < 10; i++ {
					var body io.Reader = bytes.NewReader(make([]byte, 6<<20))
					if chunked {
						body = io.MultiReader(body)
					}
					req, _ := http.NewRequest("POST", base+"/", body)
					if expect {
						req.Header.Set("Expect", "100-continue")
					}
					resp, err := c.Do(req)
					if err != nil {
						t.Fatalf("chunked=%v expect=%v try %d: %v", chunked, expect, i, err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 413 || !strings.Contains(string(b), "MaxRequestBodyBytes") {
						t.Fatalf("chunked=%v expect=%v try %d: %d %q", chunked, expect, i, resp.StatusCode, b)
					}
				}
			}
		}
	}, handlerModes()...)
}

// TestSemNoDefaultBodyLimitForHandlers: net/http sets no request body
// limit; neither does the http.Handler API, on any mode (6 MiB, with a
// length and without one). The native API keeps its 4 MiB default.
func TestSemNoDefaultBodyLimitForHandlers(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d %v", n, err)
	})
	const size = 6 << 20
	runModes(t, func(t *testing.T, m mode) {
		base, c := m.serve(t, &Server{}, h, nil)
		for _, chunked := range []bool{false, true} {
			var body io.Reader = bytes.NewReader(make([]byte, size))
			if chunked {
				body = io.MultiReader(body) // unknown length
			}
			req, _ := http.NewRequest("POST", base+"/", body)
			resp, b := mustDo(t, c, req)
			if resp.StatusCode != 200 || string(b) != fmt.Sprint(size, " <nil>") {
				t.Fatalf("chunked=%v: %d %q", chunked, resp.StatusCode, b)
			}
		}
	}, handlerModes()...)
	s := &Server{Native: func(*Ctx) {}}
	s.resolve()
	if s.cfg.limits.MaxBodyBytes != 4<<20 {
		t.Fatalf("native body limit %d, want 4 MiB", s.cfg.limits.MaxBodyBytes)
	}
}

// TestSemShutdownFinishesInFlight: Shutdown lets the requests in flight
// finish, answered whole, and returns once they have; then nothing is
// served. On every mode and both APIs (HTTP/1.1's Connection: close and
// idle keep-alive connections: TestShutdownFinishesInFlightRequests).
func TestSemShutdownFinishesInFlight(t *testing.T) {
	const inflight = 5
	runModes(t, func(t *testing.T, m mode) {
		release := make(chan struct{})
		var started sync.WaitGroup
		started.Add(inflight)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started.Done()
			<-release
			io.WriteString(w, "finished")
		})
		nh := func(c *Ctx) {
			started.Done()
			<-release
			c.WriteString("finished")
		}
		s := &Server{}
		base, c := m.serve(t, s, h, nh)
		got := make(chan string, inflight)
		for range inflight {
			go func() {
				resp, err := c.Get(base + "/")
				if err != nil {
					got <- err.Error()
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- fmt.Sprint(resp.StatusCode, " ", string(b), " ", err)
			}()
		}
		started.Wait()
		done := make(chan error, 1)
		go func() { done <- s.Shutdown(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with requests in flight", err)
		case r := <-got:
			t.Fatalf("a request ended before its handler was let go: %s", r)
		case <-time.After(50 * time.Millisecond):
		}
		close(release)
		for range inflight {
			if r := <-got; r != "200 finished <nil>" {
				t.Errorf("in-flight request: %s", r)
			}
		}
		if err := <-done; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if resp, err := c.Get(base + "/"); err == nil {
			resp.Body.Close()
			t.Errorf("served after Shutdown: %d", resp.StatusCode)
		}
	})
}
