package server

import (
	"bufio"
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
	s := &Server{EnableH2C: true, ErrorLog: discardLog, MaxOrphanedHandlersPerClient: perClient, MaxOrphanedHandlers: max}
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

// h1Get sends GET path over HTTP/1.1 from the local address from, and
// returns the response, its body read.
func h1Get(t *testing.T, addr, from, path string) (*http.Response, string) {
	t.Helper()
	c := dialFrom(t, addr, from)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
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

// A client whose handlers outlive its connections past
// MaxOrphanedHandlersPerClient is refused on HTTP/2 (REFUSED_STREAM) and
// HTTP/1.1 (503 with Retry-After) until they return; another client is
// served all along.
func TestOrphansRefusedUntilTheyReturn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs a second loopback address (127.0.0.2)")
	}
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			o := startOrphanTarget(t, api == "native", 3, 0)
			// Three handlers that ignore their context, then the client
			// closes the connection.
			c := h2From(t, o.addr, "127.0.0.1")
			var enc h2.Encoder
			var b []byte
			for id := uint32(1); id <= 5; id += 2 {
				b = h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, "/block"), 0)
			}
			c.Write(b)
			ping(t, c)
			c.Close()
			waitOrphans(t, o.s, 3)

			// HTTP/2 from the same client: refused.
			c = h2From(t, o.addr, "127.0.0.1")
			enc = h2.Encoder{}
			c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
			f := readFrames(t, c, func(f *h2.Frame) bool {
				return f.Type == h2.FrameRSTStream || f.Type == h2.FrameHeaders || f.Type == h2.FrameGoAway
			})
			if f.Type != h2.FrameRSTStream || f.ErrCode() != h2.ErrCodeRefusedStream {
				t.Errorf("HTTP/2 request from a client over its bound: %v %v, want RST_STREAM REFUSED_STREAM", f.Type, f.ErrCode())
			}
			// HTTP/1.1 from the same client: 503, Retry-After, a reason.
			resp, body := h1Get(t, o.addr, "127.0.0.1", "/")
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "MaxOrphanedHandlersPerClient") || !resp.Close {
				t.Errorf("HTTP/1.1 request from a client over its bound: %s, Retry-After %q, close %v, body %q; want 503 with Retry-After, a reason naming MaxOrphanedHandlersPerClient, and the connection closed",
					resp.Status, resp.Header.Get("Retry-After"), resp.Close, body)
			}
			// Another client: served, on both protocols.
			if resp, body := h1Get(t, o.addr, "127.0.0.2", "/"); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("another client over HTTP/1.1: %s %q, want 200 ok", resp.Status, body)
			}
			c2 := h2From(t, o.addr, "127.0.0.2")
			enc = h2.Encoder{}
			c2.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
			f = readFrames(t, c2, func(f *h2.Frame) bool {
				return f.Type == h2.FrameRSTStream || f.Type == h2.FrameHeaders || f.Type == h2.FrameGoAway
			})
			if f.Type != h2.FrameHeaders {
				t.Errorf("another client over HTTP/2: %v %v, want a response", f.Type, f.ErrCode())
			}
			if n := o.started.Load(); n != 3 {
				t.Errorf("%d handlers started, want 3", n)
			}
			// The handlers return: the client owes nothing, and is served.
			close(o.release)
			waitOrphans(t, o.s, 0)
			if resp, body := h1Get(t, o.addr, "127.0.0.1", "/"); resp.StatusCode != 200 || body != "ok" {
				t.Errorf("the client once its handlers returned: %s %q, want 200 ok", resp.Status, body)
			}
		})
	}
}

// Past MaxOrphanedHandlers server-wide, clients with orphans are refused
// and clients without are served.
func TestOrphansServerWideBound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs more loopback addresses")
	}
	o := startOrphanTarget(t, false, 100, 3)
	orphan := func(from string, n int) {
		c := h2From(t, o.addr, from)
		var enc h2.Encoder
		var b []byte
		for i := range n {
			b = h2.AppendHeaders(b, uint32(2*i+1), h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, "/block"), 0)
		}
		c.Write(b)
		ping(t, c)
		c.Close()
	}
	orphan("127.0.0.1", 2)
	orphan("127.0.0.2", 1)
	waitOrphans(t, o.s, 3)
	for _, c := range []struct {
		from string
		want int
	}{{"127.0.0.1", 503}, {"127.0.0.2", 503}, {"127.0.0.3", 200}} {
		if resp, _ := h1Get(t, o.addr, c.from, "/"); resp.StatusCode != c.want {
			t.Errorf("%s at the server-wide bound: %s, want %d", c.from, resp.Status, c.want)
		}
	}
}

// Handlers on live connections never count: one client with more
// handlers running than MaxOrphanedHandlersPerClient, over several
// connections (as a reverse proxy or a fleet of SSE streams behind one
// address), is served in full, on both APIs.
func TestOrphansLiveHandlersNeverRefused(t *testing.T) {
	const conns, streams = 3, 40 // 120 live handlers against a bound of 20
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			o := startOrphanTarget(t, api == "native", 20, 30)
			var cs []net.Conn
			for range conns {
				c := h2From(t, o.addr, "")
				var enc h2.Encoder
				var b []byte
				for i := range streams {
					b = h2.AppendHeaders(b, uint32(2*i+1), h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlockPath(&enc, "/block"), 0)
				}
				c.Write(b)
				cs = append(cs, c)
			}
			deadline := time.Now().Add(10 * time.Second)
			for o.started.Load() < conns*streams && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := o.started.Load(); n != conns*streams {
				t.Fatalf("%d of %d handlers started on live connections", n, conns*streams)
			}
			close(o.release)
			var wg sync.WaitGroup
			for _, c := range cs {
				wg.Go(func() {
					ended := 0
					readFrames(t, c, func(f *h2.Frame) bool {
						if f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway {
							t.Errorf("%v %v on a live connection", f.Type, f.ErrCode())
							return true
						}
						if (f.Type == h2.FrameData || f.Type == h2.FrameHeaders) && f.Flags.Has(h2.FlagEndStream) {
							ended++
						}
						return ended == streams
					})
				})
			}
			wg.Wait()
			if n := o.s.OrphanedHandlers(); n != 0 {
				t.Errorf("%d orphaned handlers on live connections", n)
			}
		})
	}
}
