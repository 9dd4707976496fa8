//go:build unix

// Command wsbench is bench/websocket.sh's server and clients: one harness
// for hotpath's WebSocket and the peers it is compared with.
//
//	wsbench serve -impl NAME -addr 127.0.0.1:9000
//	wsbench idle  -n 18000 -addr 127.0.0.1:9000
//	wsbench echo  -c 1000 -d 10s -size 1024 -addr 127.0.0.1:9000
//
// serve runs one implementation's echo server (every message sent back
// as it came): hotpath-events and hotpath-blocking (package websocket on
// hotpath's server.Server, with the event API or a Read loop per
// connection), nethttp-events and nethttp-blocking (the same on
// net/http's server), gorilla and coder (gorilla/websocket and
// coder/websocket on net/http, a Read loop per connection, as their
// examples do), gws (lxzan/gws's own server, a ReadLoop per connection),
// nbio (lesismal/nbio's event engine and its upgrader: no goroutine per
// connection); hotpath-events-deflate, gorilla-deflate and coder-deflate
// accept permessage-deflate (coder's with context takeover both ways,
// hotpath's too: ClientContextTakeover, ServerContextTakeover).
// It prints "listening ADDR" once it accepts.
//
// idle opens -n connections (from 127.0.0.1, 127.0.0.2, ... one address
// per 10,000), sends one 1 KiB message on each and reads its echo, prints
// "ready open=N", and holds them silent. On SIGUSR1 every connection sends
// one more message and reads its echo: "woke answered=N of M". It ends on
// SIGINT or SIGTERM.
//
// echo opens -c connections and, on each, sends a -size message and
// waits for its echo, again and again, for -d: "echo conns=C msgs=N
// elapsed_s=S errors=E". With -deflate, idle and echo offer
// permessage-deflate allowing context takeover, and send compressed
// frames where it is accepted. Its frames are built once (masked with a fixed
// key) and read with wire/ws's header parser, so that the client costs
// little next to the server it measures.
package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	coder "github.com/coder/websocket"
	gorilla "github.com/gorilla/websocket"
	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/websocket"
	"github.com/hotpathhq/hotpath/wire/ws"
	"github.com/lesismal/nbio/nbhttp"
	nbws "github.com/lesismal/nbio/nbhttp/websocket"
	"github.com/lxzan/gws"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wsbench serve|idle|echo [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:9000", "server address")
	impl := fs.String("impl", "hotpath-events", "serve: the implementation")
	n := fs.Int("n", 18000, "idle: connections")
	conns := fs.Int("c", 1000, "echo: connections")
	dur := fs.Duration("d", 10*time.Second, "echo: duration")
	size := fs.Int("size", 1024, "message size in bytes")
	fs.BoolVar(&offerDeflate, "deflate", false, "idle, echo: offer permessage-deflate as a browser does (context takeover allowed both ways) and send compressed messages where it is accepted")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "serve":
		serve(*impl, *addr)
	case "idle":
		idle(*addr, *n, *size)
	case "echo":
		echo(*addr, *conns, *dur, *size)
	default:
		fmt.Fprintln(os.Stderr, "wsbench: unknown command", os.Args[1])
		os.Exit(2)
	}
}

// serve runs impl's echo server on addr until killed.
func serve(impl, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fail(err)
	}
	if impl != "nbio" { // nbio binds the address itself: it says so once it has
		fmt.Println("listening", ln.Addr())
	}
	go memReports()
	var h http.Handler
	hotpath := false
	switch impl {
	case "hotpath-events", "nethttp-events", "hotpath-events-deflate":
		deflate := impl == "hotpath-events-deflate"
		opts := &websocket.AcceptOptions{SkipOriginCheck: true, Compression: deflate, ClientContextTakeover: deflate, ServerContextTakeover: deflate}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, opts)
			if err == nil {
				c.Start(echoEvents{})
			}
		})
		hotpath = impl != "nethttp-events"
	case "hotpath-blocking", "nethttp-blocking":
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c, err := websocket.Accept(w, r, &websocket.AcceptOptions{SkipOriginCheck: true}); err == nil {
				readLoopEcho(c)
			}
		})
		hotpath = impl == "hotpath-blocking"
	case "hotpath-native-events", "hotpath-native-blocking":
		// The native API (server.Ctx): the same echo through AcceptNative.
		events := impl == "hotpath-native-events"
		opts := &websocket.AcceptOptions{SkipOriginCheck: true}
		fail((&server.Server{Native: func(x *server.Ctx) {
			c, err := websocket.AcceptNative(x, opts)
			if err != nil {
				return
			}
			if events {
				c.Start(echoEvents{})
			} else {
				readLoopEcho(c)
			}
		}}).Serve(ln))
	case "gorilla", "gorilla-deflate":
		up := gorilla.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, EnableCompression: impl == "gorilla-deflate"}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			for {
				typ, msg, err := c.ReadMessage()
				if err != nil || c.WriteMessage(typ, msg) != nil {
					return
				}
			}
		})
	case "coder", "coder-deflate":
		mode := coder.CompressionDisabled
		if impl == "coder-deflate" {
			mode = coder.CompressionContextTakeover
		}
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := coder.Accept(w, r, &coder.AcceptOptions{InsecureSkipVerify: true, CompressionMode: mode})
			if err != nil {
				return
			}
			defer c.CloseNow()
			c.SetReadLimit(-1)
			ctx := context.Background()
			for {
				typ, msg, err := c.Read(ctx)
				if err != nil || c.Write(ctx, typ, msg) != nil {
					return
				}
			}
		})
	case "gws":
		srv := gws.NewServer(gwsEcho{}, &gws.ServerOption{})
		fail(srv.RunListener(ln))
	case "nbio":
		// nbio's engine binds the address itself: the listener that
		// reserved it goes first.
		up := nbws.NewUpgrader()
		up.CheckOrigin = func(*http.Request) bool { return true }
		up.OnMessage(func(c *nbws.Conn, mt nbws.MessageType, data []byte) { c.WriteMessage(mt, data) })
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { up.Upgrade(w, r, nil) })
		ln.Close()
		e := nbhttp.NewEngine(nbhttp.Config{Network: "tcp", Addrs: []string{addr}, Handler: mux, MaxLoad: 1 << 20})
		if err := e.Start(); err != nil {
			fail(err)
		}
		fmt.Println("listening", addr)
		select {}
	default:
		fail(fmt.Errorf("unknown -impl %q", impl))
	}
	if hotpath {
		fail((&server.Server{Handler: h}).Serve(ln))
	}
	fail((&http.Server{Handler: h}).Serve(ln))
}

// readLoopEcho echoes c's messages with a blocking Read loop until it
// ends.
func readLoopEcho(c *websocket.Conn) {
	defer c.CloseNow()
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil || c.Write(ctx, typ, msg) != nil {
			return
		}
	}
}

// memReports prints, on each SIGUSR2, the live heap after a collection,
// the goroutines' stacks and count, and the resident memory after the
// heap's free pages went back to the OS: where an RSS figure comes from.
func memReports() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	if f := os.Getenv("WSBENCH_CPUPROFILE"); f != "" {
		// From the start to the first SIGUSR2.
		if out, err := os.Create(f); err == nil {
			pprof.StartCPUProfile(out)
			<-sig
			pprof.StopCPUProfile()
			out.Close()
		}
	}
	for range sig {
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		rss := ""
		if b, err := os.ReadFile("/proc/self/status"); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "VmRSS:") {
					rss = strings.Fields(l)[1]
				}
			}
		}
		if f := os.Getenv("WSBENCH_HEAPPROFILE"); f != "" {
			if out, err := os.Create(f); err == nil {
				pprof.WriteHeapProfile(out)
				out.Close()
			}
		}
		fmt.Printf("mem heap_alloc=%d heap_inuse=%d stack_inuse=%d goroutines=%d rss_kb_after_free=%s\n",
			m.HeapAlloc, m.HeapInuse, m.StackInuse, runtime.NumGoroutine(), rss)
	}
}

type echoEvents struct{}

func (echoEvents) OnMessage(c *websocket.Conn, typ websocket.MessageType, msg []byte) {
	c.Write(context.Background(), typ, msg)
}
func (echoEvents) OnClose(*websocket.Conn, error) {}

type gwsEcho struct{ gws.BuiltinEventHandler }

func (gwsEcho) OnMessage(c *gws.Conn, m *gws.Message) {
	defer m.Close()
	c.WriteMessage(m.Opcode, m.Bytes())
}

// client is one raw client connection: the handshake, then frames.
type client struct {
	nc      net.Conn
	br      *bufio.Reader
	deflate bool // permessage-deflate was accepted: send compressedFrame
}

// offerDeflate (-deflate): the handshake offers permessage-deflate as
// browsers do, allowing the server to keep its compression context
// between messages (no server_no_context_takeover).
var offerDeflate bool

// deflateFrame is a client frame of one message of size zero bytes,
// compressed (RSV1, the DEFLATE block without its 00 00 ff ff tail, RFC
// 7692 §7.2.1), masked with mask.
func deflateFrame(size int) []byte {
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestSpeed)
	fw.Write(make([]byte, size))
	fw.Flush()
	p := bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
	p = append([]byte(nil), p...)
	frame := ws.AppendHeader(nil, ws.Header{Fin: true, Rsv1: true, Opcode: ws.OpBinary, Masked: true, Mask: mask, Length: int64(len(p))})
	start := len(frame)
	frame = append(frame, p...)
	ws.Mask(mask, 0, frame[start:])
	return frame
}

// frameFor is the frame c sends: compressed where permessage-deflate was
// accepted.
func (c *client) frameFor(plain, compressed []byte) []byte {
	if c.deflate {
		return compressed
	}
	return plain
}

var mask = [4]byte{1, 2, 3, 4}

// dial connects from local and completes the handshake.
func dial(local *net.TCPAddr, addr string) (*client, error) {
	d := net.Dialer{LocalAddr: local, Timeout: 10 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	var k [16]byte
	rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	ext := ""
	if offerDeflate {
		ext = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
	}
	fmt.Fprintf(nc, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n", addr, key, ext)
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		nc.Close()
		return nil, err
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != ws.AcceptKey(key) {
		nc.Close()
		return nil, fmt.Errorf("handshake: %s", resp.Status)
	}
	return &client{nc: nc, br: br, deflate: strings.Contains(resp.Header.Get("Sec-WebSocket-Extensions"), "permessage-deflate")}, nil
}

// roundTrip sends frame (one whole message) and reads the echo's frames
// up to the end of a message, skipping control frames.
func (c *client) roundTrip(frame []byte) error {
	if _, err := c.nc.Write(frame); err != nil {
		return err
	}
	for {
		hb, err := c.br.Peek(2)
		if err != nil {
			return err
		}
		need := 2
		switch hb[1] & 0x7f {
		case 126:
			need = 4
		case 127:
			need = 10
		}
		hb, err = c.br.Peek(need)
		if err != nil {
			return err
		}
		h, n, err := ws.ParseHeader(hb, ws.Rules{Role: ws.Client, Deflate: c.deflate})
		if err != nil {
			return err
		}
		c.br.Discard(n)
		if _, err := c.br.Discard(int(h.Length)); err != nil {
			return err
		}
		if h.Fin && !h.Opcode.IsControl() {
			return nil
		}
	}
}

func sources(n int) []*net.TCPAddr {
	var s []*net.TCPAddr
	for i := 0; i < max(1, (n+9999)/10000); i++ {
		s = append(s, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))})
	}
	return s
}

// idle opens n connections, one message each, and holds them.
func idle(addr string, n, size int) {
	frame := ws.AppendClientFrame(nil, ws.OpBinary, true, mask, make([]byte, size))
	compressed := deflateFrame(size)
	src := sources(n)
	conns := make([]*client, n)
	var failed atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	t0 := time.Now()
	for i := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := dial(src[i%len(src)], addr)
			if err == nil {
				err = c.roundTrip(c.frameFor(frame, compressed))
			}
			if err != nil {
				failed.Add(1)
				return
			}
			c.br.Reset(c.nc) // the client's buffers do not matter; keep them small anyway
			conns[i] = c
		})
	}
	wg.Wait()
	fmt.Printf("ready open=%d failed=%d elapsed=%v\n", int64(n)-failed.Load(), failed.Load(), time.Since(t0).Round(time.Millisecond))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	for s := range sig {
		if s != syscall.SIGUSR1 {
			return
		}
		var answered atomic.Int64
		open := 0
		for _, c := range conns {
			if c == nil {
				continue
			}
			open++
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				c.nc.SetDeadline(time.Now().Add(10 * time.Second))
				if c.roundTrip(c.frameFor(frame, compressed)) == nil {
					answered.Add(1)
				}
				c.nc.SetDeadline(time.Time{})
			})
		}
		wg.Wait()
		fmt.Printf("woke answered=%d of %d\n", answered.Load(), open)
	}
}

// echo runs c closed-loop connections for d.
func echo(addr string, c int, d time.Duration, size int) {
	frame := ws.AppendClientFrame(nil, ws.OpBinary, true, mask, make([]byte, size))
	compressed := deflateFrame(size)
	src := sources(c)
	clients := make([]*client, c)
	for i := range clients {
		cl, err := dial(src[i%len(src)], addr)
		if err != nil {
			fail(err)
		}
		clients[i] = cl
	}
	var msgs, errs atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	end := t0.Add(d)
	for _, cl := range clients {
		wg.Go(func() {
			var n int64
			for time.Now().Before(end) {
				if err := cl.roundTrip(cl.frameFor(frame, compressed)); err != nil {
					if err != io.EOF {
						errs.Add(1)
					}
					break
				}
				n++
			}
			msgs.Add(n)
			cl.nc.Close()
		})
	}
	wg.Wait()
	fmt.Printf("echo conns=%d msgs=%d elapsed_s=%.3f errors=%d\n", c, msgs.Load(), time.Since(t0).Seconds(), errs.Load())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "wsbench:", err)
	os.Exit(1)
}
