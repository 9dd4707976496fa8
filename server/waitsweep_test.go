package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// sweepMembers returns how many records of waits are on s's sweep lists
// (waitsweep.go): HTTP/1.1 working states and HTTP/2 connections.
func sweepMembers(s *Server) int {
	n := 0
	for i := range s.grace.shards {
		sh := &s.grace.shards[i]
		sh.mu.Lock()
		n += len(sh.waits)
		sh.mu.Unlock()
	}
	return n
}

// TestCloseEndsTheSweep: Close and Shutdown return with the sweep's
// goroutine ended, not ending a tenth of a second later as it does on an
// idle Server (a leak to tests that look for goroutines left behind, and a
// deadlock panic in testing/synctest's bubbles, as net/http's own
// TestNewClientServerTest/synctest showed on hotpath). Requests run in a
// loop up to the end and an event stream stays open through it, so the
// sweep has waits to run for (HTTP/1.1's grace after each response,
// HTTP/2's quiet reads) when the Server closes.
//
// Modes: every mode of hotpath's engines (the hand-off's HTTP/2 reads are
// net/http's, with no sweep).
func TestCloseEndsTheSweep(t *testing.T) {
	for _, how := range []string{"Close", "Shutdown"} {
		t.Run(how, func(t *testing.T) {
			runModes(t, func(t *testing.T, m mode) {
				release := make(chan struct{})
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/events" {
						io.WriteString(w, "first\n")
						w.(http.Flusher).Flush()
						<-release
						return
					}
					io.WriteString(w, "ok")
				})
				nh := func(c *Ctx) {
					if string(c.Path()) == "/events" {
						c.WriteString("first\n")
						c.Flush()
						<-release
						return
					}
					c.WriteString("ok")
				}
				s := &Server{}
				base, c := m.serve(t, s, h, nh)
				events, _ := openEventStream(t, c, base)
				defer events.Body.Close()
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if resp, err := c.Get(base + "/"); err == nil {
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				})
				defer func() { close(stop); wg.Wait() }()
				waitFor(t, "the sweep to run", s.grace.running.Load)
				closed := make(chan struct{})
				go func() {
					if how == "Close" {
						s.Close()
					} else {
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
						defer cancel()
						if err := s.Shutdown(ctx); err != nil {
							t.Errorf("Shutdown: %v", err)
						}
					}
					close(closed)
				}()
				close(release)
				select {
				case <-closed:
				case <-time.After(30 * time.Second):
					t.Fatalf("%s did not return", how)
				}
				if s.grace.running.Load() {
					t.Errorf("the sweep's goroutine still runs after %s returned", how)
				}
			}, modesWhere(func(m mode) bool { return !m.isHandoff() })...)
		})
	}
}

// pipeListener is a net.Listener over net.Pipe, for servers inside a
// testing/synctest bubble (whose time is fake and whose blocking must be
// on the bubble's own channels, not the network's).
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dial hands the listener the other end of a new pipe.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, srv := net.Pipe()
	select {
	case l.conns <- srv:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestSweepEndsWithTheConnections: a Server whose listener and
// connections are closed without its Close or Shutdown (what
// httptest.Server.Close does: it closes them itself) leaves no goroutine
// of the sweep behind once the last connection is gone: inside a
// testing/synctest bubble, whose time stops when its test returns, a
// sweep waiting for its next tick was a "deadlock: main bubble goroutine
// has exited but blocked goroutines remain" panic (net/http's own
// TestNewClientServerTest/synctest/h2 on hotpath). A stream stays quiet
// first, so the sweep runs.
//
// Modes: HTTP/2 on hotpath's engine, over TLS and h2c, both APIs (the
// reads the sweep ends with streams open are HTTP/2's; HTTP/1.1's grace
// is a wait on sockets the engine can park, which a pipe is not).
func TestSweepEndsWithTheConnections(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			s := &Server{ErrorLog: discardLog}
			if m.native {
				s.Native = func(c *Ctx) {
					c.WriteString("first\n")
					c.Flush()
					<-release
				}
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, "first\n")
					w.(http.Flusher).Flush()
					<-release
				})
			}
			ln := newPipeListener()
			tr := &http.Transport{DialContext: ln.dial, ForceAttemptHTTP2: true}
			scheme := "http"
			if m.cleartext() {
				s.Protocols = h2cProtocols()
				var p http.Protocols
				p.SetUnencryptedHTTP2(true)
				tr.Protocols = &p
			} else {
				scheme = "https"
				cert, pool := testCert(t) // in the bubble: its validity is in the bubble's time
				s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
				tr.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
				tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
					nc, err := ln.dial(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					cfg := tr.TLSClientConfig.Clone()
					cfg.NextProtos = []string{"h2"}
					tc := tls.Client(nc, cfg)
					return tc, tc.HandshakeContext(ctx)
				}
			}
			served := make(chan error, 1)
			go func() {
				if m.cleartext() {
					served <- s.Serve(ln)
				} else {
					served <- s.ServeTLS(ln, "", "")
				}
			}()
			resp, err := (&http.Client{Transport: tr}).Get(scheme + "://127.0.0.1/events")
			if err != nil {
				t.Fatal(err)
			}
			if resp.ProtoMajor != 2 {
				t.Fatalf("served over %s, want HTTP/2", resp.Proto)
			}
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); line != "first\n" {
				t.Fatalf("stream began %q, %v", line, err)
			}
			synctest.Wait() // the connection's reader waits, quiet
			if !s.grace.running.Load() {
				t.Fatal("the sweep does not run with a quiet stream open: this test shows nothing")
			}
			close(release)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			tr.CloseIdleConnections()
			ln.Close()
			if err := <-served; !errors.Is(err, net.ErrClosed) {
				t.Errorf("Serve returned %v, want net.ErrClosed", err)
			}
			synctest.Wait() // the connection has ended
			if s.grace.running.Load() {
				t.Error("the sweep's goroutine outlived the connections")
			}
			s.Close() // the sweep's end after a failure, so that the bubble can end
		})
	}, h2EngineModes()...)
}
