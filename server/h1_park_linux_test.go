package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hotpathhq/hotpath/internal/park"
)

// Idle connections without a goroutine (h1_park.go), on every mode they
// apply to: HTTP/1.1, cleartext and TLS, both APIs.

// parkModes are the modes whose idle connections park.
var parkModes = []mode{{"h1", false}, {"h1", true}, {"https1", false}, {"https1", true}}

// parkedConns returns how many of s's connections are parked.
func parkedConns(s *Server) int {
	n := 0
	for _, ps := range s.parks {
		n += ps.Parked()
	}
	return n
}

// waitParked waits until n of s's connections are parked, and checks that
// they gave their working state back.
func waitParked(t *testing.T, s *Server, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for parkedConns(s) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections parked, want %d", parkedConns(s), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	// Under the sets' mutexes, which order these reads before any wake.
	for _, ps := range s.parks {
		ps.Each(func(p park.Parker) {
			if c, ok := p.(*conn); ok && c.connWork != nil {
				t.Errorf("a parked connection holds a working state")
			}
		})
	}
}

// parkHandlers answer with the request's path (and, for the handler API,
// what a test asks of its context).
var (
	parkHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) })
	parkNative  = func(c *Ctx) { c.Write(c.Path()) }
)

// serveParked starts s on m and returns a raw connection to it (TLS with
// ALPN http/1.1 on https1) that has had one GET answered and is parked.
func serveParked(t *testing.T, m mode, s *Server, h http.Handler, nh func(*Ctx)) (net.Conn, *bufio.Reader, func() net.Conn) {
	t.Helper()
	if h == nil {
		h = parkHandler
	}
	if nh == nil {
		nh = parkNative
	}
	base, client := m.serve(t, s, h, nh)
	nc := dialMode(t, m, base, client)
	br := bufio.NewReader(nc)
	get(t, nc, br, "/first")
	waitParked(t, s, 1, 5*time.Second)
	return nc, br, func() net.Conn { return dialMode(t, m, base, client) }
}

// dialMode opens a raw connection to base, as m's client would.
func dialMode(t *testing.T, m mode, base string, client *http.Client) net.Conn {
	t.Helper()
	addr := base[strings.Index(base, "//")+2:]
	var nc net.Conn
	var err error
	if m.cleartext() {
		nc, err = net.Dial("tcp", addr)
	} else {
		cfg := client.Transport.(*http.Transport).TLSClientConfig.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		nc, err = tls.Dial("tcp", addr, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { nc.Close() })
	return nc
}

// get sends a GET for path and checks that the answer is the path.
func get(t *testing.T, nc net.Conn, br *bufio.Reader, path string) *http.Response {
	t.Helper()
	fmt.Fprintf(nc, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	resp, body := readResponse(t, br, "GET")
	if resp.StatusCode != 200 || body != path {
		t.Fatalf("GET %s: %d %q", path, resp.StatusCode, body)
	}
	return resp
}

// TestParkWakeMany parks 10,000 connections, checks that they hold no
// goroutine and no working state, wakes them all with one request each
// and checks that every one is answered, on both APIs. The clients run
// in a process of their own (this test binary, TestParkWakeManyClient):
// a process may hold 20,000 descriptors on the machines this runs on.
//
// Modes: HTTP/1.1 over TCP: parking (the epoll sets) is per engine;
// HTTP/2's: h2_park_linux_test.go.
func TestParkWakeMany(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 10,000 connections")
	}
	raiseNoFile(t, 11000)
	for _, native := range []bool{false, true} {
		n := 10000
		if native {
			n = 2000 // the same engine; the handler API has the larger working state
		}
		t.Run(map[bool]string{true: "native", false: "handler"}[native], func(t *testing.T) {
			s := &Server{ErrorLog: discardLog}
			if native {
				s.Native = func(c *Ctx) { c.WriteString("Hello, World!") }
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Hello, World!") })
			}
			addr := startServer(t, s)
			cmd := exec.Command(os.Args[0], "-test.run=^TestParkWakeManyClient$")
			cmd.Env = append(os.Environ(), "HOTPATH_PARK_CLIENT="+addr, fmt.Sprintf("HOTPATH_PARK_N=%d", n))
			cmd.Stderr = os.Stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
			lines := bufio.NewScanner(stdout)
			expect := func(prefix string) string {
				t.Helper()
				for lines.Scan() {
					if l := lines.Text(); strings.HasPrefix(l, prefix) {
						return l
					}
				}
				t.Fatalf("client process: no %q line (%v)", prefix, lines.Err())
				return ""
			}
			t.Log(expect("ready "))
			waitParked(t, s, n, 30*time.Second)
			if g := runtime.NumGoroutine(); g > n/20 {
				t.Errorf("%d goroutines with %d connections parked", g, n)
			}
			io.WriteString(stdin, "wake\n")
			if l := expect("answered "); l != fmt.Sprintf("answered %d", n) {
				t.Errorf("client process: %q, want every one of %d answered", l, n)
			}
			waitParked(t, s, n, 60*time.Second)
			io.WriteString(stdin, "close\n")
			expect("closed")
			waitParked(t, s, 0, 60*time.Second)
		})
	}
}

// TestParkWakeManyClient is TestParkWakeMany's client process: run by
// it, it does nothing otherwise. It opens HOTPATH_PARK_N connections to
// HOTPATH_PARK_CLIENT, sends one request on each and reads the answer,
// then prints "ready"; on "wake" from stdin it sends one more request on
// every connection and prints how many were answered; on "close" it
// closes them all.
func TestParkWakeManyClient(t *testing.T) {
	addr := os.Getenv("HOTPATH_PARK_CLIENT")
	if addr == "" {
		t.Skip("TestParkWakeMany's client process")
	}
	var n int
	fmt.Sscan(os.Getenv("HOTPATH_PARK_N"), &n)
	raiseNoFile(t, uint64(n)+1000)
	// The length of a response (fixed: Date has a fixed width).
	respLen := 0
	{
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(nc, wrkGET)
		var buf [4096]byte
		for !bytes.HasSuffix(buf[:respLen], []byte("Hello, World!")) {
			k, err := nc.Read(buf[respLen:])
			if err != nil {
				t.Fatal(err)
			}
			respLen += k
		}
		nc.Close()
	}
	conns := make([]net.Conn, n)
	parallel := func(f func(i int, buf []byte) error) int {
		var next, failed atomic.Int64
		var once sync.Once
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				buf := make([]byte, 4096)
				for {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					if err := f(i, buf); err != nil {
						failed.Add(1)
						once.Do(func() { fmt.Fprintf(os.Stderr, "client process: connection %d: %v\n", i, err) })
					}
				}
			})
		}
		wg.Wait()
		return n - int(failed.Load())
	}
	roundTrip := func(i int, buf []byte) error {
		nc := conns[i]
		if nc == nil {
			return fmt.Errorf("not open")
		}
		nc.SetDeadline(time.Now().Add(60 * time.Second))
		if _, err := io.WriteString(nc, wrkGET); err != nil {
			return err
		}
		if _, err := io.ReadFull(nc, buf[:respLen]); err != nil {
			return err
		}
		if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf[:respLen], []byte("Hello, World!")) {
			return fmt.Errorf("response %q", buf[:respLen])
		}
		return nil
	}
	start := time.Now()
	opened := parallel(func(i int, buf []byte) error {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		conns[i] = nc
		return roundTrip(i, buf)
	})
	fmt.Printf("ready %d connections answered in %v\n", opened, time.Since(start))
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "wake":
			// Every request first, then every answer: all wake at once.
			parallel(func(i int, buf []byte) error {
				_, err := io.WriteString(conns[i], wrkGET)
				return err
			})
			answered := parallel(func(i int, buf []byte) error {
				conns[i].SetReadDeadline(time.Now().Add(60 * time.Second))
				if _, err := io.ReadFull(conns[i], buf[:respLen]); err != nil {
					return err
				}
				if !bytes.HasSuffix(buf[:respLen], []byte("Hello, World!")) {
					return fmt.Errorf("response %q", buf[:respLen])
				}
				return nil
			})
			fmt.Printf("answered %d\n", answered)
		case "close":
			for _, nc := range conns {
				if nc != nil {
					nc.(*net.TCPConn).SetLinger(0) // no TIME_WAIT pile
					nc.Close()
				}
			}
			fmt.Println("closed")
			return
		}
	}
}

// A parked connection is closed at its IdleTimeout, from the readiness
// set's timer, as a waiting one is by its read deadline.
func TestParkIdleTimeout(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		closed := make(chan time.Time, 1)
		// 1 s: serveParked must see the connection parked before it
		// closes (under CPU stress its wait took 300 ms).
		s := &Server{IdleTimeout: time.Second, ConnState: func(nc net.Conn, st ConnState) {
			if st == StateClosed {
				closed <- time.Now()
			}
		}}
		// The idle timeout runs from the response's end, which comes
		// after start: a close sooner than 1 s after start is early,
		// whatever serveParked's wait for the park took (under CPU stress
		// it took 300 ms, and a clock started after it read 95 ms).
		start := time.Now()
		nc, br, _ := serveParked(t, m, s, nil, nil)
		if _, err := br.ReadByte(); err == nil {
			t.Fatal("the server sent a byte on an idle connection")
		}
		took := time.Since(start)
		if took < time.Second || took > 6*time.Second {
			t.Errorf("closed %v after the request, IdleTimeout 1s", took)
		}
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
			t.Error("no StateClosed")
		}
		if p := parkedConns(s); p != 0 {
			t.Errorf("%d connections still parked", p)
		}
		nc.Close()
	}, parkModes...)
}

// Shutdown closes parked connections at once, and serves a request that
// reaches a parked connection as Shutdown begins, with Connection: close.
func TestParkShutdown(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		base, client := m.serve(t, s, parkHandler, parkNative)
		var ncs []net.Conn
		var brs []*bufio.Reader
		for i := range 4 {
			nc := dialMode(t, m, base, client)
			br := bufio.NewReader(nc)
			get(t, nc, br, fmt.Sprintf("/%d", i))
			ncs, brs = append(ncs, nc), append(brs, br)
		}
		waitParked(t, s, 4, 5*time.Second)
		// Connection 0's request leaves just before Shutdown, 1's just
		// after it began; 2 and 3 stay silent.
		io.WriteString(ncs[0], "GET /before HTTP/1.1\r\nHost: x\r\n\r\n")
		start := time.Now()
		shut := make(chan error, 1)
		go func() { shut <- s.Shutdown(context.Background()) }()
		waitFor(t, "Shutdown to begin", s.shutting.Load) // not a sleep: a loaded machine may take longer
		io.WriteString(ncs[1], "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
		for i, path := range []string{"/before", "/after"} {
			resp, body := readResponse(t, brs[i], "GET")
			if resp.StatusCode != 200 || body != path {
				t.Errorf("%s: %d %q", path, resp.StatusCode, body)
			}
			if i == 1 && !resp.Close {
				t.Errorf("%s: answered without Connection: close during Shutdown", path)
			}
			expectClosed(t, brs[i])
		}
		for _, br := range brs[2:] {
			expectClosed(t, br)
		}
		select {
		case err := <-shut:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Shutdown did not return")
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("Shutdown took %v with parked connections", took)
		}
	}, parkModes...)
}

// ConnState sees a parked and woken connection as any idle one:
// new, active, idle, active, idle, closed.
func TestParkConnState(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		var rec connStates
		s := &Server{ConnState: rec.hook}
		nc, br, _ := serveParked(t, m, s, nil, nil)
		get(t, nc, br, "/second")
		waitParked(t, s, 1, 5*time.Second)
		nc.Close()
		want := fmt.Sprint([]ConnState{StateNew, StateActive, StateIdle, StateActive, StateIdle, StateClosed})
		waitFor(t, "StateClosed", func() bool { return rec.last() == StateClosed })
		if got := fmt.Sprint(rec.states()); got != want {
			t.Errorf("states %v, want %v", got, want)
		}
	}, parkModes...)
}

// Pipelined requests that reach a parked connection in one write are all
// answered, in order.
func TestParkPipelinedBurst(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		nc, br, _ := serveParked(t, m, s, nil, nil)
		var b strings.Builder
		for i := range 8 {
			fmt.Fprintf(&b, "GET /p%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
		}
		io.WriteString(nc, b.String())
		for i := range 8 {
			resp, body := readResponse(t, br, "GET")
			if want := fmt.Sprintf("/p%d", i); resp.StatusCode != 200 || body != want {
				t.Fatalf("response %d: %d %q, want %q", i, resp.StatusCode, body, want)
			}
		}
		waitParked(t, s, 1, 5*time.Second)
	}, parkModes...)
}

// A client that half-closes a parked connection after a last request
// gets its answer, then the close; one that half-closes with nothing
// sent sees the connection closed.
func TestParkHalfClose(t *testing.T) {
	type closeWriter interface{ CloseWrite() error }
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		nc, br, redial := serveParked(t, m, s, nil, nil)
		io.WriteString(nc, "GET /last HTTP/1.1\r\nHost: x\r\n\r\n")
		nc.(closeWriter).CloseWrite()
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "/last" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
		expectClosed(t, br)

		nc2 := redial()
		br2 := bufio.NewReader(nc2)
		get(t, nc2, br2, "/one")
		waitParked(t, s, 1, 5*time.Second)
		nc2.(closeWriter).CloseWrite()
		expectClosed(t, br2)
		waitParked(t, s, 0, 5*time.Second)
	}, parkModes...)
}

// A request head that reaches a parked connection in two pieces is
// served; one whose rest never comes is cut at ReadHeaderTimeout, not at
// IdleTimeout.
func TestParkSplitHead(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{ReadHeaderTimeout: 300 * time.Millisecond}
		nc, br, _ := serveParked(t, m, s, nil, nil)
		io.WriteString(nc, "GET /split HTTP/1.1\r\nHo")
		time.Sleep(50 * time.Millisecond)
		io.WriteString(nc, "st: x\r\n\r\n")
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != "/split" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
		waitParked(t, s, 1, 5*time.Second)
		start := time.Now()
		io.WriteString(nc, "GET /never HTTP/1.1\r\nHo")
		expectClosed(t, br)
		if took := time.Since(start); took < 250*time.Millisecond || took > 2*time.Second {
			t.Errorf("an unfinished head was cut after %v, ReadHeaderTimeout 300ms", took)
		}
	}, parkModes...)
}

// MaxRequestsPerConn counts the requests of a connection across parks.
func TestParkMaxRequestsPerConn(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{MaxRequestsPerConn: 3}
		nc, br, _ := serveParked(t, m, s, nil, nil)
		if resp := get(t, nc, br, "/2"); resp.Close {
			t.Fatal("second request: Connection: close")
		}
		waitParked(t, s, 1, 5*time.Second)
		if resp := get(t, nc, br, "/3"); !resp.Close {
			t.Fatal("third request of 3: no Connection: close")
		}
		expectClosed(t, br)
	}, parkModes...)
}

// The context of a connection's requests (BaseContext, ConnContext,
// LocalAddrContextKey), its RemoteAddr and TLS state survive its parks.
func TestParkConnContext(t *testing.T) {
	type key struct{}
	type connValue struct{ remote string }
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, key{}, &connValue{remote: c.RemoteAddr().String()})
		}}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, _ := r.Context().Value(key{}).(*connValue)
			la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
			srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
			if v == nil || la == nil || srv == nil {
				http.Error(w, "context values lost", 500)
				return
			}
			fmt.Fprintf(w, "%p %s %s %v", v, v.remote, r.RemoteAddr, r.TLS != nil)
		})
		base, client := m.serve(t, s, h, nil)
		nc := dialMode(t, m, base, client)
		br := bufio.NewReader(nc)
		var first string
		for i := range 3 {
			io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, body := readResponse(t, br, "GET")
			if resp.StatusCode != 200 {
				t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
			}
			f := strings.Fields(body)
			if f[1] != f[2] || f[1] != nc.LocalAddr().String() || f[3] != fmt.Sprint(!m.cleartext()) {
				t.Fatalf("request %d: %q (client %s)", i, body, nc.LocalAddr())
			}
			if i == 0 {
				first = body
			} else if body != first {
				t.Fatalf("after a park: %q, before: %q", body, first)
			}
			waitParked(t, s, 1, 5*time.Second)
		}
	}, parkModes[0], parkModes[2])
}

// Close ends parked connections too, and returns.
func TestParkClose(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		closed := make(chan struct{}, 1)
		s := &Server{ConnState: func(_ net.Conn, st ConnState) {
			if st == StateClosed {
				closed <- struct{}{}
			}
		}}
		_, br, _ := serveParked(t, m, s, nil, nil)
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not return with a parked connection")
		}
		<-closed
		expectClosed(t, br)
	}, parkModes...)
}

// With parking off (HOTPATH_IDLEPARK=off, here the test knob), idle
// connections wait on their goroutines as before.
//
// Modes: HTTP/1.1 over TCP: parking (the epoll sets) is per engine;
// HTTP/2's: h2_park_linux_test.go.
func TestParkOff(t *testing.T) {
	s := &Server{Native: parkNative, noIdlePark: true}
	addr := startServer(t, s)
	nc := dial(t, addr)
	br := bufio.NewReader(nc)
	get(t, nc, br, "/x")
	time.Sleep(3 * parkGrace)
	if len(s.parks) != 0 || parkedConns(s) != 0 {
		t.Fatal("a connection parked with parking off")
	}
	get(t, nc, br, "/y")
}

// Over TLS, a request whose record crypto/tls already holds (it came with
// the previous one, in the same read of the socket) is served, not left
// in crypto/tls's buffer while the connection parks on an empty socket.
func TestParkTLSRecordHeld(t *testing.T) {
	m := mode{"https1", true}
	s := &Server{}
	base, client := m.serve(t, s, parkHandler, parkNative)
	addr := base[len("https://"):]
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	bw := &heldWriter{Conn: raw}
	cfg := client.Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	cfg.ServerName, _, _ = net.SplitHostPort(addr)
	tc := tls.Client(bw, cfg)
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(tc)
	get(t, tc, br, "/first")
	waitParked(t, s, 1, 5*time.Second)
	// Two records, one write to the socket.
	bw.hold = true
	io.WriteString(tc, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
	io.WriteString(tc, "GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
	bw.release()
	for _, path := range []string{"/a", "/b"} {
		if resp, body := readResponse(t, br, "GET"); resp.StatusCode != 200 || body != path {
			t.Fatalf("%s: %d %q", path, resp.StatusCode, body)
		}
	}
}

// heldWriter is a net.Conn whose writes, while hold is set, wait to be
// written together.
type heldWriter struct {
	net.Conn
	hold bool
	buf  []byte
}

func (w *heldWriter) Write(p []byte) (int, error) {
	if w.hold {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	return w.Conn.Write(p)
}

func (w *heldWriter) release() {
	w.hold = false
	w.Conn.Write(w.buf)
	w.buf = nil
}

// raiseNoFile lifts RLIMIT_NOFILE to want for the test, or skips it.
func raiseNoFile(t *testing.T, want uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	if lim.Cur >= want {
		return
	}
	old := lim
	lim.Cur = want
	lim.Max = max(lim.Max, want)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("this test needs %d open files; RLIMIT_NOFILE is %d (hard %d) and cannot be raised: %v", want, old.Cur, old.Max, err)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// A parked connection is its conn struct (besides the socket and what Go
// keeps of it): keep it at 160 bytes, a size class of Go's allocator, on
// 64-bit platforms. A field added must find room or take a field out.
func TestParkedConnSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("64-bit layout")
	}
	if n := unsafe.Sizeof(conn{}); n > 160 {
		t.Errorf("conn is %d bytes, want at most 160", n)
	}
}

// A client that sends its requests one after the other never finds its
// connection parked (parkGrace): parking is for idle connections, and
// costs a busy one nothing.
func TestParkNotForBusyClients(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		base, client := m.serve(t, s, parkHandler, parkNative)
		nc := dialMode(t, m, base, client)
		br := bufio.NewReader(nc)
		const n = 300
		for i := range n {
			get(t, nc, br, fmt.Sprintf("/%d", i))
		}
		parks := uint32(0)
		for _, ps := range s.parks {
			parks += ps.Parks()
		}
		if parks > n/100 {
			t.Errorf("%d parks in %d back-to-back requests", parks, n)
		}
		waitParked(t, s, 1, 5*time.Second) // and idle, it parks
	}, parkModes...)
}

// A ResponseWriter (and Request) a handler's goroutine keeps past the
// handler's return (which net/http forbids) stays dead once the
// connection parks and its working state serves another connection:
// TestStaleResponseWriter's late calls, made while a request of a second
// connection runs, fail or do nothing, and reach neither that response
// nor the first connection's next one.
func TestParkLeakedResponseWriter(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		kept := make(chan [2]any, 1)
		started, proceed := make(chan struct{}), make(chan struct{})
		s := &Server{}
		base, client := m.serve(t, s, staleHandler(kept, started, proceed), nil)
		nc := dialMode(t, m, base, client)
		br := bufio.NewReader(nc)
		post := func(nc net.Conn, path, body string) {
			fmt.Fprintf(nc, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
		}
		post(nc, "/1", "first-body")
		if resp, body := readResponse(t, br, "POST"); resp.StatusCode != 200 || body != "one" {
			t.Fatalf("first response: %d %q", resp.StatusCode, body)
		}
		k := <-kept
		w, r := k[0].(http.ResponseWriter), k[1].(*http.Request)
		waitParked(t, s, 1, 5*time.Second)

		nc2 := dialMode(t, m, base, client)
		br2 := bufio.NewReader(nc2)
		post(nc2, "/2", "second-body")
		<-started
		for _, b := range staleUse(w, r, false, false) {
			t.Error(b)
		}
		close(proceed)
		resp, body := readResponse(t, br2, "POST")
		checkSecond(t, resp, []byte(body))
		get(t, nc, br, "/next") // get checks the body is exactly the path
	}, mode{"h1", false}, mode{"https1", false})
}

// A connection woken after a long park reads what woke it, then parks
// again: one park per request. (Over TLS a first read that did not wait
// once left the request in the socket and parked again, which under a
// wake-up of thousands became a livelock: the second wake came after the
// grace, and did the same.)
func TestParkWakeReadsFirst(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		nc, br, _ := serveParked(t, m, s, nil, nil)
		parks := func() uint32 {
			n := uint32(0)
			for _, ps := range s.parks {
				n += ps.Parks()
			}
			return n
		}
		for i := range 3 {
			time.Sleep(2 * parkGrace) // a long park: noGrace after the wake
			before := parks()
			get(t, nc, br, fmt.Sprintf("/%d", i))
			waitParked(t, s, 1, 5*time.Second)
			if d := parks() - before; d != 1 {
				t.Errorf("request %d: %d parks, want 1", i, d)
			}
		}
	}, parkModes...)
}

// A readiness set whose connections all left stops its waiter after
// park.Linger; the next connection to park starts a new one, possibly
// while the old one is still on its way out. Under -race this caught two
// waiters of one set sharing their scratch (the events and the woken
// list): each waiter now has its own.
func TestParkSetRestarts(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		nc, _, dial := serveParked(t, m, s, nil, nil)
		nc.Close() // wakes it; its goroutine ends and the set is empty
		deadline := time.Now().Add(park.Linger + 3*time.Second)
		for running := true; running; {
			running = false
			for _, ps := range s.parks {
				running = running || ps.Running()
			}
			if running && time.Now().After(deadline) {
				t.Fatal("an empty readiness set kept its waiter past park.Linger")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// One connection per set (they are dealt round-robin), each
		// parked under a new waiter and woken by it.
		ncs := make([]net.Conn, len(s.parks))
		brs := make([]*bufio.Reader, len(ncs))
		for i := range ncs {
			ncs[i] = dial()
			brs[i] = bufio.NewReader(ncs[i])
			get(t, ncs[i], brs[i], "/before")
		}
		waitParked(t, s, len(ncs), 5*time.Second)
		for i := range ncs {
			get(t, ncs[i], brs[i], "/after")
		}
	}, parkModes...)
}

// The sweep that ends grace waits keeps nothing of connections that
// parked or ended, and its goroutine ends when no connection waits: an
// idle server has no timer running.
func TestGraceSweepLetsGo(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		s := &Server{}
		nc, br, dial := serveParked(t, m, s, nil, nil)
		other := dial()
		obr := bufio.NewReader(other)
		get(t, other, obr, "/other")
		waitParked(t, s, 2, 5*time.Second)
		if n := sweepMembers(s); n != 0 {
			t.Errorf("%d working states on the sweep's lists with every connection parked", n)
		}
		waitFor(t, "the sweep's goroutine to end", func() bool { return !s.grace.running.Load() })

		// Closed by the client in its grace wait (the read after the
		// answer finds nothing: the client reads the answer first): it
		// ends and leaves the lists.
		fresh := dial()
		get(t, fresh, bufio.NewReader(fresh), "/fresh")
		fresh.Close()
		waitFor(t, "the closed connection to leave the sweep's lists", func() bool { return sweepMembers(s) == 0 })
		waitFor(t, "the sweep's goroutine to end", func() bool { return !s.grace.running.Load() })
		get(t, nc, br, "/again")
		get(t, other, obr, "/still")
	}, parkModes...)
}

// The grace wait keeps the connection's IdleTimeout: the sweep ends the
// wait by moving the read deadline, and the deadline in force goes back
// before the connection parks, so it closes at its IdleTimeout, neither
// sooner nor never.
func TestGraceKeepsIdleTimeout(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		idle := 3 * parkGrace
		s := &Server{IdleTimeout: idle}
		base, client := m.serve(t, s, parkHandler, parkNative)
		nc := dialMode(t, m, base, client)
		br := bufio.NewReader(nc)
		get(t, nc, br, "/first")
		sent := time.Now()        // the idle timeout runs from the response's end, after this
		get(t, nc, br, "/second") // IdleTimeout, not ReadHeaderTimeout, from here
		if _, err := br.ReadByte(); err == nil {
			t.Fatal("the server sent a byte on an idle connection")
		}
		// The idle deadline is renewed lazily (renewReadDeadline): the
		// one the first request's end set stays while the second's
		// would be within IdleTimeout/8 of it, and the first began
		// before sent. So the close comes no sooner than IdleTimeout less
		// that slack after sent (under CPU stress the two requests came
		// 3.5 ms apart and it closed 56.5 ms after sent, of 60); the
		// grace wait (20 ms) ending it instead would be far sooner.
		if took := time.Since(sent); took < idle-idle/8 || took > 5*time.Second {
			t.Errorf("closed %v after the last request was sent, IdleTimeout %v (less %v of lazy renewal's slack)", took, idle, idle/8)
		}
	}, parkModes...)
}
