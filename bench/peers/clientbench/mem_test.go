package clientbench

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/hotpathhq/hotpath/client"
)

// memConn is a connection to a server in memory: each request written to
// it (a head without a body) is answered at once with the same response,
// so a client's CPU per request is its own code's alone, with no system
// call, loopback or wake-up, which are the same for every client and on a
// loopback benchmark dwarf the differences between them.
type memConn struct {
	mu      sync.Mutex
	ready   sync.Cond // on mu: out has bytes, or the conn closed
	in, out bytes.Buffer
	closed  bool
}

func newMemConn() *memConn {
	c := &memConn{}
	c.ready.L = &c.mu
	return c
}

// memBody and memResponse are what the in-memory server answers: the
// in-process server's JSON, under the head hotpath serve sends.
const memBody = `{"id":1,"name":"hotpath","tags":["fast","safe"]}`

var memResponse = []byte("HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 16:00:00 GMT\r\n" +
	"Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(memBody)) + "\r\n\r\n" + memBody)

// Write takes requests and queues a response for each head it completes.
func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in.Write(p)
	for {
		i := bytes.Index(c.in.Bytes(), []byte("\r\n\r\n"))
		if i < 0 {
			return len(p), nil
		}
		c.in.Next(i + 4)
		c.out.Write(memResponse)
		c.ready.Broadcast()
	}
}

// Read returns queued response bytes, waiting for some (net/http's
// transport reads ahead on a goroutine of its own).
func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.out.Len() == 0 {
		if c.closed {
			return 0, io.EOF
		}
		c.ready.Wait()
	}
	return c.out.Read(p)
}

func (c *memConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.ready.Broadcast()
	c.mu.Unlock()
	return nil
}
func (c *memConn) LocalAddr() net.Addr                { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr               { return memAddr{} }
func (c *memConn) SetDeadline(t time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "tcp" }
func (memAddr) String() string  { return "127.0.0.1:80" }

func memDial(ctx context.Context, network, addr string) (net.Conn, error) { return newMemConn(), nil }

// BenchmarkMemGet: one-at-a-time GETs against the in-memory server, as
// each client's users call it: what a client's own code costs per request,
// where bench/client.sh's loopback figures add the kernel's share (the
// same for every client) and the wake-ups. "net-http" is http.DefaultClient
// (DefaultTransport's settings, dialing memory); its transport reads on a
// goroutine of its own, so its figure includes that hand-off.
func BenchmarkMemGet(b *testing.B) {
	const url = "http://mem.test/json"
	std := http.DefaultTransport.(*http.Transport).Clone()
	std.DialContext = memDial
	fc := &fasthttp.Client{Dial: func(string) (net.Conn, error) { return newMemConn(), nil }}
	clients := []struct {
		name string
		get  func() (int, error)
	}{
		{"net-http", netHTTPDoer(&http.Client{Transport: std}, url).get},
		{"client.New", netHTTPDoer(client.New(func(t *client.Transport) { t.DialContext = memDial }), url).get},
		{"hotpath", netHTTPDoer(&http.Client{Transport: &client.Transport{DialContext: memDial}}, url).get},
		{"fasthttp", func() (int, error) {
			r, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(r)
			defer fasthttp.ReleaseResponse(resp)
			r.SetRequestURI(url)
			err := fc.Do(r, resp)
			return len(resp.Body()), err
		}},
	}
	for _, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			if n, err := c.get(); err != nil || n != len(memBody) {
				b.Fatalf("%d bytes, %v", n, err)
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := c.get(); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}
