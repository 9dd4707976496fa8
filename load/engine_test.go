package load

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/endpoints"
	"github.com/hotpathhq/hotpath/server"
)

// startHotpath serves the demo endpoints on hotpath's engine and returns
// the base URL ("http://127.0.0.1:port").
func startHotpath(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Native: endpoints.Native}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String()
}

// startNetHTTP serves the same endpoints on net/http, plus /chunked (a
// flushed, hence chunked, body).
func startNetHTTP(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", endpoints.Handler())
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("part one,"))
		w.(http.Flusher).Flush()
		w.Write([]byte("part two"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rawServer answers every request on a connection with the script's
// bytes: respond(n) for the n-th request of the connection returns the
// response, whether to close after it, and whether to hang instead.
func rawServer(t *testing.T, respond func(n int) (resp string, close, hang bool)) (url string, requests func() []string) {
	t.Helper()
	var mu sync.Mutex
	var heads []string
	url = serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
		for n := 0; ; n++ {
			var head strings.Builder
			cl := 0
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				head.WriteString(line)
				if v, ok := strings.CutPrefix(strings.ToLower(line), "content-length:"); ok {
					cl, _ = strconv.Atoi(strings.TrimSpace(v))
				}
				if line == "\r\n" {
					break
				}
			}
			br.Discard(cl)
			mu.Lock()
			heads = append(heads, head.String())
			mu.Unlock()
			resp, closeAfter, hang := respond(n)
			if hang {
				<-done
				return
			}
			if _, err := c.Write([]byte(resp)); err != nil || closeAfter {
				return
			}
		}
	})
	return url, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), heads...)
	}
}

// serveConns listens on loopback and runs serve on each connection, with
// a reader over it and a channel closed when the test ends (which also
// closes every connection); it returns the server's URL.
func serveConns(t *testing.T, serve func(c net.Conn, br *bufio.Reader, done <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				serve(c, bufio.NewReader(c), done)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// always returns a script that sends resp to every request.
func always(resp string, closeAfter bool) func(int) (string, bool, bool) {
	return func(int) (string, bool, bool) { return resp, closeAfter, false }
}

const okCL = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

// TestFastEngineFraming runs the fast engine (and, where the response is
// valid HTTP, net/http's) against scripted servers: each framing, the
// body modes, keep-alive off, and each kind of failure.
func TestFastEngineFraming(t *testing.T) {
	cases := []struct {
		name    string
		script  func(int) (string, bool, bool)
		cfg     Config
		status  string // "200" expected for every request, or "" when all fail
		errs    string // the error kind every request fails with
		conns   string // "1/conn": one connection per slot, "1/req": one per request
		proto   string
		nethttp bool // net/http's engine must agree
	}{
		{name: "content-length", script: always(okCL, false), status: "200", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "chunked", script: always("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n", false), status: "200", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "close-delimited", script: always("HTTP/1.0 200 OK\r\n\r\nhello until close", true), status: "200", conns: "1/req", proto: "HTTP/1.0", nethttp: true},
		{name: "connection close", script: always("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", true), status: "200", conns: "1/req", proto: "HTTP/1.1", nethttp: true},
		{name: "1xx skipped", script: always("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"+okCL, false), status: "200", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "204 no body", script: always("HTTP/1.1 204 No Content\r\n\r\n", false), status: "204", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "HEAD", script: always("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", false), cfg: Config{Method: "HEAD"}, status: "200", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "500s counted", script: always("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nno", false), status: "500", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "body close", script: always(okCL, false), cfg: Config{ResponseBody: ResponseBody{Mode: CloseBody}}, status: "200", conns: "1/req", proto: "HTTP/1.1", nethttp: true},
		{name: "body close, empty body", script: always("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false), cfg: Config{ResponseBody: ResponseBody{Mode: CloseBody}}, status: "200", conns: "1/conn", proto: "HTTP/1.1"},
		{name: "limit under body", script: always(okCL, false), cfg: Config{ResponseBody: ResponseBody{Mode: LimitBody, Limit: 3}}, status: "200", conns: "1/req", proto: "HTTP/1.1", nethttp: true},
		{name: "limit over body", script: always(okCL, false), cfg: Config{ResponseBody: ResponseBody{Mode: LimitBody, Limit: 10}}, status: "200", conns: "1/conn", proto: "HTTP/1.1", nethttp: true},
		{name: "keep-alive off", script: always(okCL, false), cfg: Config{DisableKeepAlive: true}, status: "200", conns: "1/req", proto: "HTTP/1.1", nethttp: true},
		{name: "garbage", script: always("NOT HTTP\r\n\r\n", false), errs: "bad_response"},
		{name: "bytes after body", script: always("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab", false), errs: "bad_response"},
		{name: "bad chunk", script: always("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false), errs: "bad_response"},
		{name: "closed mid-body", script: always("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true), errs: "closed_early"},
		{name: "closed before head", script: always("", true), errs: "closed_early"},
		{name: "timeout", script: func(int) (string, bool, bool) { return "", false, true }, cfg: Config{Timeout: 50 * time.Millisecond}, errs: "timeout"},
	}
	for _, tc := range cases {
		engines := []Engine{EngineFast}
		if tc.nethttp {
			engines = append(engines, EngineNetHTTP)
		}
		for _, eng := range engines {
			t.Run(tc.name+"/"+string(eng), func(t *testing.T) {
				url, heads := rawServer(t, tc.script)
				cfg := tc.cfg
				cfg.URL, cfg.Connections, cfg.Requests, cfg.Engine = url, 2, 10, eng
				if tc.errs == "timeout" {
					cfg.Requests = 2
				}
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if tc.errs != "" {
					if res.Errors != res.Sent || res.ErrorsByKind[tc.errs] != res.Sent || res.Requests != 0 {
						t.Errorf("errors %v (%d of %d sent), want all %q", res.ErrorsByKind, res.Errors, res.Sent, tc.errs)
					}
					return
				}
				if res.Requests != 10 || res.Status[tc.status] != 10 || res.Errors != 0 {
					t.Errorf("responses %d status %v errors %v, want 10 × %s", res.Requests, res.Status, res.ErrorsByKind, tc.status)
				}
				if res.Protocols[tc.proto] != 10 {
					t.Errorf("protocols %v, want %s", res.Protocols, tc.proto)
				}
				// With -n, a connection that starts late may find the
				// requests all taken: "1/conn" means at most one per slot.
				want := map[string]int64{"1/conn": 2, "1/req": 10}[tc.conns]
				okOpened := res.Conns.Opened == want || (tc.conns == "1/conn" && res.Conns.Opened == 1)
				if !okOpened || res.Conns.Reused != 10-res.Conns.Opened {
					t.Errorf("opened %d connections, %d reused requests; want %d and %d", res.Conns.Opened, res.Conns.Reused, want, 10-want)
				}
				if got := len(heads()); got != 10 {
					t.Errorf("server saw %d requests, want 10", got)
				}
				if cfg.DisableKeepAlive && !strings.Contains(strings.ToLower(heads()[0]), "connection: close") {
					t.Errorf("keep-alive off but the request was %q", heads()[0])
				}
			})
		}
	}
}

func TestConnectError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, eng := range []Engine{EngineFast, EngineNetHTTP} {
		res, err := Run(context.Background(), Config{URL: "http://" + addr + "/", Connections: 1, Requests: 3, Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		if res.ErrorsByKind["refused"] != 3 || res.Requests != 0 || len(res.Warnings) == 0 {
			t.Errorf("%s: errors %v, responses %d, warnings %q; want 3 refused connections and a warning", eng, res.ErrorsByKind, res.Requests, res.Warnings)
		}
		if err := res.Check(); err == nil || !strings.Contains(err.Error(), "connection refused 3") || !strings.Contains(err.Error(), "is the server running") {
			t.Errorf("%s: Check() = %v, want the refused connections and a hint", eng, err)
		}
	}
}

// TestEnginesAgainstServers runs both engines against hotpath's and
// net/http's servers: a body larger than the read buffer, a chunked body,
// a POST body echoed back.
func TestEnginesAgainstServers(t *testing.T) {
	servers := map[string]string{"hotpath": startHotpath(t), "nethttp": startNetHTTP(t)}
	cases := []struct {
		path   string
		cfg    Config
		bodyIn int64 // body bytes per response
	}{
		{path: "/", bodyIn: 13},
		{path: "/bytes/100000", bodyIn: 100000},
		{path: "/echo", cfg: Config{Method: "POST", Body: []byte("ping pong")}, bodyIn: 9},
		{path: "/chunked", bodyIn: 17},
	}
	for name, base := range servers {
		for _, c := range cases {
			if c.path == "/chunked" && name != "nethttp" {
				continue
			}
			for _, eng := range []Engine{EngineFast, EngineNetHTTP} {
				cfg := c.cfg
				cfg.URL, cfg.Connections, cfg.Requests, cfg.Engine = base+c.path, 3, 30, eng
				res, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				// A slot that starts late may find the 30 requests gone: at most 3 connections.
				if res.Status["200"] != 30 || res.Errors != 0 || res.Conns.Opened < 1 || res.Conns.Opened > 3 || res.Conns.Reused != 30-res.Conns.Opened {
					t.Errorf("%s %s %s: status %v errors %v opened %d reused %d; want 30 × 200 on up to 3 kept-alive connections", name, eng, c.path, res.Status, res.ErrorsByKind, res.Conns.Opened, res.Conns.Reused)
				}
				// net/http's engine counts body bytes, the fast engine wire bytes.
				if res.BytesIn < 30*c.bodyIn || (eng == EngineNetHTTP && res.BytesIn != 30*c.bodyIn) {
					t.Errorf("%s %s %s: %d bytes in, want %d of body", name, eng, c.path, res.BytesIn, 30*c.bodyIn)
				}
			}
		}
	}
}

// Run leaves no goroutine behind after an h2c run.
func TestNoGoroutineLeftAfterH2C(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	before := runtime.NumGoroutine()
	if _, err := Run(context.Background(), Config{URL: srv.URL, Proto: H2C, Connections: 4, Requests: 100}); err != nil {
		t.Fatal(err)
	}
	goroutinesSettle(t, before+2) // allow server-side
}

// Run on the net/http engine leaves no goroutine behind when canceled
// with requests in flight.
func TestNoGoroutineLeftAfterNetHTTPCancel(t *testing.T) {
	url := scriptServer(t, func(c net.Conn, n int) bool { time.Sleep(2 * time.Second); return false })
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	Run(ctx, Config{URL: url, Engine: EngineNetHTTP, Connections: 4, Duration: time.Second})
	goroutinesSettle(t, before+8) // 4 server conns + watchers
}

// Run returns promptly after a cancel on both engines, even with requests
// in flight that the server never answers (and a Timeout of a minute
// that would otherwise end them).
func TestCancelReturnsPromptly(t *testing.T) {
	url := serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
		br.ReadString('\n')
		<-done
	})
	for _, e := range []Engine{EngineFast, EngineNetHTTP} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		t0 := time.Now()
		res, err := Run(ctx, Config{URL: url, Engine: e, Connections: 2, Duration: time.Minute, Timeout: time.Minute})
		d := time.Since(t0)
		t.Logf("%s: returned after %v err=%v errors=%v", e, d, err, res.ErrorsByKind)
		if d > promptly || !errors.Is(err, context.Canceled) || res.ErrorsByKind["canceled"] == 0 {
			t.Errorf("%s: Run returned after %v with %v, errors %v; want canceled within %v", e, d, err, res.ErrorsByKind, promptly)
		}
	}
}
