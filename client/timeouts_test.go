package client_test

// Timeouts and cancellation of a request in flight.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/client"
	"github.com/hotpathhq/hotpath/server"
)

// cancelAfterWrite cancels the request's context as soon as the request
// has been written: the moment a caller's cancel can land.
type cancelAfterWrite struct {
	net.Conn
	cancel context.CancelFunc
}

func (c *cancelAfterWrite) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.cancel()
	time.Sleep(20 * time.Millisecond) // let the AfterFunc run
	return n, err
}

// A cancel that lands between the end of the write and the arming of
// ResponseHeaderTimeout is not lost (overwritten by the header deadline):
// the request returns at once, not at the header timeout.
func TestCancelAfterWriteNotLost(t *testing.T) {
	addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
		client.ReadReq(br)
		time.Sleep(3 * time.Second) // never answers in time
	})
	for _, name := range []string{"net/http", "hotpath"} {
		ctx, cancel := context.WithCancel(context.Background())
		dial := func(ctx2 context.Context, n, a string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx2, n, a)
			if err != nil {
				return nil, err
			}
			return &cancelAfterWrite{nc, cancel}, nil
		}
		var rt http.RoundTripper = &http.Transport{DialContext: dial, ResponseHeaderTimeout: 2 * time.Second}
		if name == "hotpath" {
			rt = &client.Transport{DialContext: dial, ResponseHeaderTimeout: 2 * time.Second}
		}
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
		start := time.Now()
		_, err := rt.RoundTrip(req)
		el := time.Since(start)
		t.Logf("%s: err=%v after %v", name, err, el.Round(time.Millisecond))
		if el > time.Second {
			t.Errorf("%s: cancel ignored for %v", name, el.Round(time.Millisecond))
		}
	}
}

// A GET that hits ResponseHeaderTimeout on a reused connection is sent
// once, as net/http does, not retried.
func TestHeaderTimeoutNotRetried(t *testing.T) {
	for _, name := range []string{"net/http", "hotpath"} {
		var slowHits atomic.Int32
		addr := client.ScriptServer(t, func(c net.Conn, br *bufio.Reader) {
			for {
				req, err := client.ReadReq(br)
				if err != nil {
					return
				}
				if req.URL.Path == "/slow" {
					slowHits.Add(1)
					time.Sleep(300 * time.Millisecond)
					return
				}
				time.Sleep(20 * time.Millisecond) // hold so 4 conns open
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			}
		})
		var rt http.RoundTripper = &http.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}
		if name == "hotpath" {
			rt = &client.Transport{ResponseHeaderTimeout: 100 * time.Millisecond}
		}
		done := make(chan struct{})
		for range 4 { // warm four idle connections
			go func() {
				resp, err := rt.RoundTrip(client.MustReq(t, "http://"+addr+"/fast"))
				if err == nil {
					resp.Body.Close()
				}
				done <- struct{}{}
			}()
		}
		for range 4 {
			<-done
		}
		_, err := rt.RoundTrip(client.MustReq(t, "http://"+addr+"/slow"))
		// The server may read /slow after the client gave up on it (a
		// loaded machine): wait for it, then for a retry that would follow.
		deadline := time.Now().Add(5 * time.Second)
		for slowHits.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		t.Logf("%s: err=%v, server got /slow %d times", name, err, slowHits.Load())
		if slowHits.Load() != 1 {
			t.Errorf("%s: /slow sent %d times after a header timeout", name, slowHits.Load())
		}
	}
}

// isRequestTimeout reports what a caller checks for a timeout: a net.Error
// whose Timeout is true, and context.DeadlineExceeded, as with
// http.Client.Timeout.
func isRequestTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, context.DeadlineExceeded)
}

// okHandler answers "ok".
func okHandler(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }

// noHeadHandler sends no response until the client gives up (5 s at
// most).
func noHeadHandler(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
}

// The overall timeout of client.New (Transport.Timeout) ends a request
// whose head never comes, and one whose body stalls, on the fast path
// (cleartext, HTTP/1.1 over TLS, HTTP/2 over TLS) and on the fallback (a
// request through a proxy), with a timeout error; and a connection that
// served requests under it goes back to the pool healthy: later requests,
// spaced by more than the timeout, reuse it.
func TestNewTimeoutBoundsTheWholeRequest(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", okHandler)
	mux.HandleFunc("/nohead", noHeadHandler)
	mux.HandleFunc("/stallbody", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	plain, conns := countingServer(t, mux)
	tlsSrv := httptest.NewTLSServer(mux) // HTTP/1.1
	t.Cleanup(tlsSrv.Close)
	h2Srv := httptest.NewUnstartedServer(mux)
	h2Srv.EnableHTTP2 = true
	h2Srv.StartTLS()
	t.Cleanup(h2Srv.Close)
	// A proxy takes its request on the fallback: the plain server is one,
	// for URLs of a host that does not exist.
	proxy := func(r *http.Request) (*url.URL, error) {
		if r.URL.Host == "proxied.test" {
			return url.Parse(plain.URL)
		}
		return nil, nil
	}

	// 1 s: /stallbody's head comes within it even when it needs a new
	// connection and TLS handshake on a loaded machine (300 ms was close).
	const timeout = time.Second
	var stats client.Stats
	roots := tlsSrv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	roots.AddCert(h2Srv.Certificate())
	c := client.New(func(t *client.Transport) {
		t.Timeout = timeout
		t.Stats = &stats
		t.TLSClientConfig = &tls.Config{RootCAs: roots}
		t.Proxy = proxy
	})
	defer c.CloseIdleConnections()

	for _, base := range []string{plain.URL, tlsSrv.URL, h2Srv.URL, "http://proxied.test"} {
		start := time.Now()
		_, err := c.Get(base + "/nohead")
		if !isRequestTimeout(err) {
			t.Errorf("%s/nohead: %v, want a timeout that is context.DeadlineExceeded", base, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s/nohead: returned after %v with a %v timeout", base, d, timeout)
		}
		resp, err := c.Get(base + "/stallbody")
		if err != nil {
			t.Fatalf("%s/stallbody: %v", base, err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !isRequestTimeout(err) {
			t.Errorf("%s/stallbody: body read %v, want a timeout that is context.DeadlineExceeded", base, err)
		}
	}

	before := conns.Load()
	for i := range 3 {
		if i > 0 {
			time.Sleep(timeout + 100*time.Millisecond) // past the previous request's deadline
		}
		resp, err := c.Get(plain.URL + "/ok")
		if err != nil {
			t.Fatalf("request %d after the timeouts: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "ok" {
			t.Fatalf("request %d: %q, %v", i, b, err)
		}
	}
	if n := conns.Load() - before; n > 1 {
		t.Errorf("3 spaced requests opened %d connections, want 1 reused (an expired deadline left on a pooled connection?)", n)
	}
	// At once on the same connection, whose socket may keep the last
	// request's deadline (moved once per Timeout/64): still bounded.
	start := time.Now()
	if _, err := c.Get(plain.URL + "/nohead"); !isRequestTimeout(err) {
		t.Errorf("/nohead on a reused connection: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("/nohead on a reused connection: returned after %v with a %v timeout", d, timeout)
	}
	if n := conns.Load() - before; n > 1 {
		t.Errorf("/nohead right after /ok opened a connection (%d in all), want the pooled one", n)
	}
	snap := stats.Snapshot()
	if snap.Fast != 10 || snap.Fallback["proxy"] != 2 {
		t.Errorf("paths: fast %d, fallback %v; want 10 fast and 2 through the proxy", snap.Fast, snap.Fallback)
	}
}

// client.New's timeout runs no goroutine per request: a request in
// flight costs its caller's goroutine and nothing more on the fast path,
// where http.Client.Timeout around a transport it does not know adds a
// timer goroutine per request (measured too, so the count can tell).
func TestNewTimeoutNoGoroutinePerRequest(t *testing.T) {
	var release atomic.Pointer[chan struct{}]
	var arrived atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// hotpath's native server: one goroutine per connection, none per
	// request, so what grows is the client's.
	srv := &server.Server{Native: func(c *server.Ctx) {
		arrived.Add(1)
		<-*release.Load()
		c.WriteString("ok")
	}}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()
	const n = 20
	idle := runtime.NumGoroutine()
	// inFlight starts n requests with c and counts the goroutines they
	// added once all n are in the handler: every goroutine a request
	// starts on its way there has started by then.
	inFlight := func(c *http.Client) int {
		// Start from the idle count: the connections of the previous
		// round have ended on both sides.
		for wait := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > idle && time.Now().Before(wait); {
			time.Sleep(10 * time.Millisecond)
		}
		rel := make(chan struct{})
		release.Store(&rel)
		arrived.Store(0)
		done := make(chan error)
		base := runtime.NumGoroutine()
		for range n {
			go func() {
				resp, err := c.Get(url)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				done <- err
			}()
		}
		for deadline := time.Now().Add(10 * time.Second); arrived.Load() < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d requests reached the handler in 10 s", arrived.Load(), n)
			}
		}
		extra := runtime.NumGoroutine() - base
		close(rel)
		for range n {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		c.CloseIdleConnections()
		return extra
	}
	newExtra := inFlight(client.New())
	timerExtra := inFlight(&http.Client{Transport: &client.Transport{}, Timeout: 30 * time.Second})
	t.Logf("%d requests in flight: client.New() %d goroutines more, http.Client.Timeout on client.Transport %d", n, newExtra, timerExtra)
	if newExtra > 2*n+2 {
		t.Errorf("client.New(): %d requests in flight added %d goroutines, want at most %d (caller and server connection each)", n, newExtra, 2*n+2)
	}
	if timerExtra < newExtra+n/2 {
		t.Errorf("http.Client.Timeout added %d goroutines against client.New()'s %d: the count no longer shows timer goroutines", timerExtra, newExtra)
	}
}

// ResponseHeaderTimeout ends a request on a connection the one before
// used moments ago, whose socket may keep that request's head deadline
// (moved once per ResponseHeaderTimeout/64), with and without an overall
// Timeout; the connection is reused, not redialed.
func TestHeaderTimeoutOnReusedConnection(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", okHandler)
	mux.HandleFunc("/nohead", noHeadHandler)
	srv, conns := countingServer(t, mux)
	for _, overall := range []time.Duration{0, 10 * time.Second} {
		tr := &client.Transport{ResponseHeaderTimeout: 200 * time.Millisecond, Timeout: overall}
		c := &http.Client{Transport: tr}
		before := conns.Load()
		for range 3 {
			resp, err := c.Get(srv.URL + "/ok")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		start := time.Now()
		_, err := c.Get(srv.URL + "/nohead")
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("timeout %v: /nohead after /ok: %v, want a header timeout", overall, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("timeout %v: /nohead returned after %v with a 200ms header timeout", overall, d)
		}
		if n := conns.Load() - before; n != 1 {
			t.Errorf("timeout %v: %d connections for 4 sequential requests, want 1", overall, n)
		}
		tr.CloseIdleConnections()
	}
}
