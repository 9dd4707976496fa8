package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// TestHijackedConnIsLeftAlone: once a handler took the connection over
// and returned (a goroutine of its own keeps the socket, as WebSocket
// libraries and CONNECT proxies do), the server lets it be, as net/http
// does: no deadline of its timeouts is left on it nor set later (all
// short here, and passed before the new owner reads), no 100 Continue
// goes out for the body, Shutdown neither closes it nor waits for it,
// Close does not close it, and ConnState reports StateHijacked once and
// nothing after (no StateClosed). So for a request with "Connection:
// close", a HEAD, one that awaits 100 Continue, and a handler that panics
// after Hijack. HTTP/1.1 and over TLS, both APIs (HTTP/2 has no Hijack).
func TestHijackedConnIsLeftAlone(t *testing.T) {
	heads := map[string]string{
		"plain":    "GET /plain HTTP/1.1\r\nHost: x\r\n\r\n",
		"close":    "GET /close HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"head":     "HEAD /head HTTP/1.1\r\nHost: x\r\n\r\n",
		"continue": "POST /continue HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n",
		"panic":    "GET /panic HTTP/1.1\r\nHost: x\r\n\r\n",
		"body":     "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		"flushed":  "GET /flushed HTTP/1.1\r\nHost: x\r\n\r\n",
	}
	runModes(t, func(t *testing.T, m mode) {
		for name, head := range heads {
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each waits for its timeouts to pass
				// The new owner: reads a line (the body's "ping\n" for
				// the 100-continue request) and echoes it.
				owner := func(nc net.Conn, br *bufio.Reader) {
					defer nc.Close()
					line, err := br.ReadString('\n')
					fmt.Fprintf(nc, "echo: %q %v\n", line, err)
				}
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					switch r.URL.Path {
					case "/body": // the body's reads armed a read deadline
						io.ReadAll(r.Body)
					case "/flushed": // the head's write armed a write deadline
						w.WriteHeader(http.StatusSwitchingProtocols)
						w.(http.Flusher).Flush()
					}
					nc, brw, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					go owner(nc, brw.Reader)
					if r.URL.Path == "/panic" {
						panic("after Hijack")
					}
				})
				native := func(x *Ctx) {
					path := string(x.Path()) // its slices are not used past Hijack
					switch path {
					case "/body":
						io.ReadAll(x.Body())
					case "/flushed":
						x.SetStatus(http.StatusSwitchingProtocols)
						x.Flush()
					}
					nc, pending, err := x.Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					go owner(nc, bufio.NewReader(io.MultiReader(bytes.NewReader(pending), nc)))
					if path == "/panic" {
						panic("after Hijack")
					}
				}
				var states connStates
				// Every timeout of the server at d, short enough to pass
				// while the test waits. Over TLS the handshake (which
				// ReadHeaderTimeout bounds) must not take as long: under
				// -race on a loaded machine it took over 50 ms, and the
				// connection closed before its request came.
				d := 50 * time.Millisecond
				if m.proto == "https1" {
					d = 250 * time.Millisecond
				}
				s := &Server{
					ReadTimeout: d, WriteTimeout: d, IdleTimeout: d, ReadHeaderTimeout: d,
					ReadStallTimeout: d, WriteStallTimeout: d, ConnState: states.hook,
				}
				base, c := m.serve(t, s, h, native)
				nc := m.dialRaw(t, base, c)
				io.WriteString(nc, head)
				time.Sleep(8 * d) // every timeout passes, and the sweep runs
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				start := time.Now()
				if err := s.Shutdown(ctx); err != nil {
					t.Errorf("Shutdown with a hijacked connection open: %v", err)
				}
				if el := time.Since(start); el > time.Second {
					t.Errorf("Shutdown waited %v for the hijacked connection", el)
				}
				s.Close()
				io.WriteString(nc, "ping\n")
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				got, _ := io.ReadAll(nc)
				if name == "flushed" {
					i := bytes.Index(got, []byte("\r\n\r\n"))
					if !bytes.HasPrefix(got, []byte("HTTP/1.1 101 ")) || i < 0 {
						t.Fatalf("no 101 head first: %q", got)
					}
					got = got[i+4:]
				}
				if want := "echo: \"ping\\n\" <nil>\n"; string(got) != want {
					t.Errorf("the client got %q, want %q", got, want)
				}
				want := []ConnState{StateNew, StateActive, StateHijacked}
				if st := states.states(); !reflect.DeepEqual(st, want) {
					t.Errorf("ConnState: %v, want %v", st, want)
				}
			})
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() })...)
}

// TestHijackAfterPartOfChunkedBody: a handler that read part of a
// chunked body's chunk, then hijacks, hands over the rest of that chunk
// first (as net/http's hijacked bufio.Reader holds it; the decoder had
// already taken it from the read buffer), then what follows. Both APIs,
// HTTP/1.1 and over TLS (HTTP/2 has no Hijack);
// TestHijackHandsOverUnreadBytes compares the http.Handler's with
// net/http.
func TestHijackAfterPartOfChunkedBody(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		got := make(chan string, 1)
		owner := func(nc net.Conn, r io.Reader) {
			defer nc.Close()
			nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			b, _ := io.ReadAll(r)
			got <- string(b)
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadFull(r.Body, make([]byte, 2))
			nc, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				got <- err.Error()
				return
			}
			go owner(nc, brw)
		})
		native := func(x *Ctx) {
			io.ReadFull(x.Body(), make([]byte, 2))
			nc, pending, err := x.Hijack()
			if err != nil {
				got <- err.Error()
				return
			}
			go owner(nc, io.MultiReader(bytes.NewReader(pending), nc))
		}
		base, c := m.serve(t, &Server{}, h, native)
		nc := m.dialRaw(t, base, c)
		io.WriteString(nc, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nnext")
		if s, want := <-got, "llo\r\n0\r\n\r\nnext"; s != want {
			t.Errorf("the hijacked connection's bytes: %q, want %q", s, want)
		}
	}, modesWhere(func(m mode) bool { return !m.isH2() })...)
}
