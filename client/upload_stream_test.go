package client

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// duplexHandler answers at once ("ready"), flushed, before it reads the
// request body, then reads it all and says how much came: a server that
// talks while the client uploads (a relay, a bidirectional protocol over
// HTTP). On HTTP/1.1 net/http's server needs full duplex for it.
var duplexHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex() // HTTP/1.1; HTTP/2 is always full duplex
	io.WriteString(w, "ready\n")
	rc.Flush()
	n, err := io.Copy(io.Discard, r.Body)
	fmt.Fprintf(w, "got %d %v\n", n, err)
})

// h1Protocols is HTTP/1.1 alone.
func h1Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	return p
}

// testServers starts h three ways: HTTP/1.1 in clear, TLS offering
// HTTP/2 and HTTP/1.1, and h2c with HTTP/1.1; pool verifies the TLS one.
func testServers(t *testing.T, h http.Handler) (plain, overTLS, h2c *httptest.Server, pool *x509.CertPool) {
	t.Helper()
	plain = httptest.NewServer(h)
	t.Cleanup(plain.Close)
	overTLS = httptest.NewUnstartedServer(h)
	overTLS.EnableHTTP2 = true
	overTLS.StartTLS()
	t.Cleanup(overTLS.Close)
	h2c = httptest.NewUnstartedServer(h)
	h2c.Config.Protocols = new(http.Protocols)
	h2c.Config.Protocols.SetHTTP1(true)
	h2c.Config.Protocols.SetUnencryptedHTTP2(true)
	h2c.Start()
	t.Cleanup(h2c.Close)
	return plain, overTLS, h2c, overTLS.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
}

// streamModes starts duplexHandler on HTTP/1.1, HTTPS and HTTP/2 (TLS and
// h2c), and returns for each its URL and a Transport of ours for it, with
// net/http's Transport beside it as the baseline.
func streamModes(t *testing.T) map[string]struct {
	url string
	tr  http.RoundTripper
} {
	t.Helper()
	modes := map[string]struct {
		url string
		tr  http.RoundTripper
	}{}
	plain, tlsSrv, h2c, pool := testServers(t, duplexHandler)
	modes["h1"] = struct {
		url string
		tr  http.RoundTripper
	}{plain.URL, &Transport{}}
	modes["h1/net-http-transport"] = struct {
		url string
		tr  http.RoundTripper
	}{plain.URL, &http.Transport{}}

	modes["https"] = struct {
		url string
		tr  http.RoundTripper
	}{tlsSrv.URL, &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: h1Protocols()}}
	modes["h2"] = struct {
		url string
		tr  http.RoundTripper
	}{tlsSrv.URL, &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	modes["h2c"] = struct {
		url string
		tr  http.RoundTripper
	}{h2c.URL, h2cTransport(t)}
	return modes
}

// A streamed upload through an io.Pipe whose writer waits for the
// server's first response bytes completes: the request head leaves
// before the body has a byte, the response comes back while the body is
// still being written, and the body's chunks leave as they are written.
// (Before, on HTTP/1.1, the head waited for the body and the body for the
// response: a deadlock until the client's timeout.)
func TestStreamedUploadWaitsForResponse(t *testing.T) {
	const size = 256 << 10
	for name, m := range streamModes(t) {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			ready := make(chan struct{})
			go func() {
				select {
				case <-ready:
				case <-time.After(10 * time.Second):
					pw.CloseWithError(fmt.Errorf("the response never came"))
					return
				}
				chunk := []byte(strings.Repeat("x", 4096))
				for sent := 0; sent < size; sent += len(chunk) {
					if _, err := pw.Write(chunk); err != nil {
						return
					}
				}
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", m.url, pr)
			c := &http.Client{Transport: m.tr, Timeout: 20 * time.Second}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first, err := br.ReadString('\n')
			if first != "ready\n" {
				t.Fatalf("first line %q (%v), want ready", first, err)
			}
			close(ready)
			rest, err := io.ReadAll(br)
			if want := fmt.Sprintf("got %d <nil>\n", size); string(rest) != want || err != nil {
				t.Errorf("then %q (%v), want %q", rest, err, want)
			}
		})
	}
}

// h1Modes returns, for a handler, an HTTP/1.1 and an HTTPS server with a
// Transport of ours for each, and net/http's Transport on the first as
// the baseline.
func h1Modes(t *testing.T, h http.Handler, cfg func(*Transport)) map[string]struct {
	url string
	tr  http.RoundTripper
} {
	t.Helper()
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(tlsSrv.Close)
	pool := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ours := &Transport{}
	oursTLS := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: h1Protocols()}
	std := &http.Transport{}
	if cfg != nil {
		cfg(ours)
		cfg(oursTLS)
		std.ResponseHeaderTimeout = ours.ResponseHeaderTimeout
	}
	t.Cleanup(ours.CloseIdleConnections)
	t.Cleanup(oursTLS.CloseIdleConnections)
	t.Cleanup(std.CloseIdleConnections)
	return map[string]struct {
		url string
		tr  http.RoundTripper
	}{
		"h1":                    {plain.URL, ours},
		"https":                 {tlsSrv.URL, oursTLS},
		"h1/net-http-transport": {plain.URL, std},
	}
}

// Each piece a streamed body yields leaves at once: a server that answers
// after the first 10 bytes gets them, though the body then waits for that
// answer.
func TestStreamedUploadPiecesLeaveAsRead(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		first := make([]byte, 10)
		io.ReadFull(r.Body, first)
		fmt.Fprintf(w, "first %s\n", first)
		http.NewResponseController(w).Flush()
		rest, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "rest %d\n", len(rest))
	})
	for name, m := range h1Modes(t, h, nil) {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			answered := make(chan struct{})
			go func() {
				pw.Write([]byte("0123456789"))
				select {
				case <-answered:
				case <-time.After(10 * time.Second):
				}
				pw.Write(make([]byte, 5000))
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", m.url, pr)
			resp, err := (&http.Client{Transport: m.tr, Timeout: 20 * time.Second}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			line, _ := br.ReadString('\n')
			close(answered)
			rest, _ := io.ReadAll(br)
			if line != "first 0123456789\n" || string(rest) != "rest 5000\n" {
				t.Errorf("got %q then %q", line, rest)
			}
		})
	}
}

// A server that answers a streamed upload before reading it (a 413, a
// 401) is heard: the caller gets that response, the body is closed once,
// and the connection is not reused for another request with half a body
// in it.
func TestStreamedUploadEarlyResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/upload" {
			w.Header().Set("Connection", "close")
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "ok")
	})
	for name, m := range h1Modes(t, h, nil) {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			body := &closeCounter{Reader: pr, pipe: pr}
			go func() {
				for {
					if _, err := pw.Write(make([]byte, 32<<10)); err != nil {
						return // the transport closed the body
					}
				}
			}()
			req, _ := http.NewRequest("POST", m.url+"/upload", body)
			c := &http.Client{Transport: m.tr, Timeout: 20 * time.Second}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("an early 413: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !strings.Contains(string(b), "too large") {
				t.Errorf("%s %q, want the server's 413", resp.Status, b)
			}
			waitFor(t, func() bool { return body.closes.Load() >= 1 })
			if n := body.closes.Load(); n != 1 {
				t.Errorf("request body closed %d times, want once", n)
			}
			resp, err = c.Get(m.url + "/next")
			if err != nil {
				t.Fatalf("the next request: %v", err)
			}
			b, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				t.Errorf("the next request: %q", b)
			}
		})
	}
}

// A streamed body whose Read fails fails the request with that error,
// without waiting for a response that will not come.
func TestStreamedUploadBodyError(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	for name, m := range h1Modes(t, h, nil) {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			go func() {
				pw.Write([]byte("some"))
				time.Sleep(50 * time.Millisecond)
				pw.CloseWithError(errors.New("disk gone"))
			}()
			req, _ := http.NewRequest("POST", m.url, pr)
			start := time.Now()
			_, err := (&http.Client{Transport: m.tr, Timeout: 20 * time.Second}).Do(req)
			if err == nil || !strings.Contains(err.Error(), "disk gone") {
				t.Errorf("got %v, want the body's error", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the request failed after %v", d)
			}
		})
	}
}

// silentFor is how long the tests' "/silent" handlers say nothing (unless
// the request ends first): far longer than headerCutWithin, so a header
// timeout that does not fire cannot pass.
const silentFor = time.Minute

// headerCutWithin bounds how long a request to a silent server may take to
// fail with its header timeout: generous for a loaded CI machine, where a
// VM has stalled for seconds; a timeout that never fires waits silentFor.
const headerCutWithin = 10 * time.Second

// silence answers nothing for silentFor or until the request ends.
func silence(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(silentFor):
	}
}

// ResponseHeaderTimeout counts from the end of the request's body, as
// net/http's does: an upload that streams for longer completes, and a
// server that then says nothing is cut.
func TestStreamedUploadResponseHeaderTimeout(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/silent" {
			silence(r)
		}
		fmt.Fprint(w, n)
	})
	cfg := func(tr *Transport) { tr.ResponseHeaderTimeout = 300 * time.Millisecond }
	for name, m := range h1Modes(t, h, cfg) {
		t.Run(name, func(t *testing.T) {
			slow := func() io.Reader {
				pr, pw := io.Pipe()
				go func() {
					for range 8 { // 800 ms of body, past the 300 ms timeout
						pw.Write([]byte("0123456789"))
						time.Sleep(100 * time.Millisecond)
					}
					pw.Close()
				}()
				return pr
			}
			c := &http.Client{Transport: m.tr, Timeout: 20 * time.Second}
			req, _ := http.NewRequest("POST", m.url, slow())
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("an upload longer than ResponseHeaderTimeout: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "80" {
				t.Errorf("got %q, want 80", b)
			}
			req, _ = http.NewRequest("POST", m.url+"/silent", slow())
			start := time.Now()
			if _, err = c.Do(req); err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
				t.Errorf("a silent server: %v, want a header timeout", err)
			}
			if d := time.Since(start); d > headerCutWithin {
				t.Errorf("a silent server was cut after %v, want about 800 ms + 300 ms", d)
			}
		})
	}
}

// Sequential streamed uploads that end before their responses reuse one
// connection.
func TestStreamedUploadReusesConnection(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	tr := &Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	for i := range 20 {
		pr, pw := io.Pipe()
		go func() {
			pw.Write(make([]byte, 1000+i))
			pw.Close()
		}()
		resp, err := c.Post(srv.URL, "application/octet-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != fmt.Sprint(1000+i) {
			t.Fatalf("upload %d: %q", i, b)
		}
	}
	// One, unless a busy machine keeps a writer from noting its end
	// within the 50 ms a response's end waits for it (uploadGrace).
	if n := conns.Load(); n > 3 {
		t.Errorf("20 streamed uploads one after another took %d connections, want 1 (3 at most)", n)
	}
}

// ResponseHeaderTimeout holds on HTTP/2 too (it was ignored there, so
// client.New's 15 s default did nothing): a server that sends no head in
// time fails the request with the header timeout, and a head in time
// whose body takes longer is not cut; an upload longer than the timeout
// is not cut either (it counts from END_STREAM).
func TestH2ResponseHeaderTimeout(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/silent":
			silence(r)
		case "/slow-body":
			w.WriteHeader(200)
			http.NewResponseController(w).Flush()
			time.Sleep(700 * time.Millisecond)
		}
		fmt.Fprint(w, n)
	})
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ResponseHeaderTimeout: 300 * time.Millisecond}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}

	start := time.Now()
	_, err := c.Get(srv.URL + "/silent")
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") {
		t.Errorf("a silent server: %v, want the header timeout", err)
	}
	if d := time.Since(start); d > headerCutWithin {
		t.Errorf("a silent server was cut after %v, want about 300 ms", d)
	}
	resp, err := c.Get(srv.URL + "/slow-body")
	if err != nil {
		t.Fatalf("a head in time with a slow body: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != "0" || resp.ProtoMajor != 2 {
		t.Errorf("a slow body after a head in time: %q %v over HTTP/%d, want all of it over HTTP/2", b, err, resp.ProtoMajor)
	}
	pr, pw := io.Pipe()
	go func() {
		for range 8 { // 800 ms of body
			pw.Write([]byte("0123456789"))
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	resp, err = c.Post(srv.URL+"/", "text/plain", pr)
	if err != nil {
		t.Fatalf("an upload longer than ResponseHeaderTimeout: %v", err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "80" {
		t.Errorf("the upload: %q, want 80", b)
	}
}
