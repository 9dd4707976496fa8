package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Shutdown and Close on every mode (modes_test.go): what a graceful
// Shutdown serves and closes, and what Close leaves behind, must not
// depend on the protocol, the engine or the API. HTTP/1.1's own details
// (Connection: close on the answers, pipelined requests, the quiet
// period) are in server_test.go and endings_test.go.

// hostOf returns the host:port of a base URL from mode.serve.
func hostOf(t *testing.T, base string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// expectEnds reads nc until the server closes it, and fails the test if
// the read deadline passes first.
func expectEnds(t *testing.T, what string, nc net.Conn) {
	t.Helper()
	if _, err := io.Copy(io.Discard, nc); isTimeout(err) {
		t.Errorf("%s: still open after Shutdown returned", what)
	}
}

// shutdownAtOnce calls Shutdown on every server of servers at the same
// time, each with a deadline of limit, and returns their errors. For the
// tests whose every mode waits out a timer of the server's: subtests
// that call t.Parallel run only GOMAXPROCS at a time (two on CI), so
// these serve all modes first, shut them all down at once, then check
// each mode in its subtest.
func shutdownAtOnce(servers map[mode]*Server, limit time.Duration) map[mode]error {
	var mu sync.Mutex
	errs := map[mode]error{}
	var wg sync.WaitGroup
	for m, s := range servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			err := s.Shutdown(ctx)
			mu.Lock()
			errs[m] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return errs
}

// TestShutdownClosesSilentNewConnection: a connection that never sends a
// request does not hold Shutdown past the grace a new connection gets
// (newConnGrace), and ends closed, on every mode: one silent from its
// first byte (on a TLS mode its handshake never starts) and, on every
// mode but plain HTTP/1.1, one that opened its protocol and went quiet
// (the TLS handshake done; on HTTP/2 the preface sent and the server's
// SETTINGS read). Each mode waits out the grace: all shut down at once
// (shutdownAtOnce).
func TestShutdownClosesSilentNewConnection(t *testing.T) {
	servers := map[mode]*Server{}
	conns := map[mode]map[string]net.Conn{}
	for _, m := range allModes {
		var accepted atomic.Int32
		s := &Server{ConnState: func(_ net.Conn, st ConnState) {
			if st == StateNew {
				accepted.Add(1)
			}
		}}
		base, c := m.serve(t, s, http.HandlerFunc(helloHandler), helloNative)
		cs := map[string]net.Conn{"silent from its first byte": dial(t, hostOf(t, base))}
		if m.proto != "h1" {
			nc := m.dialRaw(t, base, c)
			if m.isH2() {
				nc.Write(h2ClientStart())
				readFrames(t, nc, func(f *h2.Frame) bool { return f.Type == h2.FrameSettings })
			}
			cs["quiet once its protocol was open"] = nc
		}
		waitFor(t, fmt.Sprintf("%v: the connections accepted", m), func() bool { return int(accepted.Load()) == len(cs) })
		servers[m], conns[m] = s, cs
	}
	errs := shutdownAtOnce(servers, 3*newConnGrace)
	runModes(t, func(t *testing.T, m mode) {
		if err := errs[m]; err != nil {
			t.Fatalf("Shutdown with silent connections: %v", err)
		}
		for what, nc := range conns[m] {
			expectEnds(t, what, nc)
		}
	})
}

// TestShutdownServesAcceptedConnection: a connection accepted just before
// Shutdown whose request arrives just after is served, not dropped, and
// Shutdown then returns, on every mode. (HTTP/1.1 says Connection: close
// on the answer; HTTP/2 has no such field, and its connection ends with
// GOAWAY.) On the hand-off modes it is refused instead, and nothing
// serves after Shutdown: net/http's HTTP/2 server is started by the first
// connection that needs it, and one started after Shutdown began would
// outlive it.
func TestShutdownServesAcceptedConnection(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		var accepted atomic.Int32
		s := &Server{ConnState: func(_ net.Conn, st ConnState) {
			if st == StateNew {
				accepted.Add(1)
			}
		}}
		base, c := m.serve(t, s, http.HandlerFunc(helloHandler), helloNative)
		// The client's connection, dialed before Shutdown: the client
		// sends its request on it (TLS and all) only after.
		pre := dial(t, hostOf(t, base))
		var dials atomic.Int32
		c.Transport.(*http.Transport).DialContext = func(context.Context, string, string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				return nil, errors.New("a second dial: the connection accepted before Shutdown went unanswered")
			}
			return pre, nil
		}
		waitFor(t, "the connection accepted", func() bool { return accepted.Load() == 1 })
		done := make(chan error, 1)
		go func() { done <- s.Shutdown(context.Background()) }()
		waitFor(t, "Shutdown to begin", s.shutting.Load)
		// Shutdown has looked at the connections once already (it
		// does at once, then every shutdownPollInterval); one more
		// look, made here, is sure to come before the request.
		s.wakeIdle()
		if m.isHandoff() {
			if resp, err := c.Do(mustRequest(t, "GET", base+"/")); err == nil {
				resp.Body.Close()
				t.Errorf("answered %d on a hand-off started after Shutdown began; want the connection refused", resp.StatusCode)
			}
			if err := <-done; err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			s.mu.Lock()
			started := s.h2srv != nil || s.h2csrv != nil
			s.mu.Unlock()
			if started {
				t.Error("a hand-off server was started after Shutdown began")
			}
			return
		}
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		if resp.StatusCode != 200 || string(body) != string(helloBody) {
			t.Errorf("got %d %q; want the request served", resp.StatusCode, body)
		}
		if !m.isH2() && !resp.Close {
			t.Error("answered on HTTP/1.1 without Connection: close while shutting down")
		}
		if err := <-done; err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	})
}

// TestShutdownUnderLoadLosesNothing drives eight clients' requests hard
// on every mode (on HTTP/2, concurrent streams on one connection), shuts
// down mid-stream, and checks that every request a handler ran was
// answered to its client: nothing the server accepted is lost. (HTTP/1.1
// with requests pipelined in the socket when Shutdown comes:
// TestShutdownUnderPipelinedLoadLosesNothing.)
func TestShutdownUnderLoadLosesNothing(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		var handled, answered atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handled.Add(1)
			io.WriteString(w, "ok")
		})
		nh := func(c *Ctx) {
			handled.Add(1)
			c.WriteString("ok")
		}
		s := &Server{}
		base, c := m.serve(t, s, h, nh)
		c.Transport.(*http.Transport).MaxIdleConnsPerHost = 8 // keep-alive, not a dial per request
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					resp, err := c.Get(base + "/")
					if err != nil {
						return // refused: the server is shutting down
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || string(b) != "ok" {
						return // cut: counted as handled, not answered
					}
					answered.Add(1)
				}
			})
		}
		waitFor(t, "load to build", func() bool { return handled.Load() > 200 })
		shutdownLosesNothing(t, s, &wg, &handled, &answered)
	})
}

// TestShutdownClosesIdleConnection: Shutdown with an idle keep-alive
// connection (its request answered, on HTTP/2 with no stream open)
// closes it and returns nil, on every mode; Serve then returns
// ErrServerClosed (serve's cleanup checks it), and nothing more is
// served. All modes shut down at once (shutdownAtOnce): HTTP/1.1's idle
// connections get the quiet period (200 ms), and net/http's HTTP/2
// server (the hand-off) waits a second for the client to close after its
// GOAWAY.
func TestShutdownClosesIdleConnection(t *testing.T) {
	servers := map[mode]*Server{}
	clients := map[mode]*http.Client{}
	bases := map[mode]string{}
	for _, m := range allModes {
		s := &Server{}
		base, c := m.serve(t, s, http.HandlerFunc(helloHandler), helloNative)
		if _, body := mustDo(t, c, mustRequest(t, "GET", base+"/")); string(body) != string(helloBody) {
			t.Fatalf("%v: before Shutdown: %q", m, body)
		}
		servers[m], clients[m], bases[m] = s, c, base
	}
	errs := shutdownAtOnce(servers, 5*time.Second)
	runModes(t, func(t *testing.T, m mode) {
		if err := errs[m]; err != nil {
			t.Fatalf("Shutdown with an idle connection: %v", err)
		}
		if resp, err := clients[m].Get(bases[m] + "/"); err == nil {
			resp.Body.Close()
			t.Errorf("served after Shutdown: %d", resp.StatusCode)
		}
	})
}

// TestNoGoroutineLeak: after Close, no goroutine of the server's or of
// its connections is left, on every mode: with idle keep-alive
// connections (their handlers waited on their contexts, which on the
// http.Handler API of HTTP/1.1 starts the disconnect watcher), a request
// in flight when Close comes (its handler waiting on its context, or on
// the native API, which has none, let go as Close runs), connections
// silent from their first byte, and connections that sent part of their
// first request (on HTTP/2, part of the preface). Close returns. Not
// parallel: it counts the process's goroutines.
func TestNoGoroutineLeak(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		before := runtime.NumGoroutine()
		func() {
			running := make(chan struct{}, 1)
			release := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/wait" {
					running <- struct{}{}
					<-r.Context().Done()
					return
				}
				select {
				case <-r.Context().Done():
				case <-time.After(time.Millisecond):
				}
				io.WriteString(w, "ok")
			})
			nh := func(c *Ctx) {
				if string(c.Path()) == "/wait" {
					running <- struct{}{}
					<-release
					return
				}
				c.WriteString("ok")
			}
			s := &Server{}
			base, c := m.serve(t, s, h, nh)
			defer c.CloseIdleConnections()
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					if resp, err := c.Get(base + "/"); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			wg.Go(func() {
				if resp, err := c.Get(base + "/wait"); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			<-running
			var raw []net.Conn
			for i := range 10 {
				nc := m.dialRaw(t, base, c)
				if i%2 == 1 {
					if m.isH2() {
						nc.Write(h2ClientStart()[:10])
					} else {
						io.WriteString(nc, "GET / HT")
					}
				}
				raw = append(raw, nc)
			}
			for range 5 {
				raw = append(raw, dial(t, hostOf(t, base)))
			}
			closed := make(chan struct{})
			go func() { s.Close(); close(closed) }()
			close(release)
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not return")
			}
			for _, nc := range raw {
				nc.Close()
			}
			wg.Wait()
		}()
		waitFor(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= before })
	})
}
