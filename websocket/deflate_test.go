package websocket

import (
	"bufio"
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
	"github.com/hotpathhq/hotpath/wire/ws"
)

const deflateAnswer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

// compressTest deflates p as a peer would send it (RFC 7692 §7.2.1).
func compressTest(t *testing.T, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.BestCompression)
	fw.Write(p)
	fw.Flush()
	out := b.Bytes()
	if !bytes.HasSuffix(out, deflateTail[:]) {
		t.Fatalf("sync flush without its tail: % x", out)
	}
	return out[:len(out)-4]
}

// inflateTest inflates a compressed payload as a peer would.
func inflateTest(t *testing.T, p []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader(inflateTail[:]))))
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

// TestDeflateNegotiationServer: the server's answer to offers, on both
// engines and the native API: the first acceptable offer, answered with
// both no_context_takeover parameters (and server_max_window_bits when
// offered); none for bad offers or without Compression.
func TestDeflateNegotiationServer(t *testing.T) {
	cases := []struct {
		offer, want string
		off         bool
	}{
		{"", "", false},
		{"permessage-deflate", deflateAnswer, false},
		{"permessage-deflate; client_max_window_bits", deflateAnswer, false},
		{"permessage-deflate; client_max_window_bits=10; server_no_context_takeover", deflateAnswer, false},
		{"permessage-deflate; server_max_window_bits=10", deflateAnswer + "; server_max_window_bits=10", false},
		{"permessage-deflate; server_max_window_bits=15", deflateAnswer, false},
		{"permessage-deflate; foo=1, permessage-deflate; client_no_context_takeover", deflateAnswer, false},
		{"x-webkit-deflate-frame, permessage-deflate", deflateAnswer, false},
		{"permessage-deflate; foo", "", false},
		{"permessage-deflate; server_max_window_bits=7", "", false},
		{"permessage-deflate; server_no_context_takeover; server_no_context_takeover", "", false},
		{"permessage-deflate; server_max_window_bits", "", false},
		{"x-webkit-deflate-frame", "", false},
		{"permessage-deflate", "", true},
	}
	on, off := &AcceptOptions{Compression: true}, &AcceptOptions{}
	handler := func(w http.ResponseWriter, r *http.Request) {
		opts := on
		if r.URL.Path == "/off" {
			opts = off
		}
		if c, err := Accept(w, r, opts); err == nil {
			c.CloseNow()
		}
	}
	native := func(x *server.Ctx) {
		opts := on
		if string(x.Request().Path()) == "/off" {
			opts = off
		}
		if c, err := AcceptNative(x, opts); err == nil {
			c.CloseNow()
		}
	}
	addrs := map[string]string{"native": startNative(t, native)}
	for _, e := range engines {
		addrs[e.name] = e.start(t, http.HandlerFunc(handler))
	}
	for name, addr := range addrs {
		for _, tc := range cases {
			path := "/"
			if tc.off {
				path = "/off"
			}
			var extra []string
			if tc.offer != "" {
				extra = append(extra, "Sec-WebSocket-Extensions: "+tc.offer+"\r\n")
			}
			resp := rawRequest(t, addr, handshakeRequest(path, extra...))
			if resp.StatusCode != 101 {
				t.Fatalf("%s %q: %s", name, tc.offer, resp.Status)
			}
			if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.want {
				t.Errorf("%s, offer %q (Compression %v): answered %q, want %q", name, tc.offer, !tc.off, got, tc.want)
			}
		}
	}
}

// TestDeflateNegotiationClient: Dial offers permessage-deflate only with
// Compression, and accepts only an answer valid for its offer.
func TestDeflateNegotiationClient(t *testing.T) {
	offers := make(chan string, 1)
	answer := ""
	addr := rawServer(t, func(r *http.Request, accept string) string {
		offers <- r.Header.Get("Sec-WebSocket-Extensions")
		if answer == "" {
			return switching(accept)
		}
		return switching(accept, "Sec-WebSocket-Extensions: "+answer+"\r\n")
	})
	cases := []struct {
		answer      string
		compression bool
		ok          bool
	}{
		{"", true, true},
		{"", false, true},
		{deflateAnswer, true, true},
		{"permessage-deflate", true, true},
		{"permessage-deflate; server_max_window_bits=9", true, true},
		{"PerMessage-Deflate; server_no_context_takeover", true, true},
		{deflateAnswer, false, false},
		{"permessage-deflate; client_max_window_bits=10", true, true},
		{"permessage-deflate; client_max_window_bits", true, false},
		{"permessage-deflate; foo", true, false},
		{"permessage-deflate; server_max_window_bits=16", true, false},
		{"permessage-deflate, permessage-deflate", true, false},
		{"x-foo", true, false},
		{"permessage-deflate; server_no_context_takeover=1", true, false},
	}
	for _, tc := range cases {
		answer = tc.answer
		c, _, err := Dial(testCtx(t), "ws://"+addr, &DialOptions{Compression: tc.compression})
		offer := <-offers
		wantOffer := ""
		if tc.compression {
			wantOffer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits"
		}
		if offer != wantOffer {
			t.Errorf("Compression %v: offered %q, want %q", tc.compression, offer, wantOffer)
		}
		if (err == nil) != tc.ok {
			t.Errorf("answer %q (Compression %v): Dial error %v, want ok %v", tc.answer, tc.compression, err, tc.ok)
		}
		if err == nil {
			c.CloseNow()
		}
	}
}

// deflateSizes are the message sizes of the round trips: around the
// threshold, and large.
var deflateSizes = []int{0, 1, DefaultCompressionThreshold - 1, DefaultCompressionThreshold, DefaultCompressionThreshold + 1, 4000, 70000, 1 << 20}

func deflatePayload(typ MessageType, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if typ == MessageText {
			b[i] = "the quick brown fox jumps over the lazy dog "[i%44]
		} else {
			b[i] = byte(i * i >> 5)
		}
	}
	return b
}

// TestDeflateEcho: messages of every size, text and binary, round-trip
// under permessage-deflate, on both servers, with Read/Write and with
// the event API; both sides also read the peer's uncompressed messages
// (the short ones are sent so).
func TestDeflateEcho(t *testing.T) {
	dopts := &DialOptions{Compression: true}
	for _, e := range engines {
		for _, api := range []string{"read", "events"} {
			t.Run(e.name+"/"+api, func(t *testing.T) {
				aopts := &AcceptOptions{Compression: true}
				var h http.Handler
				if api == "read" {
					h = echoHandler(t, aopts, nil)
				} else {
					h = eventHandler(t, aopts, func() EventHandler { return &echoEvents{} })
				}
				addr := e.start(t, h)
				c, resp, err := Dial(testCtx(t), "ws://"+addr, dopts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseNow()
				if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != deflateAnswer {
					t.Fatalf("answer %q", got)
				}
				ctx := testCtx(t)
				for _, typ := range []MessageType{MessageText, MessageBinary} {
					for _, n := range deflateSizes {
						p := deflatePayload(typ, n)
						if err := c.Write(ctx, typ, p); err != nil {
							t.Fatal(err)
						}
						gt, got, err := c.Read(ctx)
						if err != nil {
							t.Fatalf("%v %d: %v", typ, n, err)
						}
						if gt != typ || !bytes.Equal(got, p) {
							t.Fatalf("%v %d: got %v of %d bytes", typ, n, gt, len(got))
						}
					}
				}
				// Reader over a compressed message.
				p := deflatePayload(MessageText, 5000)
				c.Write(ctx, MessageText, p)
				_, r, err := c.Reader(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := io.ReadAll(r); err != nil || !bytes.Equal(got, p) {
					t.Fatalf("Reader: %d bytes, %v", len(got), err)
				}
				c.Close(ws.CloseNormal, "")
			})
		}
	}
}

// dialDeflateRaw is dialRaw with an extension offer; it returns the
// answer's Sec-WebSocket-Extensions.
func dialDeflateRaw(t *testing.T, addr, offer string) (*rawClient, string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	var extra []string
	if offer != "" {
		extra = append(extra, "Sec-WebSocket-Extensions: "+offer+"\r\n")
	}
	if _, err := io.WriteString(nc, handshakeRequest("/", extra...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 {
		t.Fatalf("handshake answered %s", resp.Status)
	}
	return &rawClient{t: t, nc: nc, br: br}, resp.Header.Get("Sec-WebSocket-Extensions")
}

// compressedFrame sends a masked frame with RSV1 set.
func (c *rawClient) compressedFrame(op ws.Opcode, fin bool, p []byte) {
	c.t.Helper()
	b := ws.AppendHeader(nil, ws.Header{Fin: fin, Rsv1: true, Opcode: op, Masked: true, Mask: rawMask, Length: int64(len(p))})
	start := len(b)
	b = append(b, p...)
	ws.Mask(rawMask, 0, b[start:])
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// TestDeflateRawClient: what goes on the wire: the server's echo of a
// long message is compressed (RSV1), a short one is not; a compressed
// message in fragments, and the peer's uncompressed messages, are read;
// with server_max_window_bits, longer messages go compressed in pieces.
func TestDeflateRawClient(t *testing.T) {
	for _, e := range engines {
		for _, api := range []string{"read", "events"} {
			t.Run(e.name+"/"+api, func(t *testing.T) {
				aopts := &AcceptOptions{Compression: true}
				h := echoHandler(t, aopts, nil)
				if api == "events" {
					h = eventHandler(t, aopts, func() EventHandler { return &echoEvents{} })
				}
				addr := e.start(t, h)
				c, ans := dialDeflateRaw(t, addr, "permessage-deflate; server_max_window_bits=9")
				if ans != deflateAnswer+"; server_max_window_bits=9" {
					t.Fatalf("answer %q", ans)
				}
				read := func() (ws.Header, []byte) {
					t.Helper()
					h, p, err := readFrameRules(c.br, ws.Rules{Role: ws.Client, MaxPayload: -1, Deflate: true})
					if err != nil {
						t.Fatal(err)
					}
					return h, p
				}
				check := func(want []byte, rsv1 bool) {
					t.Helper()
					h, p := read()
					if h.Rsv1 != rsv1 {
						t.Fatalf("echo of %d bytes: RSV1 %v, want %v", len(want), h.Rsv1, rsv1)
					}
					if h.Rsv1 {
						p = inflateTest(t, p)
					}
					if !bytes.Equal(p, want) {
						t.Fatalf("echo of %d bytes: got %d bytes", len(want), len(p))
					}
				}
				long := deflatePayload(MessageText, 512) // at most 2^9: compressed
				c.compressedFrame(ws.OpText, true, compressTest(t, long))
				check(long, true)
				short := deflatePayload(MessageText, 20)
				c.compressedFrame(ws.OpText, true, compressTest(t, short))
				check(short, false)
				c.frame(ws.OpBinary, true, true, long) // uncompressed from the peer
				check(long, true)
				over := deflatePayload(MessageText, 5000) // past the window: compressed in 512-byte pieces
				c.compressedFrame(ws.OpText, true, compressTest(t, over))
				check(over, true)
				z := compressTest(t, long)
				c.compressedFrame(ws.OpText, false, z[:10])
				c.frame(ws.OpPing, true, true, []byte("p"))
				c.frame(ws.OpContinuation, true, true, z[10:])
				if h, _ := read(); h.Opcode != ws.OpPong {
					t.Fatalf("got %v, want the pong", h.Opcode)
				}
				check(long, true)
				c.frame(ws.OpClose, true, true, closePayload(ws.CloseNormal, ""))
				c.expectClose(ws.CloseNormal)
			})
		}
	}
}

// TestDeflateViolations: compressed bad UTF-8 fails with 1007, data that
// does not inflate with 1007, a message that inflates past ReadLimit
// with 1009, RSV1 without negotiation (offer not made, or Compression
// off) with 1002, RSV1 on a continuation frame with 1002; with Read and
// with the event API.
func TestDeflateViolations(t *testing.T) {
	badUTF8 := append(deflatePayload(MessageText, 300), 0xff, 0xfe)
	bomb := make([]byte, 4<<20)
	cases := []struct {
		name  string
		offer string
		off   bool
		send  func(t *testing.T, c *rawClient)
		code  ws.CloseCode
	}{
		{"bad utf-8", "permessage-deflate", false, func(t *testing.T, c *rawClient) {
			c.compressedFrame(ws.OpText, true, compressTest(t, badUTF8))
		}, ws.CloseInvalidPayload},
		{"not deflate", "permessage-deflate", false, func(t *testing.T, c *rawClient) {
			c.compressedFrame(ws.OpBinary, true, []byte{0xff, 0xff, 0xff, 0xff, 0xff})
		}, ws.CloseInvalidPayload},
		{"bomb", "permessage-deflate", false, func(t *testing.T, c *rawClient) {
			c.compressedFrame(ws.OpBinary, true, compressTest(t, bomb))
		}, ws.CloseMessageTooBig},
		{"rsv1 not offered", "", false, func(t *testing.T, c *rawClient) {
			c.compressedFrame(ws.OpText, true, compressTest(t, []byte("hello")))
		}, ws.CloseProtocolError},
		{"rsv1 compression off", "permessage-deflate", true, func(t *testing.T, c *rawClient) {
			c.compressedFrame(ws.OpText, true, compressTest(t, []byte("hello")))
		}, ws.CloseProtocolError},
		{"rsv1 on continuation", "permessage-deflate", false, func(t *testing.T, c *rawClient) {
			z := compressTest(t, []byte("hello hello hello"))
			c.compressedFrame(ws.OpText, false, z[:3])
			c.compressedFrame(ws.OpContinuation, true, z[3:])
		}, ws.CloseProtocolError},
	}
	for _, e := range engines {
		for _, api := range []string{"read", "events"} {
			for _, tc := range cases {
				t.Run(e.name+"/"+api+"/"+tc.name, func(t *testing.T) {
					aopts := &AcceptOptions{Compression: !tc.off, Options: Options{ReadLimit: 1 << 20}}
					h := echoHandler(t, aopts, nil)
					if api == "events" {
						h = eventHandler(t, aopts, func() EventHandler { return &echoEvents{} })
					}
					c, _ := dialDeflateRaw(t, e.start(t, h), tc.offer)
					tc.send(t, c)
					c.expectClose(tc.code)
				})
			}
		}
	}
}

// TestDeflateBombBounded: inflating a message that grows past the limit
// allocates about the limit, not what the message would inflate to.
func TestDeflateBombBounded(t *testing.T) {
	const limit = 1 << 20
	z := compressTest(t, make([]byte, 64*limit))
	rd := &reader{}
	rd.asm.MaxMessage = limit
	if _, err := rd.inflate(nil, append([]byte(nil), z...), false, nil); err != ws.ErrMessageTooLarge {
		t.Fatalf("inflate: %v, want ErrMessageTooLarge", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := rd.inflate(nil, append(make([]byte, 0, len(z)+len(inflateTail)), z...), false, nil)
	runtime.ReadMemStats(&after)
	if err != ws.ErrMessageTooLarge {
		t.Fatalf("inflate: %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*limit {
		t.Errorf("inflating a %d-byte bomb with a %d-byte limit allocated %d bytes", 64*limit, limit, got)
	}
	// Within the limit it inflates.
	p := deflatePayload(MessageText, limit)
	out, err := rd.inflate(nil, compressTest(t, p), true, nil)
	if err != nil || !bytes.Equal(out, p) {
		t.Fatalf("inflate at the limit: %d bytes, %v", len(out), err)
	}
}

// TestDeflateClientTakeover: a client whose server keeps its context
// (no server_no_context_takeover in the answer) inflates messages that
// refer back into the previous ones.
func TestDeflateClientTakeover(t *testing.T) {
	msgs := [][]byte{deflatePayload(MessageText, 3000), deflatePayload(MessageText, 3000), []byte(strings.Repeat("xyz", 100))}
	addr := fakeServer(t, "Sec-WebSocket-Extensions: permessage-deflate\r\n", func(nc net.Conn, br *bufio.Reader) {
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression)
		for _, m := range msgs {
			b.Reset()
			fw.Write(m)
			fw.Flush()
			z := b.Bytes()[:b.Len()-4]
			nc.Write(append(ws.AppendHeader(nil, ws.Header{Fin: true, Rsv1: true, Opcode: ws.OpText, Length: int64(len(z))}), z...))
		}
		io.Copy(io.Discard, nc)
	})
	c, _, err := Dial(testCtx(t), "ws://"+addr, &DialOptions{Compression: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for i, m := range msgs {
		_, got, err := c.Read(testCtx(t))
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
		}
	}
}

// TestDeflateWindowPieces: compressed in pieces of a small window, a
// message inflates whole, and no piece refers back past its own start:
// each piece, sync-flushed, inflates on its own.
func TestDeflateWindowPieces(t *testing.T) {
	p := deflatePayload(MessageText, 3000)
	for _, window := range []int{256, 512, 1024, 0} {
		var z []byte
		sent, err := deflate(p, nil, window, false, func(b []byte) error { z = append([]byte(nil), b...); return nil })
		if !sent || err != nil {
			t.Fatalf("window %d: sent %v, %v", window, sent, err)
		}
		if got := inflateTest(t, z); !bytes.Equal(got, p) {
			t.Fatalf("window %d: inflated %d bytes", window, len(got))
		}
		if window == 0 {
			continue
		}
		// Split at the sync markers: every piece inflates without the
		// ones before it.
		pieces := bytes.Split(append(z, deflateTail[:]...), deflateTail[:])
		var all []byte
		for _, piece := range pieces[:len(pieces)-1] {
			all = append(all, inflateTest(t, piece)...)
		}
		if !bytes.Equal(all, p) {
			t.Fatalf("window %d: the pieces inflated on their own give %d bytes", window, len(all))
		}
	}
}

// TestDeflateThresholdNegative: with a negative CompressionThreshold
// every message goes compressed, the empty one and incompressible ones
// too.
func TestDeflateThresholdNegative(t *testing.T) {
	aopts := &AcceptOptions{Compression: true, Options: Options{CompressionThreshold: -1}}
	addr := engines[0].start(t, echoHandler(t, aopts, nil))
	c, _ := dialDeflateRaw(t, addr, "permessage-deflate")
	rnd := make([]byte, 300)
	for i := range rnd {
		rnd[i] = byte(i*7919 ^ i>>3*131)
	}
	for _, m := range [][]byte{nil, []byte("a"), rnd} {
		c.frame(ws.OpBinary, true, true, m)
		h, z, err := readFrameRules(c.br, ws.Rules{Role: ws.Client, MaxPayload: -1, Deflate: true})
		if err != nil {
			t.Fatal(err)
		}
		if !h.Rsv1 || !bytes.Equal(inflateTest(t, z), m) {
			t.Fatalf("echo of %d bytes: RSV1 %v, %d bytes", len(m), h.Rsv1, len(z))
		}
	}
}

// TestDeflateClientWindow: a client told client_max_window_bits=9
// compresses a long message in pieces of 512 bytes, each inflating on
// its own.
func TestDeflateClientWindow(t *testing.T) {
	got := make(chan []byte, 1)
	addr := fakeServer(t, "Sec-WebSocket-Extensions: "+deflateAnswer+"; client_max_window_bits=9\r\n", func(nc net.Conn, br *bufio.Reader) {
		h, p, err := readFrameRules(br, ws.Rules{Role: ws.Server, MaxPayload: -1, Deflate: true})
		if err != nil || !h.Rsv1 {
			got <- nil
			return
		}
		got <- p
	})
	c, _, err := Dial(testCtx(t), "ws://"+addr, &DialOptions{Compression: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	p := deflatePayload(MessageText, 3000)
	if err := c.Write(testCtx(t), MessageText, p); err != nil {
		t.Fatal(err)
	}
	z := <-got
	if z == nil {
		t.Fatal("no compressed frame")
	}
	pieces := bytes.Split(append(z, deflateTail[:]...), deflateTail[:])
	var all []byte
	for _, piece := range pieces[:len(pieces)-1] {
		out := inflateTest(t, piece)
		if len(out) > 512 {
			t.Fatalf("a piece of %d bytes, over the 512-byte window", len(out))
		}
		all = append(all, out...)
	}
	if !bytes.Equal(all, p) {
		t.Fatalf("inflated %d bytes, want %d", len(all), len(p))
	}
}

// fakeServer answers one handshake with a 101 carrying extra (header
// lines), then hands the connection to serve; it returns the address.
func fakeServer(t *testing.T, extra string, serve func(nc net.Conn, br *bufio.Reader)) string {
	ln := listen(t)
	t.Cleanup(func() { ln.Close() })
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.WriteString(nc, switching(ws.AcceptKey(r.Header.Get("Sec-WebSocket-Key")), extra))
		serve(nc, br)
	}()
	return ln.Addr().String()
}

// TestDeflateServerClientTakeover: with ClientContextTakeover, a client
// that allows context takeover keeps it (the answer has no
// client_no_context_takeover) and its messages, each compressed with the
// context of those before (a repeat costs a few bytes), are read whole,
// on both engines and both APIs, as are uncompressed ones between them
// (not part of the context) and messages longer than the 32 KiB window;
// a client that asks for client_no_context_takeover keeps it.
func TestDeflateServerClientTakeover(t *testing.T) {
	long := deflatePayload(MessageBinary, 50000)
	msgs := []struct {
		p          []byte
		compressed bool
	}{
		{deflatePayload(MessageText, 3000), true},
		{deflatePayload(MessageText, 3000), true}, // the same again: refers back
		{[]byte("plain, outside the context"), false},
		{deflatePayload(MessageText, 2000), true},
		{long, true},
		{long[len(long)-20000:], true}, // refers back into the last window
		{deflatePayload(MessageText, 3000), true},
	}
	for _, e := range engines {
		for _, api := range []string{"read", "events"} {
			t.Run(e.name+"/"+api, func(t *testing.T) {
				aopts := &AcceptOptions{Compression: true, ClientContextTakeover: true, Options: Options{CompressionThreshold: 1 << 20}}
				h := echoHandler(t, aopts, nil)
				if api == "events" {
					h = eventHandler(t, aopts, func() EventHandler { return &echoEvents{} })
				}
				addr := e.start(t, h)
				if _, ans := dialDeflateRaw(t, addr, "permessage-deflate; client_no_context_takeover"); ans != deflateAnswer {
					t.Fatalf("answer to a client that asks for no takeover: %q", ans)
				}
				c, ans := dialDeflateRaw(t, addr, "permessage-deflate; client_max_window_bits")
				if ans != "permessage-deflate; server_no_context_takeover" {
					t.Fatalf("answer %q, want no client_no_context_takeover", ans)
				}
				var b bytes.Buffer
				fw, _ := flate.NewWriter(&b, flate.BestSpeed) // one compressor for all: context kept
				for i, m := range msgs {
					typ := ws.OpBinary
					if i != 4 && i != 5 {
						typ = ws.OpText
					}
					if m.compressed {
						b.Reset()
						fw.Write(m.p)
						fw.Flush()
						z := b.Bytes()[:b.Len()-4]
						if i == 1 && len(z) > 100 {
							t.Fatalf("a repeat compressed to %d bytes: the test's compressor kept no context", len(z))
						}
						c.compressedFrame(typ, true, z)
					} else {
						c.frame(typ, true, true, m.p)
					}
					h, p := c.read() // the echo, under the threshold: uncompressed
					if h.Opcode != typ || h.Rsv1 || !bytes.Equal(p, m.p) {
						t.Fatalf("message %d: %s frame of %d bytes (rsv1 %v), want the echo of the %d sent", i, h.Opcode, len(p), h.Rsv1, len(m.p))
					}
				}
			})
		}
	}
}

// TestKeepWindow: the window kept for context takeover is the last 32 KiB
// of everything appended, whatever the sizes, in an array that never
// grows past 32 KiB.
func TestKeepWindow(t *testing.T) {
	for _, size := range []int{maxWindow, sentWindow} {
		var all, hist []byte
		r := rand.New(rand.NewPCG(1, 2))
		for i := range 400 {
			n := r.IntN(size / 10)
			if i%50 == 49 {
				n = size + r.IntN(5000)
			}
			msg := make([]byte, n)
			for j := range msg {
				msg[j] = byte(r.Uint32())
			}
			all = append(all, msg...)
			hist = keepWindow(hist, msg, size)
			want := all[max(0, len(all)-size):]
			if !bytes.Equal(hist, want) {
				t.Fatalf("size %d, after %d messages (%d bytes): window of %d bytes differs from the last %d", size, i+1, len(all), len(hist), len(want))
			}
			if cap(hist) > size {
				t.Fatalf("size %d: the window's array grew to %d bytes", size, cap(hist))
			}
		}
	}
}

// TestDeflateServerTakeover: with ServerContextTakeover, a client that
// allows it gets an answer without server_no_context_takeover and
// messages compressed with the context of those sent before (a repeat
// costs a few bytes), which inflate with that context (the last 32 KiB
// this end sent compressed): messages sent uncompressed (short, or not
// shortened by compression) are not part of it, on both engines and both
// APIs. A client that asks for server_no_context_takeover, or for a
// smaller window, gets neither.
func TestDeflateServerTakeover(t *testing.T) {
	noise := make([]byte, 1500)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	words := randomWords(r, 1500) // compressible, but a repeat of it compresses to little only with the context
	msgs := [][]byte{
		words,
		words, // the same again: refers back
		[]byte("short: sent as it is"),
		noise, // not shortened by compression: sent as it is
		deflatePayload(MessageText, 2000),
		deflatePayload(MessageBinary, 70000), // longer than a block
		deflatePayload(MessageText, 3000),
	}
	for _, e := range engines {
		for _, api := range []string{"read", "events"} {
			t.Run(e.name+"/"+api, func(t *testing.T) {
				aopts := &AcceptOptions{Compression: true, ServerContextTakeover: true}
				h := echoHandler(t, aopts, nil)
				if api == "events" {
					h = eventHandler(t, aopts, func() EventHandler { return &echoEvents{} })
				}
				addr := e.start(t, h)
				for _, offer := range []string{"permessage-deflate; server_no_context_takeover", "permessage-deflate; server_max_window_bits=10"} {
					if _, ans := dialDeflateRaw(t, addr, offer); !strings.Contains(ans, "server_no_context_takeover") {
						t.Fatalf("answer to %q: %q", offer, ans)
					}
				}
				c, ans := dialDeflateRaw(t, addr, "permessage-deflate")
				if ans != "permessage-deflate; client_no_context_takeover" {
					t.Fatalf("answer %q, want no server_no_context_takeover", ans)
				}
				var window []byte // what the server sent compressed: its context
				for i, m := range msgs {
					typ := ws.OpText
					if i == 3 || i == 5 {
						typ = ws.OpBinary
					}
					c.frame(typ, true, true, m)
					h, p, err := readFrameRules(c.br, ws.Rules{Role: ws.Client, MaxPayload: -1, Deflate: true})
					if err != nil {
						t.Fatal(err)
					}
					if wantZ := i != 2 && i != 3; h.Rsv1 != wantZ {
						t.Fatalf("message %d: compressed %v, want %v", i, h.Rsv1, wantZ)
					}
					if h.Rsv1 {
						if i == 1 && len(p) > len(m)/4 {
							t.Errorf("a repeat compressed to %d bytes: no context kept", len(p))
						}
						fr := flate.NewReaderDict(io.MultiReader(bytes.NewReader(p), bytes.NewReader(inflateTail[:])), window)
						if p, err = io.ReadAll(fr); err != nil {
							t.Fatalf("message %d does not inflate with the context: %v", i, err)
						}
						window = keepWindow(window, p, maxWindow)
					}
					if !bytes.Equal(p, m) {
						t.Fatalf("message %d: %d bytes, want the %d sent", i, len(p), len(m))
					}
				}
			})
		}
	}
}

// TestDeflateDialTakeover: Dial with ContextTakeover offers what a
// browser offers, and against a server that keeps both contexts, both
// ends compress with theirs: messages that repeat, short ones sent as
// they are, and long ones, echo whole, on both engines. Against a server
// that asks for a small client window, the client keeps none.
func TestDeflateDialTakeover(t *testing.T) {
	offer := make(chan string, 1)
	words := make([]byte, 1500)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range words {
		words[i] = 'a' + byte(r.IntN(26))
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			aopts := &AcceptOptions{Compression: true, ClientContextTakeover: true, ServerContextTakeover: true}
			seen := e.start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case offer <- r.Header.Get("Sec-WebSocket-Extensions"):
				default:
				}
				echoHandler(t, aopts, nil).ServeHTTP(w, r)
			}))
			ctx := testCtx(t)
			c, resp, err := Dial(ctx, "ws://"+seen, &DialOptions{Compression: true, ContextTakeover: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if got := <-offer; got != "permessage-deflate; client_max_window_bits" {
				t.Errorf("offer %q, want a browser's", got)
			}
			if ans := resp.Header.Get("Sec-WebSocket-Extensions"); ans != "permessage-deflate" {
				t.Errorf("answer %q, want both contexts kept", ans)
			}
			if d := c.negotiatedDeflate(); d == nil || !d.keepSent || !d.takeover {
				t.Fatalf("the client keeps %+v, want both contexts", d)
			}
			for i, m := range [][]byte{words, words, []byte("short"), deflatePayload(MessageBinary, 70000), words} {
				if err := c.Write(ctx, MessageBinary, m); err != nil {
					t.Fatal(err)
				}
				_, got, err := c.Read(ctx)
				if err != nil || !bytes.Equal(got, m) {
					t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
				}
			}
		})
	}
	t.Run("small client window", func(t *testing.T) {
		addr := fakeServer(t, "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits=10\r\n", func(nc net.Conn, br *bufio.Reader) {
			io.Copy(io.Discard, br)
		})
		c, _, err := Dial(testCtx(t), "ws://"+addr, &DialOptions{Compression: true, ContextTakeover: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		if d := c.negotiatedDeflate(); d == nil || d.keepSent || d.window != 1<<10 {
			t.Fatalf("the client keeps %+v, want its messages in pieces of 1 KiB, no context", d)
		}
	})
}

// randomWords is n bytes of words drawn at random from a small
// vocabulary: text any deflate shortens, that repeats little of itself.
func randomWords(r *rand.Rand, n int) []byte {
	vocab := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega")
	var b []byte
	for len(b) < n {
		b = append(b, vocab[r.IntN(len(vocab))]...)
		b = append(b, ' ')
	}
	return b[:n]
}
