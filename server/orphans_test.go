package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Handlers that outlive their connection are counted per client until
// they return (orphans.go).

func TestClientKeyOf(t *testing.T) {
	cases := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1234}, "192.0.2.7"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:192.0.2.7"), Port: 1234}, "192.0.2.7"},
		// An IPv6 client is its /64.
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), Port: 1}, "2001:db8:1:2::"},
		{&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::1"), Port: 1}, "2001:db8:1:2::"},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, "invalid IP"},
		{nil, "invalid IP"},
	}
	for _, c := range cases {
		if got := netip.Addr(clientKeyOf(c.addr)).String(); got != c.want {
			t.Errorf("clientKeyOf(%v) = %s, want %s", c.addr, got, c.want)
		}
	}
}

func TestOrphanLedger(t *testing.T) {
	var l orphanLedger
	l.init(3, 5)
	a := clientKeyOf(&net.TCPAddr{IP: net.ParseIP("192.0.2.1")})
	b := clientKeyOf(&net.TCPAddr{IP: net.ParseIP("192.0.2.2")})
	c := clientKeyOf(&net.TCPAddr{IP: net.ParseIP("192.0.2.3")})
	if !l.admit(a) {
		t.Fatal("a client with no orphans refused")
	}
	l.add(a, 2)
	if !l.admit(a) {
		t.Error("a client under its bound (2 of 3) refused")
	}
	l.add(a, 1)
	if l.admit(a) {
		t.Error("a client at its bound (3 of 3) admitted")
	}
	if !l.admit(b) {
		t.Error("another client refused for the first one's orphans")
	}
	l.add(b, 2) // 5 server-wide: the server's bound
	if l.admit(b) {
		t.Error("a client with orphans admitted past the server-wide bound")
	}
	if !l.admit(c) {
		t.Error("a client without orphans refused past the server-wide bound")
	}
	l.done(a)
	if !l.admit(a) || !l.admit(b) {
		t.Error("clients refused once under both bounds again")
	}
	l.done(a)
	l.done(a)
	l.done(b)
	l.done(b)
	if n := l.total.Load(); n != 0 || len(l.byClient) != 0 {
		t.Errorf("after every orphan returned: total %d, %d clients kept", n, len(l.byClient))
	}
	var off orphanLedger
	off.init(-1, -1)
	off.add(a, 1000)
	if !off.admit(a) {
		t.Error("refused with both bounds disabled")
	}
}

// orphanTarget serves /block (a handler that waits for release, ignoring
// its context) and anything else with "ok", on h2c and HTTP/1.1, on one
// API.
type orphanTarget struct {
	s       *Server
	addr    string
	release chan struct{}
	started atomic.Int32
}

func startOrphanTarget(t *testing.T, native bool, perClient, max int, opts ...func(*Server)) *orphanTarget {
	o := &orphanTarget{release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-o.release:
		default:
			close(o.release)
		}
	})
	s := &Server{Protocols: h2cProtocols(), ErrorLog: discardLog, MaxOrphanedHandlersPerClient: perClient, MaxOrphanedHandlers: max}
	if native {
		s.Native = func(c *Ctx) {
			if string(c.Path()) == "/block" {
				o.started.Add(1)
				<-o.release
			}
			c.WriteString("ok")
		}
	} else {
		s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/block" {
				o.started.Add(1)
				<-o.release
			}
			io.WriteString(w, "ok")
		})
	}
	for _, opt := range opts {
		opt(s)
	}
	o.s = s
	o.addr = startServer(t, s)
	return o
}

// dialFrom dials addr from the local IP address from ("" for any).
func dialFrom(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// h2From opens an h2c connection from the local address from: preface,
// SETTINGS, and the acknowledgement of the server's.
func h2From(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	c := dialFrom(t, addr, from)
	b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	if _, err := c.Write(h2.AppendSettingsAck(b)); err != nil {
		t.Fatal(err)
	}
	return c
}

// ping sends a PING on c and reads until its ACK, failing on GOAWAY or
// the end of the connection: the server has handled what came before.
func ping(t *testing.T, c net.Conn) {
	t.Helper()
	data := [8]byte{'o', 'r', 'p', 'h', 'a', 'n', 's', '!'}
	if _, err := c.Write(h2.AppendPing(nil, 0, data)); err != nil {
		t.Fatal(err)
	}
	f := readFrames(t, c, func(f *h2.Frame) bool {
		return f.Type == h2.FrameGoAway || f.Type == h2.FramePing && f.Flags.Has(h2.FlagAck) && f.PingData() == data
	})
	if f.Type == h2.FrameGoAway {
		t.Fatalf("GOAWAY %v %q before the PING's ACK", f.ErrCode(), f.DebugData())
	}
}

func waitOrphans(t *testing.T, s *Server, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.OrphanedHandlers() != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.OrphanedHandlers(); n != want {
		t.Fatalf("%d orphaned handlers, want %d", n, want)
	}
}

// orphanModes are the modes on which a client can leave handlers behind
// and be refused for them: hotpath's HTTP/2 engine's (h2, h2c), whose
// handlers outlive a closed connection, and HTTP/1.1 over TLS, which
// refuses a client its HTTP/2 connections to the same server left
// handlers behind. Not h1: a cleartext server without h2c speaks HTTP/1.1
// alone, whose handlers keep their connection and are never counted
// (MaxOrphanedHandlersPerClient's doc), so nothing is ever refused there
// (https1 runs the same HTTP/1.1 refusal); nor the hand-off's: net/http's
// HTTP/2 server runs those handlers, uncounted.
func orphanModes() []mode {
	var ms []mode
	for _, m := range allModes {
		if m.proto == "h2" || m.proto == "h2c" || m.proto == "https1" {
			ms = append(ms, m)
		}
	}
	return ms
}

// orphanServer serves, on a mode, /block (a handler that waits for
// release, ignoring its context) and anything else with "ok".
type orphanServer struct {
	m       mode
	s       *Server
	base    string
	c       *http.Client // the mode's client
	release chan struct{}
	started atomic.Int32
}

func serveOrphanTarget(t *testing.T, m mode, perClient, max int) *orphanServer {
	o := &orphanServer{m: m, release: make(chan struct{})}
	t.Cleanup(func() {
		select {
		case <-o.release:
		default:
			close(o.release)
		}
	})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			o.started.Add(1)
			<-o.release
		}
		io.WriteString(w, "ok")
	})
	nh := func(c *Ctx) {
		if string(c.Path()) == "/block" {
			o.started.Add(1)
			<-o.release
		}
		c.WriteString("ok")
	}
	o.s = &Server{MaxOrphanedHandlersPerClient: perClient, MaxOrphanedHandlers: max}
	o.base, o.c = m.serve(t, o.s, h, nh)
	return o
}

// clientFrom returns a client like the mode's that dials from the local
// IP address from ("" for any), over HTTP/2 if h2 (on https1 too: the
// server offers it there), and a function that closes every connection
// it dialed.
func (o *orphanServer) clientFrom(t *testing.T, from string, h2 bool) (*http.Client, func()) {
	tr := o.c.Transport.(*http.Transport).Clone()
	if h2 && !o.m.isH2() {
		tr.TLSNextProto, tr.ForceAttemptHTTP2 = nil, true
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	var mu sync.Mutex
	var conns []net.Conn
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}
	t.Cleanup(tr.CloseIdleConnections)
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(closeAll)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}, closeAll
}

// orphan starts n handlers from the address from over HTTP/2, then
// closes their connection under them: they run on as orphans.
func (o *orphanServer) orphan(t *testing.T, from string, n int) {
	t.Helper()
	c, closeAll := o.clientFrom(t, from, true)
	if resp, body := mustDo(t, c, mustRequest(t, "GET", o.base+"/")); resp.ProtoMajor != 2 || string(body) != "ok" {
		t.Fatalf("the orphaning client from %s: %s %q, want HTTP/2 ok", from, resp.Proto, body)
	}
	want := o.started.Load() + int32(n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if resp, err := c.Get(o.base + "/block"); err == nil {
				resp.Body.Close()
			}
		})
	}
	waitFor(t, fmt.Sprintf("%d handlers started from %s", n, from), func() bool { return o.started.Load() == want })
	closeAll()
	wg.Wait()
}

// get sends a request from c that Go's client cannot replay (a body with
// no GetBody), so that an HTTP/2 refusal (REFUSED_STREAM, which it
// retries otherwise) comes back as its error, and returns the status,
// the Retry-After, whether the connection closes, and the body.
func (o *orphanServer) get(c *http.Client) (status int, retryAfter string, closing bool, body string, err error) {
	req, _ := http.NewRequest("POST", o.base+"/", io.MultiReader(strings.NewReader("x")))
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", false, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, string(b), err
}

// checkRefused checks that a request from c is refused without a handler
// running: on HTTP/2 with REFUSED_STREAM, on HTTP/1.1 with a 503 that has
// a Retry-After, a reason naming MaxOrphanedHandlersPerClient, and the
// connection closed.
func (o *orphanServer) checkRefused(t *testing.T, c *http.Client, who string) {
	t.Helper()
	before := o.started.Load()
	status, retry, closing, body, err := o.get(c)
	switch {
	case o.m.isH2():
		if err == nil || !strings.Contains(err.Error(), "REFUSED_STREAM") {
			t.Errorf("%s over HTTP/2: %d %q %v; want the stream refused (REFUSED_STREAM)", who, status, body, err)
		}
	case status != 503 || retry == "" || !strings.Contains(body, "MaxOrphanedHandlersPerClient") || !closing:
		t.Errorf("%s over HTTP/1.1: %d, Retry-After %q, close %v, body %q, %v; want 503 with Retry-After, a reason naming MaxOrphanedHandlersPerClient, and the connection closed",
			who, status, retry, closing, body, err)
	}
	if n := o.started.Load(); n != before {
		t.Errorf("%s: a handler ran for a refused request", who)
	}
}

// checkServed checks that a request from c is answered by the handler.
func (o *orphanServer) checkServed(t *testing.T, c *http.Client, who string) {
	t.Helper()
	if status, _, _, body, err := o.get(c); err != nil || status != 200 || body != "ok" {
		t.Errorf("%s: %d %q %v, want 200 ok", who, status, body, err)
	}
}

// A client whose handlers outlive its HTTP/2 connections past
// MaxOrphanedHandlersPerClient is refused until they return, on HTTP/2
// (REFUSED_STREAM) and HTTP/1.1 (503 with Retry-After); another client is
// served all along. On orphanModes, both APIs.
func TestOrphansRefusedUntilTheyReturn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs a second loopback address (127.0.0.2)")
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		o := serveOrphanTarget(t, m, 3, 0)
		o.orphan(t, "127.0.0.1", 3)
		waitOrphans(t, o.s, 3)
		// The same client, on the mode's protocol: refused. (The mode's
		// client dials from 127.0.0.1, as the server's address is.)
		o.checkRefused(t, o.c, "a client over its bound")
		other, _ := o.clientFrom(t, "127.0.0.2", false)
		o.checkServed(t, other, "another client")
		if n := o.started.Load(); n != 3 {
			t.Errorf("%d handlers started, want 3", n)
		}
		// The handlers return: the client owes nothing, and is served.
		close(o.release)
		waitOrphans(t, o.s, 0)
		o.checkServed(t, o.c, "the client once its handlers returned")
	}, orphanModes()...)
}

// Past MaxOrphanedHandlers server-wide, clients with orphans are refused
// and clients without are served. On orphanModes, both APIs.
func TestOrphansServerWideBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs more loopback addresses")
	}
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		o := serveOrphanTarget(t, m, 100, 3)
		o.orphan(t, "127.0.0.1", 2)
		o.orphan(t, "127.0.0.2", 1)
		waitOrphans(t, o.s, 3)
		for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
			c, _ := o.clientFrom(t, from, false)
			o.checkRefused(t, c, from+" at the server-wide bound")
		}
		c, _ := o.clientFrom(t, "127.0.0.3", false)
		o.checkServed(t, c, "127.0.0.3, without orphans, at the server-wide bound")
	}, orphanModes()...)
}

// Handlers on live connections never count: one client with more
// handlers running than MaxOrphanedHandlersPerClient and
// MaxOrphanedHandlers, over several connections (as a reverse proxy or a
// fleet of SSE streams behind one address), is served in full, on every
// mode and both APIs. (On HTTP/1.1 each request has a connection of its
// own; on HTTP/2 each client below holds one.)
func TestOrphansLiveHandlersNeverRefused(t *testing.T) {
	const clients, each = 3, 12 // 36 live handlers against bounds of 10 and 15
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		o := serveOrphanTarget(t, m, 10, 15)
		results := make(chan string, clients*each)
		for range clients {
			c, _ := o.clientFrom(t, "", false)
			for range each {
				go func() {
					resp, err := c.Get(o.base + "/block")
					if err != nil {
						results <- err.Error()
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					results <- fmt.Sprint(resp.StatusCode, " ", string(b), " ", err)
				}()
			}
		}
		waitFor(t, "every handler started on live connections", func() bool { return o.started.Load() == clients*each })
		if n := o.s.OrphanedHandlers(); n != 0 {
			t.Errorf("%d orphaned handlers counted on live connections", n)
		}
		close(o.release)
		for range clients * each {
			if r := <-results; r != "200 ok <nil>" {
				t.Errorf("a request on a live connection: %s, want 200 ok", r)
			}
		}
		if n := o.s.OrphanedHandlers(); n != 0 {
			t.Errorf("%d orphaned handlers on live connections", n)
		}
	})
}
