package client

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// MaxConnsPerHost caps a host's HTTP/1.1 connections: the requests past
// it wait, in turn, and all succeed on the connections there are; one
// whose context ends while it waits leaves the queue.
func TestMaxConnsPerHost(t *testing.T) {
	var live, peak atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			if n := live.Add(1); n > peak.Load() {
				peak.Store(n)
			}
		case http.StateClosed, http.StateHijacked:
			live.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	tr := &Transport{MaxConnsPerHost: 2}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			resp, err := tr.RoundTrip(mustReq(t, srv.URL))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	if p := peak.Load(); p > 2 {
		t.Errorf("%d connections at once, want at most 2", p)
	}

	// A waiter whose context is canceled returns, and the queue moves on.
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer slow.Close()
	defer close(block)
	one := &Transport{MaxConnsPerHost: 1}
	defer one.CloseIdleConnections()
	go one.RoundTrip(mustReq(t, slow.URL)) // holds the one place
	waitFor(t, func() bool {
		one.mu.Lock()
		defer one.mu.Unlock()
		return one.conns[connKey{host: slow.Listener.Addr().String()}] == 1
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := one.RoundTrip(mustReq(t, slow.URL).WithContext(ctx))
		errc <- err
	}()
	waitFor(t, func() bool { one.mu.Lock(); defer one.mu.Unlock(); return len(one.waiting) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled waiter: %v", err)
	}
	// RoundTrip returns at the cancel while the wait it abandoned leaves
	// the queue on its own goroutine: wait for that.
	waitFor(t, func() bool { one.mu.Lock(); defer one.mu.Unlock(); return len(one.waiting) == 0 })
}

// Late binding: a request dialing takes a connection another request
// gives back first; its own dial, when it comes, goes to the pool.
func TestLateBinding(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("body")) }))
	defer srv.Close()
	stall := make(chan struct{})
	var dials atomic.Int32
	tr := &Transport{DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
		if dials.Add(1) == 2 {
			<-stall // the second dial waits until the test lets it go
		}
		return (&net.Dialer{}).DialContext(ctx, n, a)
	}}
	defer tr.CloseIdleConnections()
	first, err := tr.RoundTrip(mustReq(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(mustReq(t, srv.URL)) // dials: the first is busy
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, func() bool { return dials.Load() == 2 })
	io.Copy(io.Discard, first.Body)
	first.Body.Close() // back to the pool: handed to the waiting request
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(stall)
	waitFor(t, func() bool {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return len(tr.idle[connKey{host: srv.Listener.Addr().String()}]) == 2
	})
}

// A request whose context ends while its dial (or TLS handshake) hangs
// returns at once, on HTTP/1.1 and over TLS where HTTP/2 may come.
func TestCancelDuringDial(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			tr := &Transport{
				DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
					<-release // a dialer that ignores its context
					return nil, errors.New("released")
				},
				DialTLSContext: func(ctx context.Context, n, a string) (net.Conn, error) {
					<-release
					return nil, errors.New("released")
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", scheme+"://"+ln.Addr().String(), nil)
			if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want the context's", err)
			}
		})
	}
}

// Without keep-alives, an HTTP/2 connection carries one request, as
// net/http's does.
func TestH2DisableKeepAlives(t *testing.T) {
	_, tlsSrv, _, pool := testServers(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var conns atomic.Int32
	tr := &Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool},
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, n, a string) (net.Conn, error) {
			conns.Add(1)
			return (&net.Dialer{}).DialContext(ctx, n, a)
		},
	}
	defer tr.CloseIdleConnections()
	for range 3 {
		resp, err := tr.RoundTrip(mustReq(t, tlsSrv.URL))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("proto %s, want HTTP/2", resp.Proto)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("%d connections for 3 requests, want 3", n)
	}
}
