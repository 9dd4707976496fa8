package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2FakeConn is an in-memory client of a native HTTP/2 connection: it
// sends n GET requests, at most inflight at a time (as h2load -m does),
// keeps the server's windows open, and counts the responses. It does
// not allocate once its buffers have grown, so that what an allocation
// count sees is the server's.
type h2FakeConn struct {
	mu   sync.Mutex
	cond sync.Cond

	in       []byte // bytes for the server to read
	first    []byte // the first request's header block (adds to the HPACK table)
	steady   []byte // later requests' (indexed fields)
	nextID   uint32
	left     int // requests not yet sent
	max      int // in flight at most
	inflight int
	credit   uint32 // DATA bytes received, not yet given back by WINDOW_UPDATE
	out      []byte // bytes the server wrote, not yet parsed
	done     int    // responses complete
}

func newH2FakeConn(n, inflight int, authority string) *h2FakeConn {
	f := &h2FakeConn{nextID: 1, left: n, max: inflight}
	f.cond.L = &f.mu
	var enc h2.Encoder
	block := func() []byte {
		b := enc.StartBlock(nil)
		b = enc.AppendField(b, ":method", "GET")
		b = enc.AppendField(b, ":scheme", "http")
		b = enc.AppendField(b, ":authority", authority)
		b = enc.AppendField(b, ":path", "/")
		b = enc.AppendField(b, "user-agent", "h2load nghttp2/1.52.0")
		return b
	}
	f.first, f.steady = block(), block()
	f.in = append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	f.in = h2.AppendSettingsAck(f.in)
	return f
}

func (f *h2FakeConn) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.in) == 0 {
		if f.credit > 0 {
			f.in = h2.AppendWindowUpdate(f.in, 0, f.credit)
			f.credit = 0
		}
		for f.left > 0 && f.inflight < f.max {
			blk := f.steady
			if f.nextID == 1 {
				blk = f.first
			}
			f.in = h2.AppendHeaders(f.in, f.nextID, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0)
			f.nextID += 2
			f.left--
			f.inflight++
		}
		if len(f.in) > 0 {
			break
		}
		if f.left == 0 && f.inflight == 0 {
			return 0, io.EOF
		}
		f.cond.Wait()
	}
	n := copy(p, f.in)
	f.in = f.in[:copy(f.in, f.in[n:])]
	return n, nil
}

func (f *h2FakeConn) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out = append(f.out, p...)
	off := 0
	for {
		fr, n, err := h2.ReadFrame(f.out[off:], h2.MaxFrameSizeLimit)
		if err != nil {
			break
		}
		off += n
		if fr.Type == h2.FrameData {
			f.credit += fr.Length
		}
		if (fr.Type == h2.FrameData || fr.Type == h2.FrameHeaders) && fr.Flags.Has(h2.FlagEndStream) {
			f.inflight--
			f.done++
		}
		if fr.Type == h2.FrameRSTStream || fr.Type == h2.FrameGoAway {
			panic("h2FakeConn: the server sent " + fr.Type.String() + " " + fr.ErrCode().String())
		}
	}
	f.out = f.out[:copy(f.out, f.out[off:])]
	f.cond.Broadcast()
	return len(p), nil
}

func (f *h2FakeConn) Close() error                       { return nil }
func (f *h2FakeConn) LocalAddr() net.Addr                { return fakeAddr{} }
func (f *h2FakeConn) RemoteAddr() net.Addr               { return fakeAddr{} }
func (f *h2FakeConn) SetDeadline(t time.Time) error      { return nil }
func (f *h2FakeConn) SetReadDeadline(t time.Time) error  { return nil }
func (f *h2FakeConn) SetWriteDeadline(t time.Time) error { return nil }

// serveH2Fake serves n requests, inflight at a time, on one native
// HTTP/2 connection, and returns how many were answered.
func serveH2Fake(h http.Handler, n, inflight int) int {
	return serveH2FakeServer(&Server{Handler: h, ErrorLog: discardLog}, n, inflight)
}

// serveH2FakeServer is serveH2Fake for any Server.
func serveH2FakeServer(s *Server, n, inflight int) int {
	s.resolve()
	f := newH2FakeConn(n, inflight, "127.0.0.1:8080")
	s.serveH2(f, nil, nil, context.Background(), nil)
	return f.done
}

// TestNativeH2HandlerAllocsPerRequest pins the allocations one more
// request costs on a native HTTP/2 connection, through the http.Handler
// API (issue 16's budget: 5; net/http's HTTP/2 server: about 30).
func TestNativeH2HandlerAllocsPerRequest(t *testing.T) {
	skipUnderRace(t)
	for _, inflight := range []int{1, 10, 100} {
		run := func(n int) float64 {
			return testing.AllocsPerRun(5, func() {
				if got := serveH2Fake(http.HandlerFunc(helloHandler), n, inflight); got != n {
					t.Fatalf("%d of %d requests answered", got, n)
				}
			})
		}
		const n = 5000 // dilutes the few workers a run may start more than another
		got := (run(2*n) - run(n)) / n
		t.Logf("%d in flight: %.2f allocs per request", inflight, got)
		// The difference of two runs moves with how many streams each
		// allocated before its free list could serve (the peak in
		// flight): 5.01 printed in 3 of 30 runs at 100 in flight, on a
		// commit where it once passed 5.01 and failed. At 5.05 an
		// allocation added to one request in twenty still fails.
		if got > 5.05 {
			t.Errorf("%d in flight: %.2f allocs per request, want ≤ 5", inflight, got)
		}
	}
}

// BenchmarkNativeH2Native is BenchmarkNativeH2Handler with a native
// handler.
func BenchmarkNativeH2Native(b *testing.B) {
	for _, inflight := range []int{1, 10, 100} {
		b.Run("inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			b.ReportAllocs()
			s := &Server{Native: helloNative, ErrorLog: discardLog}
			if got := serveH2FakeServer(s, b.N, inflight); got != b.N {
				b.Fatalf("%d of %d requests answered", got, b.N)
			}
		})
	}
}

// BenchmarkNativeH2Handler serves small GETs on one in-memory native
// HTTP/2 connection, 10 in flight.
func BenchmarkNativeH2Handler(b *testing.B) {
	for _, inflight := range []int{1, 10, 100} {
		b.Run("inflight="+strconv.Itoa(inflight), func(b *testing.B) {
			b.ReportAllocs()
			if got := serveH2Fake(http.HandlerFunc(helloHandler), b.N, inflight); got != b.N {
				b.Fatalf("%d of %d requests answered", got, b.N)
			}
		})
	}
}
