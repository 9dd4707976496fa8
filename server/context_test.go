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
	"time"
)

// A request's context and the client that leaves: the server watches the
// connection while an http.Handler runs, and cancels r.Context() when the
// client is gone.

// TestClientGoneCancelsContext: a client that closes its connection while
// the handler waits cancels r.Context(), on every http.Handler mode (the
// native API's Ctx has no context): over TLS, where HTTP/1.1's watcher
// reads the socket, as on cleartext; on HTTP/2, where the connection's
// end ends each of its streams.
func TestClientGoneCancelsContext(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel() // bounded waits only
		started := make(chan struct{}, 1)
		result := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			select {
			case <-r.Context().Done():
				result <- r.Context().Err()
			case <-time.After(5 * time.Second):
				result <- errors.New("not canceled 5 s after the client left")
			}
		})
		base, c := m.serve(t, &Server{}, h, nil)
		// The client's TCP connections, to close under it (under TLS
		// too: the transport runs TLS over what DialContext returns).
		var mu sync.Mutex
		var conns []net.Conn
		tr := c.Transport.(*http.Transport)
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				mu.Lock()
				conns = append(conns, nc)
				mu.Unlock()
			}
			return nc, err
		}
		done := make(chan error, 1)
		go func() {
			resp, err := c.Get(base + "/")
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		select {
		case <-started:
		case err := <-done:
			t.Fatalf("the request ended before its handler ran: %v", err)
		}
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		if err := <-result; err != context.Canceled {
			t.Fatalf("context error %v, want context.Canceled", err)
		}
		<-done
	}, handlerModes()...)
}

// TestTLSWatcherKeepsPipelinedBytes: the TLS watcher reads to see
// the client leave; a byte it reads belongs to the next request.
//
// Modes: HTTP/1.1 over TLS: the TLS disconnect watcher reads a pipelined
// byte, an HTTP/1.1 shape.
func TestTLSWatcherKeepsPipelinedBytes(t *testing.T) {
	cert, pool := testCert(t)
	s := &Server{ErrorLog: discardLog, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Context().Done()
			time.Sleep(50 * time.Millisecond)
			io.WriteString(w, "ok "+r.URL.Path)
		})}
	addr := startTLS(t, s)
	tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	br := bufio.NewReader(tc)
	io.WriteString(tc, "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(20 * time.Millisecond)
	io.WriteString(tc, "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, want := range []string{"ok /1", "ok /2"} {
		tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, body := readResponse(t, br, "GET"); body != want {
			t.Fatalf("got %q, want %q", body, want)
		}
	}
}
