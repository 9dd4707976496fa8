package server

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Attacks on hotpath's HTTP/2 engine, spoken in raw frames over h2c.

// rawH2 dials an h2c server on hotpath's engine and sends the preface
// and an empty SETTINGS frame.
func rawH2(t *testing.T, s *Server) net.Conn {
	t.Helper()
	s.Protocols = h2cProtocols()
	if s.ErrorLog == nil {
		s.ErrorLog = discardLog
	}
	addr := startServer(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	return c
}

// readUntilGoAway reads frames until a GOAWAY and returns its code, or
// fails if the connection ends without one.
func readUntilGoAway(t *testing.T, c net.Conn) h2.ErrCode {
	t.Helper()
	f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
	return f.ErrCode()
}

func getBlock(enc *h2.Encoder) []byte { return getBlockPath(enc, "/") }

func getBlockPath(enc *h2.Encoder, path string) []byte {
	b := enc.StartBlock(nil)
	b = enc.AppendField(b, ":method", "GET")
	b = enc.AppendField(b, ":scheme", "http")
	b = enc.AppendField(b, ":authority", "example.com")
	return enc.AppendField(b, ":path", path)
}

// Rapid reset (CVE-2023-44487): streams opened and reset at once end the
// connection with ENHANCE_YOUR_CALM.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2RapidReset(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := rawH2(t, &Server{Handler: h})
	var enc h2.Encoder
	go func() {
		var b []byte
		for id := uint32(1); id < 2*3000; id += 2 {
			b = h2.AppendHeaders(b, id, h2.FlagEndHeaders, h2.Priority{}, getBlock(&enc), 0)
			b = h2.AppendRSTStream(b, id, h2.ErrCodeCancel)
			if len(b) > 32<<10 {
				if _, err := c.Write(b); err != nil {
					return
				}
				b = b[:0]
			}
		}
		c.Write(b)
	}()
	if code := readUntilGoAway(t, c); code != h2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
}

// A client that floods PINGs and never reads the answers is cut off,
// with the server's queue bounded, instead of holding the queue forever.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2PingFloodNotRead(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo, WriteStallTimeout: time.Minute})
	var batch []byte
	for range 1000 {
		batch = h2.AppendPing(batch, 0, [8]byte{1})
	}
	for i := 0; ; i++ {
		if i == 20000 { // 340 MB of PINGs
			t.Fatal("the server took 20 million PINGs without anyone reading the answers")
		}
		c.SetWriteDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write(batch); err != nil {
			return // the server closed the connection
		}
	}
}

// A connection with nothing in progress is closed after IdleTimeout,
// with GOAWAY (NO_ERROR).
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2IdleTimeout(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo, IdleTimeout: 50 * time.Millisecond})
	if code := readUntilGoAway(t, c); code != h2.ErrCodeNo {
		t.Fatalf("GOAWAY %v, want NO_ERROR", code)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed after GOAWAY: %v", err)
	}
}

// readFrames reads frames until one satisfies stop, which it returns.
func readFrames(t *testing.T, c net.Conn, stop func(f *h2.Frame) bool) h2.Frame {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var buf []byte
	tmp := make([]byte, 64<<10)
	for {
		for {
			f, n, err := h2.ReadFrame(buf, h2.MaxFrameSizeLimit)
			if err != nil {
				break
			}
			if stop(&f) {
				f.Payload = append([]byte(nil), f.Payload...)
				return f
			}
			buf = buf[n:]
		}
		n, err := c.Read(tmp)
		if n == 0 && err != nil {
			t.Fatalf("connection ended: %v", err)
		}
		buf = append(buf, tmp[:n]...)
	}
}

// CONTINUATION flood (CVE-2024-27316): a block that never ends gets
// GOAWAY ENHANCE_YOUR_CALM.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2ContinuationFlood(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo})
	var enc h2.Encoder
	b := h2.AppendHeaders(nil, 1, 0, h2.Priority{}, getBlock(&enc), 0)
	for range 10000 {
		b = h2.AppendContinuation(b, 1, 0, []byte("x"))
	}
	go c.Write(b)
	if code := readUntilGoAway(t, c); code != h2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
}

// Streams past SETTINGS_MAX_CONCURRENT_STREAMS are refused.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2TooManyStreams(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	c := rawH2(t, &Server{Handler: h})
	var enc h2.Encoder
	var b []byte
	last := uint32(2*h2.DefaultMaxConcurrentStreams + 1) // the 251st stream
	for id := uint32(1); id <= last; id += 2 {
		b = h2.AppendHeaders(b, id, h2.FlagEndHeaders, h2.Priority{}, getBlock(&enc), 0)
	}
	go c.Write(b)
	f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway })
	if f.Type != h2.FrameRSTStream || f.StreamID != last || f.ErrCode() != h2.ErrCodeRefusedStream {
		t.Fatalf("got %v on stream %d (%v), want RST_STREAM REFUSED_STREAM on stream %d", f.Type, f.StreamID, f.ErrCode(), last)
	}
}

// A header list over MaxHeaderBytes gets 431 on its stream, and the
// connection goes on.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2HeaderListTooLarge(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo, MaxHeaderBytes: 4 << 10})
	var enc h2.Encoder
	blk := getBlock(&enc)
	blk = enc.AppendField(blk, "x-big", strings.Repeat("a", 6<<10))
	b := h2.AppendHeaderBlock(nil, 1, true, blk, h2.DefaultMaxFrameSize)
	b = h2.AppendHeaders(b, 3, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	c.Write(b)
	var dec h2.Decoder
	statuses := map[uint32]string{}
	readFrames(t, c, func(f *h2.Frame) bool {
		if f.Type == h2.FrameGoAway {
			t.Fatalf("GOAWAY %v", f.ErrCode())
		}
		if f.Type == h2.FrameHeaders {
			dec.Decode(f.BlockFragment(), func(fl h2.Field) {
				if string(fl.Name) == ":status" {
					statuses[f.StreamID] = string(fl.Value)
				}
			})
		}
		return len(statuses) == 2
	})
	if statuses[1] != "431" || statuses[3] != "200" {
		t.Fatalf("statuses %v, want 431 on stream 1 and 200 on stream 3", statuses)
	}
}

// A request that declares a content-length and ends with its header
// block is malformed (§8.1.1): RST_STREAM PROTOCOL_ERROR.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2ContentLengthWithoutBody(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo})
	var enc h2.Encoder
	blk := getBlock(&enc)
	blk = enc.AppendField(blk, "content-length", "10")
	c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0))
	f := readFrames(t, c, func(f *h2.Frame) bool {
		return f.Type == h2.FrameRSTStream || f.Type == h2.FrameGoAway || f.Type == h2.FrameHeaders
	})
	if f.Type != h2.FrameRSTStream || f.ErrCode() != h2.ErrCodeProtocol {
		t.Fatalf("got %v (%v), want RST_STREAM PROTOCOL_ERROR", f.Type, f.ErrCode())
	}
}

// An h2c listener that gets neither an HTTP/1.x request line nor the
// HTTP/2 preface (h2spec 3.5 #2) answers as HTTP/2 requires: GOAWAY
// PROTOCOL_ERROR and the end of the connection, on both engines; an
// HTTP/1.1 request with a bad head still gets its 400.
//
// Modes: h2c, raw bytes, both HTTP/2 engines: what a cleartext listener
// answers to neither a request line nor the preface.
func TestH2CInvalidPreface(t *testing.T) {
	for _, native := range []bool{false, true} {
		s := &Server{Handler: echo, Protocols: h2cProtocols(), HTTP2HandOff: !native, ErrorLog: discardLog}
		addr := startServer(t, s)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "INVALID CONNECTION PREFACE\r\n\r\n")
		f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
		if f.ErrCode() != h2.ErrCodeProtocol {
			t.Errorf("native=%v: GOAWAY %v, want PROTOCOL_ERROR", native, f.ErrCode())
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("native=%v: connection not closed after GOAWAY: %v", native, err)
		}
		c.Close()

		c, err = net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\nbad header\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, _ := io.ReadAll(c)
		if !strings.HasPrefix(string(got), "HTTP/1.1 400 ") {
			t.Errorf("native=%v: a bad HTTP/1.1 head got %q, want a 400", native, got)
		}
		c.Close()
	}
}

// Floods of frames that carry no request (CVE-2019-9512 PING, -9515
// SETTINGS, -9516 empty frames, -9518 empty DATA, and PRIORITY / tiny
// WINDOW_UPDATE), sent by a client that reads every answer, so that the
// write queue's cap never stops it: each ends with GOAWAY
// ENHANCE_YOUR_CALM naming the flood.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2IdleFrameFloods(t *testing.T) {
	floods := map[string]func(b []byte) []byte{
		"PING":                 func(b []byte) []byte { return h2.AppendPing(b, 0, [8]byte{7}) },
		"SETTINGS":             func(b []byte) []byte { return h2.AppendSettings(b) },
		"PRIORITY":             func(b []byte) []byte { return h2.AppendPriority(b, 3, h2.Priority{StreamDep: 1, Weight: 15}) },
		"empty DATA":           func(b []byte) []byte { return h2.AppendData(b, 1, 0, nil, 0) },
		"WINDOW_UPDATE of one": func(b []byte) []byte { return h2.AppendWindowUpdate(b, 0, 1) },
	}
	for name, frame := range floods {
		t.Run(name, func(t *testing.T) {
			c := rawH2(t, &Server{Handler: echo})
			// Stream 1 is a POST whose body never comes (the empty DATA
			// frames go there); echo waits for it.
			var enc h2.Encoder
			blk := postBlock(&enc)
			c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders, h2.Priority{}, blk, 0))
			var batch []byte
			for range 100 {
				batch = frame(batch)
			}
			go func() {
				for range 1000 { // 100,000 frames; the budget is 1,000 per 10 s
					c.SetWriteDeadline(time.Now().Add(20 * time.Second))
					if _, err := c.Write(batch); err != nil {
						return
					}
				}
			}()
			f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
			if f.ErrCode() != h2.ErrCodeEnhanceYourCalm || !strings.Contains(string(f.DebugData()), "carry no request") {
				t.Fatalf("GOAWAY %v %q, want ENHANCE_YOUR_CALM for a flood of frames that carry no request", f.ErrCode(), f.DebugData())
			}
		})
	}
}

// A client that pings within reason gets every answer and its requests
// served.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2PingsWithinBudget(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo})
	var b []byte
	for i := range 200 {
		b = h2.AppendPing(b, 0, [8]byte{byte(i)})
	}
	var enc h2.Encoder
	b = h2.AppendHeaders(b, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	c.Write(b)
	acks := 0
	var dec h2.Decoder
	status := ""
	readFrames(t, c, func(f *h2.Frame) bool {
		switch f.Type {
		case h2.FrameGoAway:
			t.Fatalf("GOAWAY %v %q after %d PING ACKs", f.ErrCode(), f.DebugData(), acks)
		case h2.FramePing:
			if f.Flags.Has(h2.FlagAck) {
				acks++
			}
		case h2.FrameHeaders:
			dec.Decode(f.BlockFragment(), func(fl h2.Field) {
				if string(fl.Name) == ":status" {
					status = string(fl.Value)
				}
			})
		}
		return acks == 200 && status != ""
	})
	if status != "200" {
		t.Fatalf("status %q, want 200", status)
	}
}

// A client that never acknowledges the server's SETTINGS is cut off
// with SETTINGS_TIMEOUT (§6.5.3) after ReadHeaderTimeout, the time a
// client has to set up a connection.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2SettingsAckTimeout(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo, ReadHeaderTimeout: 300 * time.Millisecond})
	start := time.Now()
	if code := readUntilGoAway(t, c); code != h2.ErrCodeSettingsTimeout {
		t.Fatalf("GOAWAY %v, want SETTINGS_TIMEOUT", code)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("cut after %v, before ReadHeaderTimeout (300ms)", d)
	}
}

// A client that acknowledges (Go's) keeps its connection past
// ReadHeaderTimeout.
func TestNativeH2SettingsAckedKeepsConn(t *testing.T) {
	forH2Engine(t, echo, func(t *testing.T, base string, c *http.Client) {
		conns := 0
		for i := range 3 {
			req, _ := http.NewRequest("GET", base+"/", nil)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) {
					if !ci.Reused {
						conns++
					}
				},
			}))
			mustDo(t, c, req)
			if i < 2 {
				time.Sleep(400 * time.Millisecond)
			}
		}
		if conns != 1 {
			t.Fatalf("%d connections for 3 requests 0.4 s apart, want 1 (ReadHeaderTimeout 200ms must not cut an acknowledged connection)", conns)
		}
	}, func(s *Server) { s.ReadHeaderTimeout = 200 * time.Millisecond })
}

// Stream identifiers: a client may skip ahead (no state is kept for the
// skipped ones, §5.1.1) up to the last identifier, after which the
// connection can take no stream: the server answers it, then sends
// GOAWAY (NO_ERROR) naming it and closes. An identifier that goes back
// is a connection error.
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2StreamIDs(t *testing.T) {
	const last = 1<<31 - 1
	c := rawH2(t, &Server{Handler: echo})
	var enc h2.Encoder
	b := h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	b = h2.AppendHeaders(b, last, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	c.Write(b)
	answered := map[uint32]bool{}
	var goAway *h2.Frame
	readFrames(t, c, func(f *h2.Frame) bool {
		switch f.Type {
		case h2.FrameHeaders:
			answered[f.StreamID] = true
		case h2.FrameGoAway:
			g := *f
			goAway = &g
			if f.ErrCode() != h2.ErrCodeNo || f.LastStreamID() != last {
				t.Fatalf("GOAWAY %v last %d, want NO_ERROR last %d", f.ErrCode(), f.LastStreamID(), last)
			}
		}
		return goAway != nil && answered[1] && answered[last]
	})
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Fatalf("connection not closed after the last stream: %v", err)
	}

	c = rawH2(t, &Server{Handler: echo})
	enc = h2.Encoder{} // a new connection, a new HPACK table
	b = h2.AppendHeaders(nil, 5, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	b = h2.AppendHeaders(b, 3, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
	c.Write(b)
	if code := readUntilGoAway(t, c); code != h2.ErrCodeProtocol {
		t.Fatalf("stream 3 after 5: GOAWAY %v, want PROTOCOL_ERROR", code)
	}
}

// A connection that served a request and then has nothing in progress
// is closed after IdleTimeout too (the idle wait starts when the last
// handler returns, not only when the reader starts a read).
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2IdleTimeoutAfterRequest(t *testing.T) {
	c := rawH2(t, &Server{Handler: echo, IdleTimeout: 300 * time.Millisecond})
	var enc h2.Encoder
	c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
	start := time.Now()
	f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
	if f.ErrCode() != h2.ErrCodeNo || f.LastStreamID() != 1 {
		t.Fatalf("GOAWAY %v last %d, want NO_ERROR last 1", f.ErrCode(), f.LastStreamID())
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Fatalf("closed after %v, want about IdleTimeout (300ms)", d)
	}
}

// An idle connection that gave its read buffer back gives it back again
// after a PING (keepalive PINGs from gRPC clients and Go's transport
// would otherwise leave every idle connection holding one).
//
// Modes: h2c on hotpath's HTTP/2 engine, raw frames (rawH2): a
// frame-level shape; HTTP/1.1 has no frames and the hand-off's HTTP/2 is
// net/http's.
func TestNativeH2IdleBufferAfterPing(t *testing.T) {
	s := &Server{Handler: echo}
	c := rawH2(t, s)
	var enc h2.Encoder
	c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
	readFrames(t, c, func(f *h2.Frame) bool { return f.StreamID == 1 && f.Flags.Has(h2.FlagEndStream) })
	bufless := func() bool { return readBufGivenBack(s) }
	waitFor(t, "the idle connection to give its read buffer back", bufless)
	for i := range 3 {
		c.Write(h2.AppendPing(nil, 0, [8]byte{byte(i)}))
		readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FramePing && f.Flags.Has(h2.FlagAck) })
		waitFor(t, "the read buffer to go back after a PING", bufless)
	}
}

// A client that keeps as many streams open as SETTINGS_MAX_CONCURRENT_STREAMS
// allows opens the next one the moment a response ends (END_STREAM): the
// place of the stream that ended is free by then, on both APIs, over h2c
// and TLS. The server used to count the stream until its handler's
// goroutine had cleaned up, after the last frame went out, and refused
// the next stream (REFUSED_STREAM) when the client was quicker.
//
// Modes: hotpath's HTTP/2 engine, raw frames, h2c and TLS: a stream's
// place under MAX_CONCURRENT_STREAMS.
func TestH2StreamPlaceFreeAtEndStream(t *testing.T) {
	const streams = 2 // the server's limit, all in use
	const requests = 3000
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	native := func(c *Ctx) { c.WriteString("ok") }
	for _, api := range []string{"handler", "native"} {
		for _, overTLS := range []bool{false, true} {
			name := api + "/h2c"
			if overTLS {
				name = api + "/h2"
			}
			t.Run(name, func(t *testing.T) {
				s := &Server{HTTP2: &http.HTTP2Config{MaxConcurrentStreams: streams}, ErrorLog: discardLog}
				if api == "native" {
					s.Native = native
				} else {
					s.Handler = h
				}
				var c net.Conn
				if overTLS {
					cert, pool := testCert(t)
					s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
					tc, err := tls.Dial("tcp", startTLS(t, s), &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { tc.Close() })
					if _, err := tc.Write(append([]byte(h2.ClientPreface), h2.AppendSettings(nil)...)); err != nil {
						t.Fatal(err)
					}
					c = tc
				} else {
					c = rawH2(t, s)
				}
				streamPlacesFreeAtEnd(t, c, streams, requests)
			})
		}
	}
}

// streamPlacesFreeAtEnd keeps streams GETs open on c and opens the next as
// each response ends, requests in all, failing on any RST_STREAM or GOAWAY.
func streamPlacesFreeAtEnd(t *testing.T, c net.Conn, streams, requests int) {
	t.Helper()
	var enc h2.Encoder
	next := uint32(1)
	open := func(n int) {
		var b []byte
		for range n {
			b = h2.AppendHeaders(b, next, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
			next += 2
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	open(streams)
	sent, done := streams, 0
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	var buf []byte
	tmp := make([]byte, 64<<10)
	for done < requests {
		ended := 0
		for {
			f, n, err := h2.ReadFrame(buf, h2.MaxFrameSizeLimit)
			if err != nil {
				break
			}
			switch f.Type {
			case h2.FrameSettings: // acknowledged, or the server would end the connection
				if !f.Flags.Has(h2.FlagAck) {
					if _, err := c.Write(h2.AppendSettingsAck(nil)); err != nil {
						t.Fatal(err)
					}
				}
			case h2.FrameRSTStream:
				t.Fatalf("after %d responses: RST_STREAM %v on stream %d", done, f.ErrCode(), f.StreamID)
			case h2.FrameGoAway:
				t.Fatalf("after %d responses: GOAWAY %v", done, f.ErrCode())
			case h2.FrameData, h2.FrameHeaders:
				if f.Flags.Has(h2.FlagEndStream) {
					ended++
				}
			}
			buf = buf[n:]
		}
		done += ended
		if k := min(ended, requests-sent); k > 0 {
			open(k)
			sent += k
		}
		if done >= requests {
			break
		}
		n, err := c.Read(tmp)
		if n == 0 && err != nil {
			t.Fatalf("after %d responses: %v", done, err)
		}
		buf = append(buf, tmp[:n]...)
	}
}
