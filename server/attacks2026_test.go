package server

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// The server-side shapes of the HTTP attacks published in 2025-26, each a
// named test (docs/security.md has the table: shape, CVE or advisory,
// what hotpath and net/http do). MadeYouReset, the reconnect and the
// reset floods are in h2_attack_reconnect_test.go; the HTTP/2 Bomb in
// h2_attack_test.go (hpack-bomb) and wire/h2 (TestHPACKBomb); trailers by
// count, size and references in orphans_test.go (TestH2TrailerLimits).

// forH2APIs runs f against a fresh h2c server on each API, echoing.
func forH2APIs(t *testing.T, cfg func(*Server), f func(t *testing.T, s *Server, c net.Conn)) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			s := &Server{}
			if api == "native" {
				s.Native = echoNative
			} else {
				s.Handler = echo
			}
			if cfg != nil {
				cfg(s)
			}
			c := rawH2(t, s)
			c.Write(h2.AppendSettingsAck(nil))
			f(t, s, c)
		})
	}
}

func postBlock(enc *h2.Encoder) []byte {
	b := enc.StartBlock(nil)
	b = enc.AppendField(b, ":method", "POST")
	b = enc.AppendField(b, ":scheme", "http")
	b = enc.AppendField(b, ":authority", "example.com")
	return enc.AppendField(b, ":path", "/")
}

// GO-2026-6612: connection flow control refunded twice. POST bodies in
// padded DATA frames, each stream reset mid-body while its handler
// reads: the connection window the server gives back never exceeds what
// it advertised (4 MiB), over 2 MB of DATA.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (forH2APIs): a frame-level shape; HTTP/1.1 has no frames and the
// hand-off's HTTP/2 is net/http's.
func TestAttack2026ConnWindowRefund(t *testing.T) {
	forH2APIs(t, nil, func(t *testing.T, s *Server, c net.Conn) {
		var enc h2.Encoder
		payload := make([]byte, 1000)
		sent, credited := int64(0), int64(h2.DefaultInitialWindowSize)
		var buf []byte
		tmp := make([]byte, 64<<10)
		id := uint32(1)
		for round := range 8 {
			var b []byte
			for range 50 {
				b = h2.AppendHeaders(b, id, h2.FlagEndHeaders, h2.Priority{}, postBlock(&enc), 0)
				for range 4 {
					b = h2.AppendData(b, id, 0, payload, 255)
					sent += int64(len(payload)) + 256
				}
				b = h2.AppendRSTStream(b, id, h2.ErrCodeCancel)
				id += 2
			}
			pingData := [8]byte{'r', 'e', 'f', 'u', 'n', 'd', byte(round)}
			b = h2.AppendPing(b, 0, pingData)
			if _, err := c.Write(b); err != nil {
				t.Fatal(err)
			}
			// Read until the PING's ACK, adding up the connection's
			// WINDOW_UPDATEs.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			for acked := false; !acked; {
				for {
					f, n, err := h2.ReadFrame(buf, h2.MaxFrameSizeLimit)
					if err != nil {
						break
					}
					switch {
					case f.Type == h2.FrameWindowUpdate && f.StreamID == 0:
						credited += int64(f.Increment())
					case f.Type == h2.FrameGoAway:
						t.Fatalf("GOAWAY %v %q", f.ErrCode(), f.DebugData())
					case f.Type == h2.FramePing && f.Flags.Has(h2.FlagAck) && f.PingData() == pingData:
						acked = true
					}
					buf = buf[n:]
				}
				if acked {
					break
				}
				n, err := c.Read(tmp)
				if n == 0 && err != nil {
					t.Fatal(err)
				}
				buf = append(buf, tmp[:n]...)
			}
			if open := credited - sent; open > h2ConnWindow {
				t.Fatalf("after %d bytes of DATA, the connection window the server opened is %d, past the %d it grants: a refund counted twice", sent, open, h2ConnWindow)
			}
		}
		if open := credited - sent; open < h2ConnWindow/2 {
			t.Errorf("after %d bytes of DATA on reset streams, only %d of the %d window given back: credit lost", sent, open, h2ConnWindow)
		}
	})
}

// GO-2026-6611: repeated SETTINGS_INITIAL_WINDOW_SIZE changes cost the
// server O(streams) each. With 250 streams open, a client that keeps
// changing it is cut (GOAWAY ENHANCE_YOUR_CALM): after a count of frames,
// so within a second on a quiet machine, a few under -race beside busy
// loops; unbounded, its 100,000 changes would take far longer.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (forH2APIs): a frame-level shape; HTTP/1.1 has no frames and the
// hand-off's HTTP/2 is net/http's.
func TestAttack2026SettingsWindowChurn(t *testing.T) {
	forH2APIs(t, nil, func(t *testing.T, s *Server, c net.Conn) {
		var enc h2.Encoder
		var b []byte
		for id := uint32(1); id < 2*h2.DefaultMaxConcurrentStreams; id += 2 {
			b = h2.AppendHeaders(b, id, h2.FlagEndHeaders, h2.Priority{}, postBlock(&enc), 0) // bodies never come
		}
		c.Write(b)
		var churn []byte
		for i := range 100 {
			churn = h2.AppendSettings(churn, h2.Setting{ID: h2.SettingInitialWindowSize, Val: 65535 + uint32(i%2)})
		}
		start := time.Now()
		go func() {
			for range 1000 {
				c.SetWriteDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(churn); err != nil {
					return
				}
			}
		}()
		f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
		if f.ErrCode() != h2.ErrCodeEnhanceYourCalm {
			t.Fatalf("GOAWAY %v %q, want ENHANCE_YOUR_CALM", f.ErrCode(), f.DebugData())
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("cut %v after the churn began, want within a few seconds", d)
		}
	})
}

// CVE-2026-33814: SETTINGS_MAX_FRAME_SIZE of 0 (which looped a peer's
// writer), or outside 16,384 to 2^24-1, is a connection error
// (PROTOCOL_ERROR, RFC 9113 §6.5.2).
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (forH2APIs): a frame-level shape; HTTP/1.1 has no frames and the
// hand-off's HTTP/2 is net/http's.
func TestAttack2026InvalidMaxFrameSize(t *testing.T) {
	for _, v := range []uint32{0, 1, h2.DefaultMaxFrameSize - 1, h2.MaxFrameSizeLimit + 1} {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			forH2APIs(t, nil, func(t *testing.T, s *Server, c net.Conn) {
				// AppendSettings writes what it is given; the server checks.
				c.Write(h2.AppendSettings(nil, h2.Setting{ID: h2.SettingMaxFrameSize, Val: v}))
				f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
				if f.ErrCode() != h2.ErrCodeProtocol {
					t.Errorf("GOAWAY %v %q, want PROTOCOL_ERROR", f.ErrCode(), f.DebugData())
				}
			})
		})
	}
}

// CVE-2026-27141: frames of types 0x0a-0x0f (unassigned or extensions:
// ALTSVC, ORIGIN, PRIORITY_UPDATE...) panicked a server. They are
// ignored (§4.1, §5.5), on stream 0 and on a request's stream, empty or
// not, and the request is answered.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (forH2APIs): a frame-level shape; HTTP/1.1 has no frames and the
// hand-off's HTTP/2 is net/http's.
func TestAttack2026ReservedFrameTypes(t *testing.T) {
	forH2APIs(t, nil, func(t *testing.T, s *Server, c net.Conn) {
		var b []byte
		for typ := h2.FrameType(0x0a); typ <= 0x0f; typ++ {
			for _, id := range []uint32{0, 1, 3} {
				for _, n := range []int{0, 1, 5, 64} {
					b = h2.AppendFrameHeader(b, h2.FrameHeader{Length: uint32(n), Type: typ, Flags: 0xff, StreamID: id})
					b = append(b, make([]byte, n)...)
				}
			}
		}
		var enc h2.Encoder
		b = h2.AppendHeaders(b, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0)
		c.Write(b)
		f := readFrames(t, c, func(f *h2.Frame) bool {
			return f.Type == h2.FrameGoAway || f.Type == h2.FrameRSTStream || f.Type == h2.FrameHeaders
		})
		if f.Type != h2.FrameHeaders || f.StreamID != 1 {
			t.Fatalf("%v %v on stream %d, want the request's response", f.Type, f.ErrCode(), f.StreamID)
		}
	})
}

// CVE-2026-56853: an h2c client that sends part of the preface, or the
// preface and no SETTINGS, and holds, is cut by ReadHeaderTimeout, as a
// slow HTTP/1.1 head is.
//
// Modes: h2c, raw bytes, both APIs: a held HTTP/2 preface on a cleartext
// listener.
func TestAttack2026H2CPrefaceHold(t *testing.T) {
	for _, api := range []string{"handler", "native"} {
		for _, sent := range []string{h2.ClientPreface[:10], h2.ClientPreface} {
			t.Run(fmt.Sprintf("%s/%d bytes", api, len(sent)), func(t *testing.T) {
				s := &Server{Protocols: h2cProtocols(), ReadHeaderTimeout: 300 * time.Millisecond, ErrorLog: discardLog}
				if api == "native" {
					s.Native = echoNative
				} else {
					s.Handler = echo
				}
				c := dial(t, startServer(t, s))
				start := time.Now()
				io.WriteString(c, sent)
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, c) // until the server closes
				if d := time.Since(start); d > 2*time.Second {
					t.Errorf("held %v, want cut at ReadHeaderTimeout (300 ms)", d)
				}
			})
		}
	}
}

// A PING trickle on an idle (parked) HTTP/2 connection does not keep it:
// IdleTimeout counts from the last stream, whatever the client sends.
//
// Modes: h2c on hotpath's HTTP/2 engine, both APIs, raw frames
// (forH2APIs): a frame-level shape; HTTP/1.1 has no frames and the
// hand-off's HTTP/2 is net/http's.
func TestAttack2026PingTrickleOnIdleConn(t *testing.T) {
	forH2APIs(t, func(s *Server) { s.IdleTimeout = 600 * time.Millisecond }, func(t *testing.T, s *Server, c net.Conn) {
		var enc h2.Encoder
		c.Write(h2.AppendHeaders(nil, 1, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, getBlock(&enc), 0))
		start := time.Now()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write(h2.AppendPing(nil, 0, [8]byte{1})); err != nil {
						return
					}
				}
			}
		})
		defer func() { close(stop); wg.Wait() }()
		f := readFrames(t, c, func(f *h2.Frame) bool { return f.Type == h2.FrameGoAway })
		if f.ErrCode() != h2.ErrCodeNo {
			t.Errorf("GOAWAY %v %q, want NO_ERROR (idle timeout)", f.ErrCode(), f.DebugData())
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("cut %v after the last stream, want about IdleTimeout (600 ms)", d)
		}
	})
}

// A header trickle on a keep-alive HTTP/1.1 connection that has parked
// between requests is cut by ReadHeaderTimeout, counted from the new
// request's first byte.
//
// Modes: HTTP/1.1, raw bytes, both APIs: a head trickled on a parked
// HTTP/1.1 connection.
func TestAttack2026HeaderTrickleOnParkedConn(t *testing.T) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			s := &Server{ReadHeaderTimeout: 500 * time.Millisecond, ErrorLog: discardLog}
			if api == "native" {
				s.Native = echoNative
			} else {
				s.Handler = echo
			}
			c := dial(t, startServer(t, s))
			br := bufio.NewReader(c)
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			time.Sleep(300 * time.Millisecond) // idle: parked where parking is on
			start := time.Now()
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
			closed := make(chan struct{})
			go func() {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, br)
				close(closed)
			}()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for waiting := true; waiting; {
				select {
				case <-closed:
					waiting = false
				case <-tick.C:
					c.Write([]byte("X")) // one byte of a header field at a time
				}
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("trickle held %v, want cut at ReadHeaderTimeout (500 ms)", d)
			}
		})
	}
}

// Half TLS handshakes: connections that send part of a ClientHello and
// hold are cut by ReadHeaderTimeout, and others are served meanwhile.
// (bench scale, 15,000 of them: see docs/security.md.)
//
// Modes: TLS, before any protocol: half ClientHellos.
func TestAttack2026HalfTLSHandshakes(t *testing.T) {
	const holds = 200
	s := &Server{Handler: echo, ReadHeaderTimeout: 500 * time.Millisecond, ErrorLog: discardLog}
	cert, pool := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	addr := startTLS(t, s)
	// A TLS record header announcing a 512-byte handshake, and 5 bytes of it.
	half := []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03}
	var conns []net.Conn
	for range holds {
		c := dial(t, addr)
		c.Write(half)
		conns = append(conns, c)
	}
	start := time.Now()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + addr + "/")
	if err != nil {
		t.Fatalf("a client beside %d half handshakes: %v", holds, err)
	}
	resp.Body.Close()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			io.Copy(io.Discard, c)
		})
	}
	wg.Wait()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("%d half handshakes held %v, want cut at ReadHeaderTimeout (500 ms)", holds, d)
	}
}

// h1Attack sends raw to a fresh server on each API and checks the answer.
func h1Attack(t *testing.T, raw string, check func(t *testing.T, api, answer string, paths []string)) {
	for _, api := range []string{"handler", "native"} {
		t.Run(api, func(t *testing.T) {
			var mu sync.Mutex
			var paths []string
			s := &Server{ErrorLog: discardLog}
			if api == "native" {
				s.Native = func(c *Ctx) {
					mu.Lock()
					paths = append(paths, string(c.Path()))
					mu.Unlock()
					c.ReadBody(nil)
					c.WriteString("ok")
				}
			} else {
				s.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					paths = append(paths, r.URL.Path)
					mu.Unlock()
					io.Copy(io.Discard, r.Body)
					io.WriteString(w, "ok")
				})
			}
			c := dial(t, startServer(t, s))
			io.WriteString(c, raw)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			answer, _ := io.ReadAll(c)
			mu.Lock()
			defer mu.Unlock()
			check(t, api, string(answer), paths)
		})
	}
}

// CVE-2025-22871: a bare LF ending a chunk-size line (request smuggling
// through a proxy that reads it otherwise) is a 400.
//
// Modes: HTTP/1.1, raw bytes, both APIs (h1Attack): chunked framing is
// HTTP/1.1's.
func TestAttack2026ChunkSizeBareLF(t *testing.T) {
	h1Attack(t, "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
		func(t *testing.T, api, answer string, paths []string) {
			if !strings.Contains(answer, " 400 ") || strings.Contains(strings.Join(paths, " "), "/smuggled") {
				t.Errorf("answer %q, handlers saw %v: want a 400 and nothing smuggled", answer, paths)
			}
		})
}

// Transfer-Encoding with Content-Length, however either is spelt, is
// refused (400; 501 for a coding other than chunked) with the connection
// closed (RFC 9112 §6.1), never a body read one way.
//
// Modes: HTTP/1.1, raw bytes, both APIs (h1Attack): Transfer-Encoding
// against Content-Length is HTTP/1.1's.
func TestAttack2026TEWithCLAnyCase(t *testing.T) {
	for _, te := range []string{"Transfer-Encoding: chunked", "transfer-encoding: CHUNKED", "TRANSFER-ENCODING: ChUnKeD", "Transfer-Encoding: gzip, chunked"} {
		t.Run(te, func(t *testing.T) {
			h1Attack(t, "POST /a HTTP/1.1\r\nHost: x\r\n"+te+"\r\nContent-Length: 5\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
				func(t *testing.T, api, answer string, paths []string) {
					refused := strings.HasPrefix(answer, "HTTP/1.1 400 ") || strings.HasPrefix(answer, "HTTP/1.1 501 ")
					if !refused || strings.Count(answer, "HTTP/1.1 ") != 1 || len(paths) != 0 {
						t.Errorf("answer %q, handlers saw %v: want one 400 or 501 and no handler", answer, paths)
					}
				})
		})
	}
}

// GO-2026-6613: a 2xx to CONNECT without a hijack, then bytes the client
// pipelined after the CONNECT: they are the tunnel's, never a request.
//
// Modes: HTTP/1.1, raw bytes, both APIs (h1Attack): bytes pipelined after
// CONNECT are HTTP/1.1's shape.
func TestAttack2026ConnectThenPipelined(t *testing.T) {
	h1Attack(t, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
		func(t *testing.T, api, answer string, paths []string) {
			if strings.Contains(strings.Join(paths, " "), "/smuggled") || strings.Count(answer, "HTTP/1.1 ") > 1 {
				t.Errorf("answer %q, handlers saw %v: the bytes after CONNECT were read as a request", answer, paths)
			}
		})
}

// CVE-2025-58186, CVE-2025-61726, GO-2026-6609: floods of cookies, form
// parameters and Range parts, on every mode of the http.Handler API. The
// head's limits (64 KiB, 500 fields) bound what reaches net/http's
// parsers, which the http.Handler API runs with the fixes of the Go that
// builds it (the README states the floor): the handler never parses more
// than net/http's caps, and a Range too long for the head never reaches
// http.ServeContent.
//
// Over HTTP/1.1 the 60,000-byte Cookie field is served; over HTTP/2 Go's
// client sends it as 12,000 crumbs (RFC 9113 §8.2.3), which HTTP/2 counts
// at 32 bytes of overhead each (§6.5.2), some 490 KB: far past the header
// list limit, so no handler runs: Go's client refuses to send it once it
// has the server's SETTINGS_MAX_HEADER_LIST_SIZE; sent before, net/http's
// HTTP/2 server (the hand-off) answers 431, and hotpath's engine, whose
// block decodes past four times the limit, ends the connection as for an
// HPACK bomb (wire/h2's ErrHPACKBomb, ENHANCE_YOUR_CALM), having copied
// nothing past the limit. The Range
// field alone is past HTTP/2's advertised SETTINGS_MAX_HEADER_LIST_SIZE,
// so Go's client does not send it (or, sent on a connection before its
// SETTINGS came, it is answered 431); HTTP/1.1 answers 431.
func TestAttack2026ParserFloods(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		t.Parallel()
		var cookies, formParams atomic.Int64
		var formErr atomic.Value
		var ranged atomic.Bool
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/cookies":
				cookies.Store(int64(len(r.Cookies())))
			case "/form":
				formErr.Store(fmt.Sprint(r.ParseForm()))
				formParams.Store(int64(len(r.PostForm["a"])))
			case "/range":
				ranged.Store(true)
				http.ServeContent(w, r, "f", time.Time{}, strings.NewReader(strings.Repeat("x", 100000)))
			}
		})
		base, c := m.serve(t, &Server{}, h, nil)
		do := func(req *http.Request) (*http.Response, error) {
			resp, err := c.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return resp, err
		}

		req := mustRequest(t, "GET", base+"/cookies")
		req.Header.Set("Cookie", strings.Repeat("a=1; ", 12000)) // 60,000 bytes, under MaxHeaderBytes
		resp, err := do(req)
		switch n := cookies.Load(); {
		case n > 3000:
			t.Errorf("12,000 cookies: the handler parsed %d; want at most 3,000 (net/http's cap since CVE-2025-58186)", n)
		case !m.isH2() && (err != nil || resp.StatusCode != 200):
			t.Errorf("12,000 cookies over HTTP/1.1: %v %v; want 200", resp, err)
		case m.isH2() && err == nil && resp.StatusCode != 431:
			t.Errorf("12,000 cookie crumbs over HTTP/2: %d; want 431", resp.StatusCode)
		case m.isH2() && err != nil && !strings.Contains(err.Error(), "larger than peer's advertised limit") &&
			(!strings.HasPrefix(m.proto, "h2") || !strings.Contains(err.Error(), "ENHANCE_YOUR_CALM")):
			t.Errorf("12,000 cookie crumbs over HTTP/2: %v; want 431, the client's refusal, or GOAWAY ENHANCE_YOUR_CALM from hotpath's engine", err)
		}

		body := strings.Repeat("a=1&", 20000)
		req, _ = http.NewRequest("POST", base+"/form", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if resp, err := do(req); err != nil || resp.StatusCode != 200 {
			t.Errorf("20,000 form parameters: %v %v; want the handler's 200", resp, err)
		}
		if perr, _ := formErr.Load().(string); perr == "<nil>" && formParams.Load() > 10000 {
			t.Errorf("20,000 form parameters parsed without error (%d), want net/http's cap of 10,000 (CVE-2025-61726)", formParams.Load())
		}

		var parts strings.Builder
		for i := range 20000 {
			if i > 0 {
				parts.WriteByte(',')
			}
			fmt.Fprintf(&parts, "%d-%d", 2*i, 2*i)
		}
		req = mustRequest(t, "GET", base+"/range")
		req.Header.Set("Range", "bytes="+parts.String())
		resp, err = do(req)
		switch {
		case ranged.Load():
			t.Errorf("20,000 Range parts reached the handler")
		case !m.isH2() && (err != nil || resp.StatusCode != 431):
			t.Errorf("20,000 Range parts over HTTP/1.1: %v %v; want 431 (the head past MaxHeaderBytes)", resp, err)
		case m.isH2() && (err == nil && resp.StatusCode != 431 || err != nil && !strings.Contains(err.Error(), "larger than peer's advertised limit")):
			t.Errorf("20,000 Range parts over HTTP/2: %v %v; want Go's client to refuse a list past the server's SETTINGS_MAX_HEADER_LIST_SIZE, or 431", resp, err)
		}
	}, handlerModes()...)
}
