package client

// The HTTP/2 client against rawH2, a frame-level server the tests script:
// GOAWAY, REFUSED_STREAM, bad content-lengths, protocol errors, the
// concurrency limit, PING.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// rawH2 is the server side of one connection, driven by a test.
type rawH2 struct {
	nc   net.Conn
	rbuf []byte
	r, w int
	asm  h2.Assembler
	dec  h2.Decoder
	enc  h2.Encoder
	hbuf []byte
	wmu  sync.Mutex
}

// rawFrame is a frame the client sent, its payload copied and a header
// block decoded.
type rawFrame struct {
	h2.FrameHeader
	data   []byte
	fields map[string]string
	code   h2.ErrCode
	ping   [8]byte
}

// rawH2Server accepts connections on a fresh port and runs serve on each
// after the handshake: the client's preface read, settings sent.
func rawH2Server(t *testing.T, settings []h2.Setting, serve func(c *rawH2)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	accepting := make(chan struct{}) // closed when the accept loop is done
	t.Cleanup(func() {
		ln.Close()
		<-accepting // no wg.Go after this: Wait may not race an Add
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	go func() {
		defer close(accepting)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Go(func() {
				defer nc.Close()
				c := &rawH2{nc: nc, rbuf: make([]byte, 1<<20)}
				var pre [len(h2.ClientPreface)]byte
				if _, err := io.ReadFull(nc, pre[:]); err != nil || string(pre[:]) != h2.ClientPreface {
					return
				}
				c.write(h2.AppendSettings(nil, settings...))
				serve(c)
			})
		}
	}()
	return ln.Addr().String()
}

func (c *rawH2) write(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.Write(b)
}

// next returns the client's next frame but SETTINGS, which it
// acknowledges, and CONTINUATION, which it joins to its HEADERS.
func (c *rawH2) next() (rawFrame, error) {
	for {
		f, n, err := h2.ReadFrame(c.rbuf[c.r:c.w], h2.DefaultMaxFrameSize)
		if err == h2.ErrNeedMore {
			if c.r == c.w {
				c.r, c.w = 0, 0
			}
			k, err := c.nc.Read(c.rbuf[c.w:])
			if k == 0 {
				return rawFrame{}, err
			}
			c.w += k
			continue
		}
		if err != nil {
			return rawFrame{}, err
		}
		c.r += n
		st, err := c.asm.Add(&f)
		if err != nil {
			return rawFrame{}, err
		}
		rf := rawFrame{FrameHeader: f.FrameHeader}
		switch {
		case st == h2.BlockOpen:
			continue
		case st == h2.BlockDone:
			blk := c.asm.Block()
			rf.FrameHeader = blk.Start
			rf.fields = map[string]string{}
			if err := c.dec.Decode(blk.Fragment, func(f h2.Field) { rf.fields[string(f.Name)] = string(f.Value) }); err != nil {
				return rawFrame{}, err
			}
			return rf, nil
		}
		switch f.Type {
		case h2.FrameSettings:
			if !f.Flags.Has(h2.FlagAck) {
				c.write(h2.AppendSettingsAck(nil))
			}
			continue
		case h2.FrameData:
			rf.data = append([]byte(nil), f.Data()...)
		case h2.FrameRSTStream, h2.FrameGoAway:
			rf.code = f.ErrCode()
		case h2.FramePing:
			rf.ping = f.PingData()
		}
		return rf, nil
	}
}

// await returns the next frame of type typ, skipping others.
func (c *rawH2) await(typ h2.FrameType) (rawFrame, error) {
	for {
		f, err := c.next()
		if err != nil || f.Type == typ {
			return f, err
		}
	}
}

// headers sends a header block of name/value pairs.
func (c *rawH2) headers(id uint32, end bool, kv ...string) {
	c.wmu.Lock()
	b := c.enc.StartBlock(c.hbuf[:0])
	for i := 0; i < len(kv); i += 2 {
		b = c.enc.AppendField(b, kv[i], kv[i+1])
	}
	c.hbuf = b
	out := h2.AppendHeaderBlock(nil, id, end, b, h2.DefaultMaxFrameSize)
	c.wmu.Unlock()
	c.write(out)
}

func (c *rawH2) data(id uint32, end bool, p string) {
	var fl h2.Flags
	if end {
		fl = h2.FlagEndStream
	}
	c.write(h2.AppendData(nil, id, fl, []byte(p), 0))
}

// drain reads until the client closes, so the client's writes never
// block.
func (c *rawH2) drain() {
	for {
		if _, err := c.next(); err != nil {
			return
		}
	}
}

// TestH2GoAway: after GOAWAY no stream is reserved, a stream above its
// last stream id fails with errH2Retry, and the one below finishes.
func TestH2GoAway(t *testing.T) {
	addr := rawH2Server(t, nil, func(c *rawH2) {
		if f, err := c.await(h2.FrameHeaders); err != nil || f.StreamID != 1 {
			t.Errorf("first HEADERS: %v %v", f.StreamID, err)
			return
		}
		if f, err := c.await(h2.FrameHeaders); err != nil || f.StreamID != 3 {
			t.Errorf("second HEADERS: %v %v", f.StreamID, err)
			return
		}
		c.write(h2.AppendGoAway(nil, 1, h2.ErrCodeNo, []byte("shutting down")))
		c.headers(1, false, ":status", "200")
		c.data(1, true, "one")
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	first := make(chan error, 1)
	req1 := newReq(t, "GET", "http://"+addr+"/1", nil)
	if !cc.reserve() {
		t.Fatal("no stream")
	}
	go func() {
		resp, err := cc.roundTrip(req1, req1.Context(), time.Time{})
		if err == nil {
			var b []byte
			b, err = io.ReadAll(resp.Body)
			if string(b) != "one" {
				err = errors.New("stream 1's body: " + string(b))
			}
		}
		first <- err
	}()
	for {
		cc.mu.Lock()
		opened := cc.ids.Untracked(1) == h2.StateClosed
		cc.mu.Unlock()
		if opened {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, err := send(t, cc, newReq(t, "GET", "http://"+addr+"/3", nil))
	if !errors.Is(err, errH2Retry) || !strings.Contains(err.Error(), "GOAWAY") {
		t.Errorf("stream 3 above GOAWAY's last stream: %v, want errH2Retry", err)
	}
	if err := <-first; err != nil {
		t.Errorf("stream 1, below GOAWAY's last stream: %v", err)
	}
	if cc.reserve() {
		t.Error("reserve succeeded after GOAWAY")
	}
	select {
	case <-cc.readDone:
	case <-time.After(5 * time.Second):
		t.Error("connection not closed once its last stream ended after GOAWAY")
	}
}

// TestH2GoAwayBeforeFirstStream: a new connection whose server sends
// GOAWAY (last stream 0) before the request that dialed it takes its
// stream: the request, never sent, goes to a new connection, its body
// as it is (it cannot be produced again), as net/http's transport sends
// it again (the GOAWAY marks the connection dead: ErrNoCachedConn, and
// the body is unread). It failed with "HTTP/2 connection closed". A new
// connection the server closes without GOAWAY fails the request, not
// retried, as net/http fails it ("client conn could not be established",
// or the connection's error once the request is written). The hook holds
// the request until the connection has ended: the read loop rarely wins
// that race otherwise (a few runs in a hundred under -race).
func TestH2GoAwayBeforeFirstStream(t *testing.T) {
	// server answers the second connection; the first, once it has sent
	// SETTINGS, gets GOAWAY and waits for the client to close, or, without
	// goAway, is closed at once.
	server := func(t *testing.T, goAway bool) (addr string, conns *atomic.Int32, bodies chan string) {
		conns, bodies = new(atomic.Int32), make(chan string, 1)
		addr = rawH2Server(t, nil, func(c *rawH2) {
			if conns.Add(1) == 1 {
				if goAway {
					c.write(h2.AppendGoAway(nil, 0, h2.ErrCodeNo, []byte("restarting")))
					c.drain()
				}
				return
			}
			var body []byte
			onFrames(func(c *rawH2, f rawFrame) {
				switch f.Type {
				case h2.FrameData:
					body = append(body, f.data...)
				case h2.FrameHeaders:
				default:
					return
				}
				if f.Flags.Has(h2.FlagEndStream) {
					bodies <- string(body)
					c.headers(f.StreamID, true, ":status", "204")
				}
			})(c)
		})
		return addr, conns, bodies
	}
	// transport holds the first connection it dials until its read loop
	// has ended it.
	transport := func(t *testing.T) *Transport {
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &Transport{Protocols: &p}
		t.Cleanup(tr.CloseIdleConnections)
		var started atomic.Int32
		tr.testHookH2Started = func(cc *h2Conn) {
			if started.Add(1) != 1 {
				return
			}
			select {
			case <-cc.readDone:
			case <-time.After(5 * time.Second):
				t.Error("the first connection did not end")
			}
		}
		return tr
	}
	// post has a body without GetBody: it may go again only if unread.
	post := func(t *testing.T, addr string) *http.Request {
		req := newReq(t, "POST", "http://"+addr+"/", nil)
		req.Body, req.ContentLength = io.NopCloser(strings.NewReader("never sent")), 10
		return req
	}

	t.Run("goaway", func(t *testing.T) {
		addr, conns, bodies := server(t, true)
		resp, err := transport(t).RoundTrip(post(t, addr))
		if err != nil {
			t.Fatalf("request on a connection that got GOAWAY before its stream: %v; want it sent on a new connection", err)
		}
		resp.Body.Close()
		if b := <-bodies; b != "never sent" || resp.StatusCode != 204 || conns.Load() != 2 {
			t.Errorf("status %d, body %q on connection %d; want 204, the whole body, on the second", resp.StatusCode, b, conns.Load())
		}
	})
	t.Run("closed", func(t *testing.T) {
		addr, conns, _ := server(t, false)
		_, err := transport(t).RoundTrip(post(t, addr))
		if err == nil || errors.Is(err, errH2Retry) || conns.Load() != 1 {
			t.Errorf("request on a connection closed before its stream: %v after %d connections; want the connection's error, not retried", err, conns.Load())
		}
	})
	t.Run("nethttp", func(t *testing.T) {
		// The same server to net/http's transport (no hook: the GOAWAY
		// comes before or after the HEADERS, and a GET is retried
		// either way).
		addr, conns, _ := server(t, true)
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: &p}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(newReq(t, "GET", "http://"+addr+"/", nil))
		if err != nil {
			t.Fatalf("net/http: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 || conns.Load() != 2 {
			t.Errorf("net/http: status %d on connection %d; want 204 on the second", resp.StatusCode, conns.Load())
		}
	})
}

// TestH2GoAwayBeforeHeadersRetried: a request that took a stream on a
// pooled connection whose GOAWAY came before its HEADERS left goes to a
// new connection, its body (read already, to leave with the HEADERS)
// made again by GetBody, as net/http's transport retries it
// (errClientConnUnusable). The GotConn hook holds the request between its
// reservation and its HEADERS until the client has answered a PING sent
// after the GOAWAY. (A body without GetBody fails there on both, though
// none of it was read: net/http closes it, then cannot rewind it.)
func TestH2GoAwayBeforeHeadersRetried(t *testing.T) {
	for _, name := range []string{"hotpath", "nethttp"} {
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int32
			goAwayNow, processed := make(chan struct{}, 1), make(chan struct{})
			bodies := make(chan string, 1)
			addr := rawH2Server(t, nil, func(c *rawH2) {
				if conns.Add(1) == 1 {
					f, err := c.await(h2.FrameHeaders)
					if err != nil {
						return
					}
					c.headers(f.StreamID, true, ":status", "204")
					select {
					case <-goAwayNow:
					case <-time.After(10 * time.Second):
						return
					}
					c.write(h2.AppendGoAway(nil, f.StreamID, h2.ErrCodeNo, nil))
					c.write(h2.AppendPing(nil, 0, [8]byte{7}))
					// The client has taken the GOAWAY when it answers the
					// PING sent after it, or closes the connection (Go
					// 1.27's net/http closes one with no stream open).
					taken := sync.OnceFunc(func() { close(processed) })
					defer taken()
					for {
						f, err := c.next()
						if err != nil {
							return
						}
						if f.Type == h2.FramePing && f.Flags.Has(h2.FlagAck) {
							break
						}
					}
					taken()
					c.drain()
					return
				}
				var body []byte
				onFrames(func(c *rawH2, f rawFrame) {
					if f.Type == h2.FrameData {
						body = append(body, f.data...)
					}
					if f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream) {
						bodies <- string(body)
						c.headers(f.StreamID, true, ":status", "204")
					}
				})(c)
			})
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			var rt http.RoundTripper = &Transport{Protocols: &p}
			if name == "nethttp" {
				rt = &http.Transport{Protocols: &p}
			}
			defer rt.(interface{ CloseIdleConnections() }).CloseIdleConnections()
			resp, err := rt.RoundTrip(newReq(t, "GET", "http://"+addr+"/", nil))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()

			var held atomic.Bool
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused || held.Swap(true) {
					return
				}
				goAwayNow <- struct{}{}
				select {
				case <-processed:
				case <-time.After(5 * time.Second):
					t.Error("PING after the GOAWAY neither answered nor its connection closed")
				}
			}}
			req := newReq(t, "POST", "http://"+addr+"/", strings.NewReader("sent again"))
			resp, err = rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
			if err != nil {
				t.Fatalf("request held until its connection got GOAWAY: %v; want it sent on a new connection", err)
			}
			resp.Body.Close()
			if b := <-bodies; b != "sent again" || !held.Load() || conns.Load() != 2 {
				t.Errorf("body %q, held %v, on connection %d; want the whole body on the second", b, held.Load(), conns.Load())
			}
		})
	}
}

// TestH2RefusedStream: REFUSED_STREAM fails the request with errH2Retry;
// the connection serves the next one.
func TestH2RefusedStream(t *testing.T) {
	addr := rawH2Server(t, nil, func(c *rawH2) {
		f, _ := c.await(h2.FrameHeaders)
		c.write(h2.AppendRSTStream(nil, f.StreamID, h2.ErrCodeRefusedStream))
		f, _ = c.await(h2.FrameHeaders)
		c.headers(f.StreamID, false, ":status", "200", "content-length", "2")
		c.data(f.StreamID, true, "ok")
		f, _ = c.await(h2.FrameHeaders)
		c.write(h2.AppendRSTStream(nil, f.StreamID, h2.ErrCodeInternal))
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	base := "http://" + addr + "/"
	if _, err := send(t, cc, newReq(t, "GET", base, nil)); !errors.Is(err, errH2Retry) {
		t.Errorf("REFUSED_STREAM: %v, want errH2Retry", err)
	}
	if _, b := fetch(t, cc, newReq(t, "GET", base, nil)); string(b) != "ok" {
		t.Errorf("after REFUSED_STREAM: %q", b)
	}
	_, err := send(t, cc, newReq(t, "GET", base, nil))
	var re *h2ResetError
	if errors.Is(err, errH2Retry) || !errors.As(err, &re) || re.Code != h2.ErrCodeInternal {
		t.Errorf("INTERNAL_ERROR reset: %v, want an h2ResetError that is not errH2Retry", err)
	}
}

// TestH2ContentLengthMismatch: a body longer than its content-length
// fails the read and the client resets the stream (PROTOCOL_ERROR); one
// shorter reads what came, then io.ErrUnexpectedEOF (the server ended
// the stream: nothing to reset), as net/http's transport does.
func TestH2ContentLengthMismatch(t *testing.T) {
	resets := make(chan h2.ErrCode, 2)
	addr := rawH2Server(t, nil, func(c *rawH2) {
		for n := 0; ; {
			f, err := c.next()
			switch {
			case err != nil:
				return
			case f.Type == h2.FrameRSTStream:
				resets <- f.code
			case f.Type == h2.FrameHeaders && n == 0:
				c.headers(f.StreamID, false, ":status", "200", "content-length", "10")
				c.data(f.StreamID, true, "hello")
				n++
			case f.Type == h2.FrameHeaders:
				c.headers(f.StreamID, false, ":status", "200", "content-length", "3")
				c.data(f.StreamID, false, "hello")
			}
		}
	})
	cc := dialH2C(t, &Transport{}, addr)
	resp, err := send(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); string(b) != "hello" || err != io.ErrUnexpectedEOF {
		t.Errorf("short body: %q, %v; want \"hello\", io.ErrUnexpectedEOF", b, err)
	}
	resp, err = send(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	var le *h2LengthError
	if !errors.As(err, &le) {
		t.Errorf("long body: %v, want an h2LengthError", err)
	}
	expectReset(t, resets, h2.ErrCodeProtocol, "long body")
}

// TestH2NoContentStatus: a 204 or a 304 has no content (RFC 9110
// §15.3.5, §15.4.5), as over HTTP/1.1: ContentLength 0 and http.NoBody,
// whatever content-length it declares (a 304's is the representation's)
// and whatever DATA a server sends on its stream (dropped, as for HEAD).
// The DATA was the body, and ContentLength the declared length.
func TestH2NoContentStatus(t *testing.T) {
	addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
		if f.Type != h2.FrameHeaders {
			return
		}
		switch f.fields[":path"] {
		case "/304":
			c.headers(f.StreamID, false, ":status", "304", "content-length", "5")
			c.data(f.StreamID, true, "hello")
		case "/304-end":
			c.headers(f.StreamID, true, ":status", "304", "content-length", "5")
		case "/204":
			c.headers(f.StreamID, false, ":status", "204", "content-length", "0")
			c.data(f.StreamID, false, "x")
			c.data(f.StreamID, true, "")
		}
	}))
	cc := dialH2C(t, &Transport{}, addr)
	for _, path := range []string{"/304", "/304-end", "/204"} {
		resp, b := fetch(t, cc, newReq(t, "GET", "http://"+addr+path, nil))
		if resp.ContentLength != 0 || len(b) != 0 || resp.Body != http.NoBody {
			t.Errorf("%s: %d, ContentLength %d, body %q (%T); want 0, empty, http.NoBody", path, resp.StatusCode, resp.ContentLength, b, resp.Body)
		}
		waitIdle(t, cc)
	}
}

// TestH2HeadersStreamErrorInContinuation: a HEADERS frame with a stream
// error (a priority on its own stream, §5.3.1) fails its request and
// resets the stream (PROTOCOL_ERROR) also when its block ends in a
// CONTINUATION (the error was dropped then, and the response served).
func TestH2HeadersStreamErrorInContinuation(t *testing.T) {
	resets := make(chan h2.ErrCode, 1)
	addr := rawH2Server(t, nil, onFrames(func(c *rawH2, f rawFrame) {
		switch f.Type {
		case h2.FrameRSTStream:
			resets <- f.code
		case h2.FrameHeaders:
			c.wmu.Lock()
			block := c.enc.AppendField(c.enc.StartBlock(nil), ":status", "200")
			c.wmu.Unlock()
			out := h2.AppendHeaders(nil, f.StreamID, h2.FlagPriority, h2.Priority{StreamDep: f.StreamID, Weight: 15}, nil, 0)
			out = h2.AppendContinuation(out, f.StreamID, h2.FlagEndHeaders, block)
			c.write(h2.AppendData(out, f.StreamID, h2.FlagEndStream, []byte("ok"), 0))
		}
	}))
	cc := dialH2C(t, &Transport{}, addr)
	resp, err := send(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("a response whose HEADERS depend on their own stream: %d %q, want an error", resp.StatusCode, b)
	}
	expectReset(t, resets, h2.ErrCodeProtocol, "HEADERS on their own stream, block ended in CONTINUATION")
}

// TestH2ServerProtocolError: a frame on a stream the client never opened
// is a connection error: the client sends GOAWAY with PROTOCOL_ERROR and
// fails its streams.
func TestH2ServerProtocolError(t *testing.T) {
	goaway := make(chan h2.ErrCode, 1)
	addr := rawH2Server(t, nil, func(c *rawH2) {
		c.await(h2.FrameHeaders)
		c.data(2, false, "pushed?")
		f, err := c.await(h2.FrameGoAway)
		if err == nil {
			goaway <- f.code
		}
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	_, err := send(t, cc, newReq(t, "GET", "http://"+addr+"/", nil))
	if err == nil || errors.Is(err, errH2Retry) {
		t.Errorf("request on the broken connection: %v, want an error that is not errH2Retry", err)
	}
	expectGoAway(t, goaway, h2.ErrCodeProtocol, "DATA on stream 2")
	if cc.reserve() {
		t.Error("reserve on a failed connection")
	}
}

// TestH2ReserveLimitAndPing: reserve honours the server's
// SETTINGS_MAX_CONCURRENT_STREAMS, reserved streams included; a closed
// connection's reserved stream fails with errH2Retry; PING is answered.
func TestH2ReserveLimitAndPing(t *testing.T) {
	pong := make(chan [8]byte, 1)
	addr := rawH2Server(t, []h2.Setting{{ID: h2.SettingMaxConcurrentStreams, Val: 1}}, func(c *rawH2) {
		c.write(h2.AppendPing(nil, 0, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
		if f, err := c.await(h2.FramePing); err == nil && f.Flags.Has(h2.FlagAck) {
			pong <- f.ping
		}
		f, _ := c.await(h2.FrameHeaders)
		time.Sleep(50 * time.Millisecond)
		c.headers(f.StreamID, true, ":status", "204")
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	select {
	case p := <-pong:
		if p != [8]byte{1, 2, 3, 4, 5, 6, 7, 8} {
			t.Errorf("PING answered with %v", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("PING not answered")
	}
	// The server's SETTINGS have arrived (the PING came after them).
	if !cc.reserve() {
		t.Fatal("first reserve failed")
	}
	if cc.reserve() {
		t.Error("second reserve succeeded past MAX_CONCURRENT_STREAMS = 1")
	}
	if cc.idle() {
		t.Error("idle with a reserved stream")
	}
	req := newReq(t, "GET", "http://"+addr+"/", nil)
	resp, err := cc.roundTrip(req, req.Context(), time.Time{})
	if err != nil || resp.StatusCode != 204 || resp.Body != http.NoBody {
		t.Fatalf("204: %v %v", resp, err)
	}
	waitIdle(t, cc)
	if !cc.reserve() {
		t.Error("reserve failed once the stream ended")
	}
	cc.close()
	if _, err := cc.roundTrip(req, req.Context(), time.Time{}); !errors.Is(err, errH2Retry) {
		t.Errorf("roundTrip on a closed connection: %v, want errH2Retry", err)
	}
	if cc.reserve() || !cc.idle() {
		t.Error("closed connection: reserve succeeded or not idle")
	}
}

// TestH2DeadlinesShareOneTimer: streams with deadlines in no particular
// order each time out at theirs, off the connection's one timer, and the
// heap holds only the streams still running.
func TestH2DeadlinesShareOneTimer(t *testing.T) {
	addr := rawH2Server(t, nil, func(c *rawH2) {
		for {
			f, err := c.next()
			if err != nil {
				return
			}
			if f.Type == h2.FrameHeaders && f.fields[":path"] == "/fast" {
				c.headers(f.StreamID, true, ":status", "204")
			}
		}
	})
	cc := dialH2C(t, &Transport{}, addr)
	start := time.Now()
	waits := []time.Duration{300, 100, 250, 50, 200, 150}
	var wg sync.WaitGroup
	for _, ms := range waits {
		d := ms * time.Millisecond
		wg.Go(func() {
			if !cc.reserve() {
				t.Error("no stream")
				return
			}
			req, _ := http.NewRequest("GET", "http://"+addr+"/hang", nil)
			_, err := cc.roundTrip(req, req.Context(), start.Add(d))
			took := time.Since(start)
			if !errors.Is(err, errRequestTimeout) || took < d || took > d+time.Second {
				t.Errorf("deadline %v: %v after %v", d, err, took)
			}
		})
	}
	// A request that ends well before its deadline leaves the heap.
	req := newReq(t, "GET", "http://"+addr+"/fast", nil)
	if !cc.reserve() {
		t.Fatal("no stream")
	}
	if resp, err := cc.roundTrip(req, req.Context(), time.Now().Add(time.Hour)); err != nil || resp.StatusCode != 204 {
		t.Fatalf("fast request: %v", err)
	}
	wg.Wait()
	cc.mu.Lock()
	n := len(cc.deadlines)
	for i, s := range cc.deadlines {
		if s.dlIndex != i {
			t.Errorf("heap entry %d has index %d", i, s.dlIndex)
		}
	}
	cc.mu.Unlock()
	if n != 0 {
		t.Errorf("%d streams left in the deadline heap", n)
	}
	waitIdle(t, cc)
}

// TestH2DeadlineHeap: the heap stays ordered, with every stream knowing its
// place, through pushes and removals from anywhere.
func TestH2DeadlineHeap(t *testing.T) {
	cc := &h2Conn{}
	base := time.Now().Add(time.Hour)
	var live []*h2Stream
	for i := range 500 {
		s := &h2Stream{cc: cc, dlIndex: -1, deadline: base.Add(time.Duration((i*7919)%1000) * time.Millisecond)}
		cc.mu.Lock()
		cc.addDeadlineLocked(s)
		live = append(live, s)
		if i%3 == 0 {
			k := (i * 31) % len(live)
			cc.removeDeadlineLocked(live[k])
			live = append(live[:k], live[k+1:]...)
		}
		cc.mu.Unlock()
	}
	cc.dlTimer.Stop()
	h := cc.deadlines
	if len(h) != len(live) {
		t.Fatalf("heap holds %d, want %d", len(h), len(live))
	}
	for i, s := range h {
		if s.dlIndex != i {
			t.Fatalf("entry %d has index %d", i, s.dlIndex)
		}
		if i > 0 && s.deadline.Before(h[(i-1)/2].deadline) {
			t.Fatalf("entry %d is due before its parent", i)
		}
	}
	if !cc.dlAt.Equal(h[0].deadline) && cc.dlAt.After(h[0].deadline) {
		t.Errorf("timer set for %v, after the earliest deadline %v", cc.dlAt, h[0].deadline)
	}
}

// openWindowsNoReads serves a connection that grants 1 GiB windows, runs
// then and reads nothing more until the test ends (stop closes then); it
// returns the client's connection, the windows open and a stream
// reserved, and the server's address.
func openWindowsNoReads(t *testing.T, then func(c *rawH2, stop <-chan struct{})) (*h2Conn, string) {
	t.Helper()
	stop := make(chan struct{})
	addr := rawH2Server(t, []h2.Setting{{ID: h2.SettingInitialWindowSize, Val: 1 << 30}}, func(c *rawH2) {
		c.write(h2.AppendWindowUpdate(nil, 0, 1<<30))
		then(c, stop)
		<-stop
	})
	t.Cleanup(func() { close(stop) })
	cc := dialH2C(t, &Transport{}, addr)
	waitFor(t, func() bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return cc.sendWin.Available() > 1<<29
	})
	if !cc.reserve() {
		t.Fatal("no stream")
	}
	return cc, addr
}

// TestH2CancelDuringBlockedWrite: a request whose context ends while its
// own goroutine is blocked in the socket write (an upload the server's
// windows allow, to a server that stopped reading) returns with the
// context's error: the write gets h2CancelWriteGrace, then is broken with
// the connection. It waited forever (found by a review helper); net/http
// returns too (its writes run on another goroutine). Transport.Timeout is
// 0, so no request deadline breaks the write instead.
func TestH2CancelDuringBlockedWrite(t *testing.T) {
	cc, addr := openWindowsNoReads(t, func(*rawH2, <-chan struct{}) {})
	req := newReq(t, "POST", "http://"+addr+"/", bytes.NewReader(make([]byte, 64<<20)))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cc.roundTrip(req, ctx, time.Time{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(10 * time.Second):
		cc.mu.Lock()
		flushing, mine := cc.flushing, cc.flusher != nil
		cc.mu.Unlock()
		t.Fatalf("the request still runs 10 s after its context ended (a write in progress %v, on a request's goroutine %v)", flushing, mine)
	}
}

// TestH2StuckConnectionTakesNoNewStreams: a server that floods PINGs and
// never reads leaves the read loop blocked writing their acknowledgements.
// A request whose HEADERS waited behind that write until its timeout
// retires the connection, so the next request dials a new one; before,
// every request went to the stuck connection and timed out there, for as
// long as traffic kept it from being idle (found by a review helper;
// net/http dials anew too).
func TestH2StuckConnectionTakesNoNewStreams(t *testing.T) {
	var conns atomic.Int32
	stop := make(chan struct{})
	addr := rawH2Server(t, []h2.Setting{{ID: h2.SettingMaxConcurrentStreams, Val: 1}}, func(c *rawH2) {
		if conns.Add(1) == 1 {
			c.write(bytes.Repeat(h2.AppendPing(nil, 0, [8]byte{}), 1<<20)) // 17 MiB
			<-stop
			return
		}
		for {
			f, err := c.next()
			if err != nil {
				return
			}
			if f.Type == h2.FrameHeaders {
				c.headers(f.StreamID, true, ":status", "204")
			}
		}
	})
	t.Cleanup(func() { close(stop) })
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &Transport{Protocols: &p, Timeout: 300 * time.Millisecond}
	t.Cleanup(tr.CloseIdleConnections)
	// Until the read loop is stuck (it takes a while to read the flood
	// under -race on a loaded machine), requests leave and time out
	// unanswered; from then on, the first to time out behind the stuck
	// write retires the connection and the next one dials another.
	failed, ok := 0, false
	for end := time.Now().Add(30 * time.Second); !ok && time.Now().Before(end); {
		resp, err := tr.RoundTrip(newReq(t, "GET", "http://"+addr+"/", nil))
		if err == nil {
			resp.Body.Close()
			ok = true
			break
		}
		failed++
	}
	if !ok || conns.Load() != 2 {
		t.Errorf("succeeded %v after %d requests timed out, %d connections dialed; want a success on a second connection", ok, failed, conns.Load())
	}
}

// TestH2AckFloodBehindStuckWrite: a server that stops reading while an
// upload's write is in progress and floods PINGs: their acknowledgements
// queue behind that write, and past h2MaxQueuedAcks the connection ends
// (ENHANCE_YOUR_CALM) and the upload fails, instead of the write buffer
// growing by 17 bytes a PING for as long as the flood lasts (found by a
// review helper).
func TestH2AckFloodBehindStuckWrite(t *testing.T) {
	flood := make(chan struct{})
	cc, addr := openWindowsNoReads(t, func(c *rawH2, stop <-chan struct{}) {
		<-flood
		pings := bytes.Repeat(h2.AppendPing(nil, 0, [8]byte{}), 1<<16)
		for range 32 { // 2M PINGs, 34 MiB
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.nc.Write(pings); err != nil {
				return
			}
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := cc.roundTrip(newReq(t, "POST", "http://"+addr+"/", bytes.NewReader(make([]byte, 64<<20))), context.Background(), time.Time{})
		done <- err
	}()
	waitFor(t, func() bool { // the upload's goroutine blocked in its write
		cc.mu.Lock()
		defer cc.mu.Unlock()
		return cc.flushing && cc.flusher != nil
	})
	close(flood)
	select {
	case err := <-done:
		if !errors.Is(err, errH2TooManyAcks) {
			t.Errorf("upload: %v, want the connection ended by errH2TooManyAcks", err)
		}
	case <-time.After(20 * time.Second):
		cc.mu.Lock()
		queued := len(cc.wbuf)
		cc.mu.Unlock()
		t.Fatalf("the upload still runs 20 s into the flood, %d bytes queued behind its write", queued)
	}
}

// TestH2UploadStalledOnWindow: an upload the server grants no window
// fails at its deadline with a timeout, and the stream is reset.
func TestH2UploadStalledOnWindow(t *testing.T) {
	reset := make(chan h2.ErrCode, 1)
	addr := rawH2Server(t, nil, func(c *rawH2) {
		f, err := c.await(h2.FrameRSTStream)
		if err == nil {
			reset <- f.code
		}
		c.drain()
	})
	cc := dialH2C(t, &Transport{}, addr)
	if !cc.reserve() {
		t.Fatal("no stream")
	}
	req := newReq(t, "POST", "http://"+addr+"/", bytes.NewReader(make([]byte, 1<<20)))
	start := time.Now()
	_, err := cc.roundTrip(req, req.Context(), time.Now().Add(150*time.Millisecond))
	if !errors.Is(err, errRequestTimeout) || time.Since(start) > 3*time.Second {
		t.Errorf("stalled upload: %v after %v, want errRequestTimeout", err, time.Since(start))
	}
	select {
	case code := <-reset:
		if code != h2.ErrCodeCancel {
			t.Errorf("reset with %v, want CANCEL", code)
		}
	case <-time.After(5 * time.Second):
		t.Error("no RST_STREAM for the stalled upload")
	}
}
