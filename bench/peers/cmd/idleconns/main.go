//go:build unix

// Command idleconns opens many idle keep-alive connections to an HTTP/1.1
// server (or, with -h2c, HTTP/2 connections with prior knowledge) so that
// bench/server.sh and bench/h2.sh can read what each one costs the server
// in resident memory.
//
// Each connection sends one "GET / HTTP/1.1" request and reads the whole
// response, so the server has accepted it, parsed a request and written a
// response (its per-connection buffers are in the state a real, idle
// keep-alive client leaves them in). Then every connection stays open and
// silent for -hold, or until SIGINT or SIGTERM.
//
// Connections come from several loopback source addresses (-src; by
// default one per 10,000 connections: 127.0.0.1, 127.0.0.2, ...), so that
// tens of thousands of them do not exhaust one address's ephemeral ports.
//
// With -wake, SIGUSR1 starts the wake phase: every open connection sends
// one more request at the same instant (a goroutine each, released
// together) and reads its response; each connection's latency runs from
// its own write to the end of its response.
//
// Output is lines for scripts, on stdout:
//
//	ready open=10000 failed=0 elapsed=1.234s
//	woke sent=10000 answered=10000 p50_ms=12.3 p99_ms=45.6 max_ms=50.1 elapsed_ms=60.2
//	done alive=10000 open=10000
//
// "ready" is printed once every connection has its response; read the
// server's memory then. "woke" (with -wake, after SIGUSR1) is printed once
// every woken connection has its response or failed (-timeout). "done" is
// printed at the end after checking, without blocking, which connections
// the server has closed in the meantime: if alive is less than open, the
// server dropped idle connections and its memory figure is not per
// connection.
//
// Example:
//
//	idleconns -n 10000 -addr 127.0.0.1:8080 -hold 60s
//	idleconns -n 18000 -addr 127.0.0.1:8080 -wake -wake-out /tmp/lat.txt &
//	kill -USR1 $!    # once "ready": wake them all
package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

func main() {
	n := flag.Int("n", 10000, "number of keep-alive connections to open")
	addr := flag.String("addr", "127.0.0.1:8080", "server address, host:port")
	path := flag.String("path", "/", "request path sent once on each connection")
	hold := flag.Duration("hold", 60*time.Second, "how long to hold the connections idle after \"ready\" (SIGINT/SIGTERM ends it early)")
	parallel := flag.Int("parallel", 32, "connections being opened at the same time")
	timeout := flag.Duration("timeout", 10*time.Second, "dial and response timeout per connection")
	flag.BoolVar(&useTLS, "tls", false, "connect with TLS (HTTP/1.1 by ALPN, the certificate not verified: for hotpath serve --tls)")
	flag.BoolVar(&useH2C, "h2c", false, "speak HTTP/2 with prior knowledge (for hotpath serve --h2c): one stream per connection, then idle")
	src := flag.String("src", "auto", "comma-separated local `addresses` the connections come from, in turn (auto: 127.0.0.1, 127.0.0.2, ... one per 10,000 connections)")
	wakeOn := flag.Bool("wake", false, "on SIGUSR1, send one more request on every connection at once and report the latencies")
	wakeOut := flag.String("wake-out", "", "with -wake, write each answered connection's wake-up latency to `file`, in microseconds, one per line")
	flag.Parse()
	sources, err := localAddrs(*src, *n)
	if err != nil {
		fmt.Fprintf(os.Stderr, "idleconns: -src: %v\n", err)
		os.Exit(2)
	}
	if *n < 1 || *parallel < 1 {
		fmt.Fprintln(os.Stderr, "idleconns: -n and -parallel must be at least 1")
		os.Exit(2)
	}

	if err := raiseNoFile(uint64(*n) + 64); err != nil {
		fmt.Fprintf(os.Stderr, "idleconns: %v\n", err)
		os.Exit(1)
	}

	start := time.Now()
	conns := make([]net.Conn, *n)
	var failed atomic.Int64
	var firstErr sync.Once
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for w := 0; w < min(*parallel, *n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= *n {
					return
				}
				c, err := open(sources[i%len(sources)], *addr, *path, *timeout)
				if err != nil {
					failed.Add(1)
					firstErr.Do(func() { fmt.Fprintf(os.Stderr, "idleconns: connection %d: %v\n", i, err) })
					continue
				}
				conns[i] = c
			}
		}()
	}
	wg.Wait()

	open := 0
	for _, c := range conns {
		if c != nil {
			open++
		}
	}
	fmt.Printf("ready open=%d failed=%d elapsed=%.3fs\n", open, failed.Load(), time.Since(start).Seconds())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	usr1 := make(chan os.Signal, 1)
	if *wakeOn {
		signal.Notify(usr1, syscall.SIGUSR1)
	}
	end := time.After(*hold)
wait:
	for {
		select {
		case <-sig:
			break wait
		case <-end:
			break wait
		case <-usr1:
			wake(conns, *addr, *path, *timeout, *wakeOut)
		}
	}

	alive := 0
	for _, c := range conns {
		if c != nil && isAlive(c) {
			alive++
		}
	}
	fmt.Printf("done alive=%d open=%d\n", alive, open)
	// Close with a reset, not a FIN: a FIN leaves n sockets in TIME_WAIT on
	// this side, and a few runs of 10k connections would exhaust the
	// ephemeral ports of the loopback address.
	for _, c := range conns {
		if c != nil {
			c = underlying(c)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			c.Close()
		}
	}
	if open == 0 {
		os.Exit(1)
	}
}

// useTLS makes open dial TLS.
var useTLS bool

// useH2C makes open speak HTTP/2 with prior knowledge.
var useH2C bool

// localAddrs parses -src: the local addresses connections are dialed from.
func localAddrs(src string, n int) ([]*net.TCPAddr, error) {
	var ips []string
	if src == "auto" {
		for i := 0; i < max(1, (n+9999)/10000); i++ {
			ips = append(ips, fmt.Sprintf("127.0.0.%d", 1+i))
		}
	} else {
		ips = strings.Split(src, ",")
	}
	var addrs []*net.TCPAddr
	for _, s := range ips {
		ip := net.ParseIP(strings.TrimSpace(s))
		if ip == nil {
			return nil, fmt.Errorf("%q is not an IP address", s)
		}
		addrs = append(addrs, &net.TCPAddr{IP: ip})
	}
	return addrs, nil
}

// open dials addr from local, sends one GET and reads the whole response.
// The returned connection has no deadline and nothing buffered: it is idle.
func open(local *net.TCPAddr, addr, path string, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, LocalAddr: local}
	if useH2C {
		return openH2C(d, addr, path, timeout)
	}
	var c net.Conn
	var err error
	if useTLS {
		c, err = tls.DialWithDialer(d, "tcp", addr,
			&tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	} else {
		c, err = d.Dial("tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(timeout))
	if err := get(c, addr, path); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// get sends one GET on c and reads the whole response, which must be a
// 200 that keeps the connection open, with nothing after it.
func get(c net.Conn, addr, path string) error {
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr); err != nil {
		return err
	}
	br := bufio.NewReaderSize(c, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("reading response: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("reading response body: %w", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Close {
		return fmt.Errorf("response %q (close=%v): want 200 on a keep-alive connection", resp.Status, resp.Close)
	}
	if br.Buffered() != 0 {
		return errors.New("server sent bytes after the response")
	}
	return nil
}

// wake sends one GET on every open connection at the same instant (a
// goroutine each, released together), waits for every response, and
// prints the "woke" line: how many were answered and the latencies, each
// from the connection's own write to the end of its response.
func wake(conns []net.Conn, addr, path string, timeout time.Duration, out string) {
	start := make(chan struct{})
	lat := make([]time.Duration, len(conns))
	var failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	sent := 0
	for i, c := range conns {
		if c == nil {
			continue
		}
		sent++
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			c.SetDeadline(t0.Add(timeout))
			var err error
			if hc, ok := c.(*h2cConn); ok {
				err = hc.get(path, nil)
			} else {
				err = get(c, addr, path)
			}
			if err != nil {
				failed.Add(1)
				lat[i] = -1
				firstErr.Do(func() { fmt.Fprintf(os.Stderr, "idleconns: wake, connection %d: %v\n", i, err) })
				return
			}
			lat[i] = time.Since(t0)
			c.SetDeadline(time.Time{})
		}()
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	var ok []time.Duration
	for i, c := range conns {
		if c != nil && lat[i] >= 0 {
			ok = append(ok, lat[i])
		}
	}
	slices.Sort(ok)
	pct := func(p float64) float64 {
		if len(ok) == 0 {
			return 0
		}
		return float64(ok[min(len(ok)-1, int(p*float64(len(ok))))]) / 1e6
	}
	if out != "" {
		var b strings.Builder
		for _, d := range ok {
			fmt.Fprintf(&b, "%d\n", d.Microseconds())
		}
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "idleconns: -wake-out: %v\n", err)
		}
	}
	fmt.Printf("woke sent=%d answered=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f elapsed_ms=%.1f\n",
		sent, len(ok), pct(0.50), pct(0.99), pct(1), float64(elapsed)/1e6)
}

// isAlive reports whether the server still holds c open, without blocking:
// a peek that finds EOF or an error means the server closed it; EAGAIN means
// it is open and idle.
func isAlive(c net.Conn) bool {
	c = underlying(c)
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	var buf [1]byte
	raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			alive = true
		case err == nil && n > 0:
			alive = true // open, though the server sent something unasked
		}
		return true // never wait for readiness
	})
	return alive
}

// underlying is the TCP connection under c's TLS or HTTP/2 client.
func underlying(c net.Conn) net.Conn {
	switch cc := c.(type) {
	case *tls.Conn:
		return cc.NetConn()
	case *h2cConn:
		return cc.Conn
	}
	return c
}

// raiseNoFile lifts the soft RLIMIT_NOFILE to at least want, raising the
// hard limit too when the process may (root).
func raiseNoFile(want uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit(RLIMIT_NOFILE): %v", err)
	}
	if lim.Cur >= want {
		return nil
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return nil
		}
		return fmt.Errorf("need %d open files but the hard limit is %d: raise it (ulimit -Hn %d as root) or lower -n", want, lim.Max, want)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit(RLIMIT_NOFILE, %d): %v", lim.Cur, err)
	}
	return nil
}

// h2cConn is an HTTP/2 (prior knowledge) client connection that has
// exchanged its preface and SETTINGS: each get opens the next stream,
// with the connection's HPACK state.
type h2cConn struct {
	net.Conn
	addr string
	enc  h2.Encoder
	dec  h2.Decoder
	next uint32 // the next stream id
	buf  []byte // read, not yet taken
}

// openH2C dials addr from d, sends the preface and a GET for path, and
// returns the connection once the response is read whole.
func openH2C(d *net.Dialer, addr, path string, timeout time.Duration) (net.Conn, error) {
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &h2cConn{Conn: nc, addr: addr, next: 1}
	c.SetDeadline(time.Now().Add(timeout))
	if err := c.get(path, append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)); err != nil {
		nc.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// get sends a GET for path on the next stream, after first (the preface,
// on the first), and reads frames until its response has ended: SETTINGS
// acknowledged, DATA given back, anything but 200 an error.
func (c *h2cConn) get(path string, first []byte) error {
	id := c.next
	c.next += 2
	blk := c.enc.StartBlock(nil)
	blk = c.enc.AppendField(blk, ":method", "GET")
	blk = c.enc.AppendField(blk, ":scheme", "http")
	blk = c.enc.AppendField(blk, ":authority", c.addr)
	blk = c.enc.AppendField(blk, ":path", path)
	out := h2.AppendHeaders(first, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0)
	if _, err := c.Write(out); err != nil {
		return err
	}
	status := ""
	var tmp []byte // made at the first read: an idle connection holds none
	for {
		for {
			f, k, err := h2.ReadFrame(c.buf, h2.MaxFrameSizeLimit)
			if err == h2.ErrNeedMore {
				break
			}
			if err != nil {
				return fmt.Errorf("HTTP/2 frame: %w", err)
			}
			var reply []byte
			switch {
			case f.Type == h2.FrameSettings && !f.Flags.Has(h2.FlagAck):
				reply = h2.AppendSettingsAck(nil)
			case f.Type == h2.FrameGoAway, f.Type == h2.FrameRSTStream:
				return fmt.Errorf("server sent %v", f.Type)
			case f.Type == h2.FrameHeaders:
				if err := c.dec.Decode(f.BlockFragment(), func(fl h2.Field) {
					if f.StreamID == id && string(fl.Name) == ":status" {
						status = string(fl.Value)
					}
				}); err != nil {
					return err
				}
			case f.Type == h2.FrameData && len(f.Payload) > 0:
				reply = h2.AppendWindowUpdate(h2.AppendWindowUpdate(nil, 0, uint32(len(f.Payload))), f.StreamID, uint32(len(f.Payload)))
			}
			if reply != nil {
				if _, err := c.Write(reply); err != nil {
					return err
				}
			}
			c.buf = c.buf[k:]
			if f.StreamID == id && f.Flags.Has(h2.FlagEndStream) {
				if status != "200" {
					return fmt.Errorf("HTTP/2 response status %q: want 200", status)
				}
				if len(c.buf) == 0 {
					c.buf = nil // nothing held while idle
				}
				return nil
			}
		}
		if tmp == nil {
			tmp = make([]byte, 16<<10)
		}
		n, err := c.Read(tmp)
		if n == 0 {
			return fmt.Errorf("reading HTTP/2 response: %w", err)
		}
		c.buf = append(c.buf, tmp[:n]...)
	}
}
