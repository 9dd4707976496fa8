package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Compatibility with net/http: what broke real services switching from
// it, each test written before its fix, running the same handler on
// hotpath's HTTP/1.1 engine and on net/http's own server (startBoth) and
// comparing what a client reads.

// TestCloseNotifierAndReaderFrom: gin's c.Stream type-asserts
// http.CloseNotifier; io.Copy looks for io.ReaderFrom.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestCloseNotifierAndReaderFrom(t *testing.T) {
	notified := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/copy" {
			rf, ok := w.(io.ReaderFrom)
			if !ok {
				http.Error(w, "no ReaderFrom", 500)
				return
			}
			rf.ReadFrom(strings.NewReader(strings.Repeat("x", 100000)))
			return
		}
		//lint:ignore SA1019 gin's c.Stream still uses it: that is what this tests
		cn, ok := w.(http.CloseNotifier)
		if !ok {
			http.Error(w, "no CloseNotifier", 500)
			return
		}
		ch := cn.CloseNotify()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-ch:
			notified <- true
		case <-time.After(5 * time.Second):
			notified <- false
		}
	})
	hp, nh := startBoth(t, h)
	for _, addr := range []string{hp, nh} {
		resp, err := http.Get("http://" + addr + "/copy")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) != 100000 {
			t.Fatalf("%s /copy: %d, %d bytes %.40q", addr, resp.StatusCode, len(b), b)
		}
		nc := dial(t, addr)
		io.WriteString(nc, "GET /notify HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(nc)
		if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s /notify: %v %v", addr, resp, err)
		}
		nc.Close()
		if !<-notified {
			t.Fatalf("%s: CloseNotify did not fire when the client left", addr)
		}
	}
}

// TestTrailerPrefixAfterFlush: connect-go's gRPC over HTTP/1.1
// sets Grpc-Status with http.TrailerPrefix after the body streamed.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestTrailerPrefixAfterFlush(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "body")
		switch r.URL.Path {
		case "/flush":
			w.(http.Flusher).Flush()
		case "/big":
			w.Write(bytes.Repeat([]byte("b"), 10000))
		}
		w.Header().Set(http.TrailerPrefix+"X-Status", "0")
		w.Header().Set(http.TrailerPrefix+"Bad\r\nX-Injected", "1")
		w.Header().Set(http.TrailerPrefix+"X-Msg", "a\r\nX-Injected: 1")
	})
	hp, nh := startBoth(t, h)
	for _, path := range []string{"/flush", "/big", "/small"} {
		var got []string
		for _, addr := range []string{hp, nh} {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, fmt.Sprintf("%q", resp.Trailer))
		}
		if got[0] != got[1] {
			t.Errorf("%s: trailers hotpath %s, net/http %s", path, got[0], got[1])
		}
		if !strings.Contains(got[1], "X-Status") && path != "/small" {
			t.Errorf("%s: net/http sent no trailer: %s", path, got[1])
		}
	}
}

// TestInformationalHeaderNamesValidated: a header name with CRLF
// in a 103 must not split the response (net/http drops such names).
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestInformationalHeaderNamesValidated(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Link\r\nX-Injected"] = []string{"1"}
		w.Header().Set("Link", "</a.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		delete(w.Header(), "Link\r\nX-Injected")
		io.WriteString(w, "done")
	})
	hp, nh := startBoth(t, h)
	var got []string
	for _, addr := range []string{hp, nh} {
		nc := dial(t, addr)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		raw, _ := io.ReadAll(nc)
		if bytes.Contains(raw, []byte("X-Injected")) {
			t.Errorf("%s: injected header went out:\n%s", addr, raw)
		}
		head, _, _ := strings.Cut(string(raw), "\r\n\r\n")
		got = append(got, head)
	}
	if got[0] != got[1] {
		t.Errorf("103 heads differ:\nhotpath %q\nnet/http %q", got[0], got[1])
	}
}

// TestPanicAbortsLikeNetHTTP: a panic in an http.Handler ends the
// connection without a response, as net/http does; so does
// http.ErrAbortHandler, before or after the head went out.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestPanicAbortsLikeNetHTTP(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/panic":
			io.WriteString(w, "partial")
			panic("boom")
		case "/abort":
			panic(http.ErrAbortHandler)
		case "/abort-after-flush":
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "fine")
	})
	hp, nh := startBothQuiet(t, h)
	for _, path := range []string{"/panic", "/abort", "/abort-after-flush"} {
		raw := "GET /ok HTTP/1.1\r\nHost: x\r\n\r\nGET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"
		a := exchangeRaw(t, hp, raw, "GET", 3)
		b := exchangeRaw(t, nh, raw, "GET", 3)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s:\nhotpath  %q\nnet/http %q", path, a, b)
		}
	}
}

// TestMaxBytesReaderClosesLikeNetHTTP: a handler that hits
// http.MaxBytesReader's limit and answers 413 ends the connection on both
// engines, so the rest of the body is never read as a request.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestMaxBytesReaderClosesLikeNetHTTP(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "too big", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "ok")
	})
	hp, nh := startBothQuiet(t, h)
	raw := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n01234567890123456789GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	a := exchangeRaw(t, hp, raw, "POST", 2)
	b := exchangeRaw(t, nh, raw, "POST", 2)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("hotpath  %q\nnet/http %q", a, b)
	}
}

// TestHTTP10StatusLine: an HTTP/1.0 request gets an HTTP/1.0
// status line, as from net/http.
//
// Modes: HTTP/1.0 beside net/http's own server (startBoth): status lines
// exist only in HTTP/1.x.
func TestHTTP10StatusLine(t *testing.T) {
	hp, nh := startBoth(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "x") }))
	for _, addr := range []string{hp, nh} {
		nc := dial(t, addr)
		io.WriteString(nc, "GET / HTTP/1.0\r\n\r\n")
		line, _ := bufio.NewReader(nc).ReadString('\n')
		if line != "HTTP/1.0 200 OK\r\n" {
			t.Errorf("%s: %q", addr, line)
		}
	}
	addr := startServer(t, &Server{Native: func(c *Ctx) { c.WriteString("x") }})
	nc := dial(t, addr)
	io.WriteString(nc, "GET / HTTP/1.0\r\n\r\n")
	if line, _ := bufio.NewReader(nc).ReadString('\n'); line != "HTTP/1.0 200 OK\r\n" {
		t.Errorf("native: %q", line)
	}
}

// TestLargeHeadsAccepted: heads real browsers and proxies send
// (large cookie sets, tracing headers) pass the default limits.
//
// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestLargeHeadsAccepted(t *testing.T) {
	hp, _ := startBoth(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, len(r.Header))
	}))
	var forty, many strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&forty, "X-Field-%d: %s\r\n", i, strings.Repeat("v", 500))
	}
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&many, "X-Field-%d: v\r\n", i)
	}
	for name, hdr := range map[string]string{"20KB/40": forty.String(), "150 fields": many.String()} {
		nc := dial(t, hp)
		io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n"+hdr+"\r\n")
		resp, body := readResponse(t, bufio.NewReader(nc), "GET")
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
}
