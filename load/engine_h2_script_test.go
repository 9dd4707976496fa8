package load

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// The fast engine's HTTP/2 against a scripted server: what real servers
// do only now and then (GOAWAY with streams in flight, RST_STREAM,
// REFUSED_STREAM, PING), on cue.

// rawH2 serves HTTP/2 from a script, for what real servers do only by
// accident: act(conn, k, id) says what to do with the k-th request
// (from 0) of the conn-th connection (from 0): "ok" (200 and a body),
// "ignore" (no answer), "goaway" (no answer, and GOAWAY naming the stream
// before it the last one processed), "rst:N" (RST_STREAM with code N),
// "ping" (a PING carrying k, then the answer), "stray" (DATA on stream
// 2, which the client never opened, then the answer), "head+rst:N"
// (the response head, then RST_STREAM with code N), "len:N" (200 with
// content-length N, then "ok" and an empty DATA frame that ends the
// stream), "headonly:N" (200 with content-length N and END_STREAM) or
// "selfdep" / "selfdep+cont" (200 whose HEADERS frame makes the stream
// depend on itself, its block in that frame or in a CONTINUATION). Request blocks are
// decoded as a strict server decodes them, with the table that settings
// set (HEADER_TABLE_SIZE); blocks it refuses are counted. It returns the
// URL and what it counted.
func rawH2(t *testing.T, settings []h2.Setting, act func(conn, k int, id uint32) string) (string, *rawStats) {
	var conns atomic.Int32
	stats := &rawStats{}
	reqs := &stats.requests
	url := serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
		cn := int(conns.Add(1) - 1)
		if _, err := io.ReadFull(br, make([]byte, len(h2.ClientPreface))); err != nil {
			return
		}
		c.Write(h2.AppendSettings(nil, settings...))
		var dec h2.Decoder
		for _, s := range settings {
			if s.ID == h2.SettingHeaderTableSize {
				dec.SetMaxTableSize(s.Val)
			}
		}
		buf := make([]byte, 0, 1<<16)
		var out []byte
		k := 0
		open := make(map[uint32]bool) // streams the client has not ended
		for {
			f, n, err := h2.ReadFrame(buf, h2.DefaultMaxFrameSize)
			if err == h2.ErrNeedMore {
				if len(buf) == cap(buf) {
					return
				}
				m, err := br.Read(buf[len(buf):cap(buf)])
				if err != nil {
					return
				}
				buf = buf[:len(buf)+m]
				continue
			}
			if err != nil {
				return
			}
			out = out[:0]
			switch {
			case f.Type == h2.FrameSettings && !f.Flags.Has(h2.FlagAck):
				out = h2.AppendSettingsAck(out)
			case f.Type == h2.FrameSettings:
				stats.settingsAcks.Add(1)
			case f.Type == h2.FramePing && f.Flags.Has(h2.FlagAck):
				if d := f.PingData(); d == [8]byte{7: d[7]} && int(d[7]) == int(stats.pingAcks.Load()) {
					stats.pingAcks.Add(1) // in order, the data echoed
				}
			case f.Type == h2.FrameRSTStream:
				delete(open, f.StreamID)
				if f.ErrCode() == h2.ErrCodeProtocol {
					stats.protocolResets.Add(1)
				}
			case f.Type == h2.FrameData && f.Flags.Has(h2.FlagEndStream):
				delete(open, f.StreamID)
			case f.Type == h2.FrameHeaders:
				reqs.Add(1)
				if n := int32(len(open)); n > stats.openBefore.Load() {
					stats.openBefore.Store(n)
				}
				if !f.Flags.Has(h2.FlagEndStream) {
					open[f.StreamID] = true
				}
				if err := dec.Decode(f.BlockFragment(), func(h2.Field) {}); err != nil {
					stats.badBlocks.Add(1)
				}
				a := act(cn, k, f.StreamID)
				k++
				switch {
				case a == "ok" || a == "ping" || a == "stray":
					if a == "ping" {
						out = h2.AppendPing(out, 0, [8]byte{7: byte(k - 1)})
					}
					if a == "stray" {
						out = h2.AppendData(out, 2, 0, []byte("stray"), 0)
					}
					out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders, h2.Priority{}, []byte{0x88}, 0) // :status 200
					out = h2.AppendData(out, f.StreamID, h2.FlagEndStream, []byte("ok"), 0)
				case strings.HasPrefix(a, "len:"), strings.HasPrefix(a, "headonly:"):
					var enc h2.Encoder
					enc.SetMaxTableSize(0)
					block := enc.AppendField(enc.StartBlock(nil), ":status", "200")
					block = enc.AppendField(block, "content-length", a[strings.IndexByte(a, ':')+1:])
					if strings.HasPrefix(a, "headonly:") {
						out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, block, 0)
						break
					}
					out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders, h2.Priority{}, block, 0)
					out = h2.AppendData(out, f.StreamID, 0, []byte("ok"), 0)
					out = h2.AppendData(out, f.StreamID, h2.FlagEndStream, nil, 0)
				case a == "selfdep", a == "selfdep+cont":
					// A priority on the stream itself: a stream error (§5.3.1).
					prio := h2.Priority{StreamDep: f.StreamID, Weight: 15}
					if a == "selfdep" {
						out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders|h2.FlagPriority, prio, []byte{0x88}, 0)
					} else {
						out = h2.AppendHeaders(out, f.StreamID, h2.FlagPriority, prio, nil, 0)
						out = h2.AppendContinuation(out, f.StreamID, h2.FlagEndHeaders, []byte{0x88})
					}
					out = h2.AppendData(out, f.StreamID, h2.FlagEndStream, []byte("ok"), 0)
				case a == "ok+goaway+close":
					out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders, h2.Priority{}, []byte{0x88}, 0) // :status 200
					out = h2.AppendData(out, f.StreamID, h2.FlagEndStream, []byte("ok"), 0)
					out = h2.AppendGoAway(out, f.StreamID, h2.ErrCodeNo, nil)
					c.Write(out)
					return
				case a == "goaway":
					out = h2.AppendGoAway(out, max(f.StreamID, 2)-2, h2.ErrCodeNo, nil)
				case strings.HasPrefix(a, "rst:"), strings.HasPrefix(a, "head+rst:"):
					if strings.HasPrefix(a, "head+") {
						out = h2.AppendHeaders(out, f.StreamID, h2.FlagEndHeaders, h2.Priority{}, []byte{0x88}, 0) // :status 200
					}
					code, _ := strconv.Atoi(a[strings.IndexByte(a, ':')+1:])
					out = h2.AppendRSTStream(out, f.StreamID, h2.ErrCode(code))
				}
			}
			if len(out) > 0 {
				if _, err := c.Write(out); err != nil {
					return
				}
			}
			buf = buf[:copy(buf, buf[n:])]
		}
	})
	return strings.TrimSuffix(url, "/"), stats
}

// rawStats is what a rawH2 server counted.
type rawStats struct {
	requests       atomic.Int32 // HEADERS frames
	settingsAcks   atomic.Int32
	pingAcks       atomic.Int32 // PING acknowledgements echoing 0, 1, 2, ... in order
	badBlocks      atomic.Int32 // request blocks the server's decoder refused
	openBefore     atomic.Int32 // the most streams still open on the client's side when a request came
	protocolResets atomic.Int32 // RST_STREAM(PROTOCOL_ERROR) from the client
}

// TestH2EngineGoAway: a GOAWAY mid-run retires the connection; the
// streams it names as never processed are sent again on a new connection
// (as net/http does), the others finish, and the run goes on there.
func TestH2EngineGoAway(t *testing.T) {
	// A script: the first connection answers 7 requests, answers the
	// 8th with GOAWAY naming the 7th the last one processed, and ignores
	// what comes after. The 8th, and any sent after it, go again.
	for _, first := range []int{0, 7} {
		url, reqs := rawH2(t, nil, func(conn, k int, id uint32) string {
			switch {
			case conn > 0 || k < first:
				return "ok"
			case k == first:
				return "goaway"
			}
			return "ignore"
		})
		res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Streams: 5, Requests: 40})
		if res.Requests != 40 || res.Errors != 0 || res.Conns.Opened != 2 || reqs.requests.Load() <= 40 {
			t.Errorf("scripted GOAWAY after %d: responses %d errors %v opened %d, server saw %d requests; want 40, none, 2, more than 40 (the unprocessed sent again)", first, res.Requests, res.ErrorsByKind, res.Conns.Opened, reqs.requests.Load())
		}
	}

	// net/http sends GOAWAY when a handler says Connection: close.
	var n atomic.Int32
	hs := startH2NetHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%15 == 0 {
			w.Header().Set("Connection", "close")
		}
	}), false, nil)
	res := h2Run(t, hs, "/", Config{Connections: 2, Streams: 4, Requests: 120})
	if res.Requests != 120 || res.Errors != 0 || res.Conns.Opened < 4 {
		t.Errorf("net/http GOAWAY every 15 requests: responses %d errors %v opened %d; want 120, none, at least 4 connections", res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
}

// TestH2EngineResetStream: a stream the server resets is an error of kind
// reset and the connection goes on; one it refuses (REFUSED_STREAM: not
// processed) is sent again.
func TestH2EngineResetStream(t *testing.T) {
	url, _ := rawH2(t, nil, func(_, k int, _ uint32) string {
		if k%4 == 3 {
			return "rst:" + strconv.Itoa(int(h2.ErrCodeInternal))
		}
		return "ok"
	})
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 40})
	if res.Requests != 30 || res.ErrorsByKind["reset"] != 10 || res.Errors != 10 || res.Conns.Opened != 1 {
		t.Errorf("every 4th stream reset: responses %d errors %v opened %d; want 30 and 10 resets on 1 connection", res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
	url, reqs := rawH2(t, nil, func(_, k int, _ uint32) string {
		if k%3 == 2 {
			return "rst:" + strconv.Itoa(int(h2.ErrCodeRefusedStream))
		}
		return "ok"
	})
	res = h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 40})
	// 40 answered, and the 19 refused among the first 59 sent again.
	if res.Requests != 40 || res.Errors != 0 || reqs.requests.Load() != 59 {
		t.Errorf("every 3rd stream refused: responses %d errors %v, server saw %d; want 40, none, 59", res.Requests, res.ErrorsByKind, reqs.requests.Load())
	}
}

// TestH2EngineResetsUnsentBody: a response that ends before its request
// body is sent (the server answers at the HEADERS and never opens the
// stream's window for the rest, as RFC 9113 §8.1 allows) ends the stream
// with RST_STREAM from load: without it the server would hold each such
// stream half-open, counted against its MAX_CONCURRENT_STREAMS, for the
// connection's life.
func TestH2EngineResetsUnsentBody(t *testing.T) {
	url, stats := rawH2(t, nil, func(int, int, uint32) string { return "ok" })
	big := make([]byte, 100_000) // past the initial window of 65,535
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 10, Method: "POST", Body: big})
	if res.Requests != 10 || res.Errors != 0 {
		t.Fatalf("responses %d errors %v; want 10, none", res.Requests, res.ErrorsByKind)
	}
	// One stream at a time: each request should find the last one ended.
	if n := stats.openBefore.Load(); n != 0 {
		t.Errorf("a request found %d earlier streams still open from load's side (neither END_STREAM nor RST_STREAM)", n)
	}
}

// TestH2EngineContentLength: a response whose body is not the length
// its content-length declares is malformed (RFC 9113 §8.1.1) and counts
// as an error, as in the client; a HEAD's content-length describes no
// body.
func TestH2EngineContentLength(t *testing.T) {
	for _, tc := range []struct {
		act, method string
		bad         int
		resets      int32 // RST_STREAM(PROTOCOL_ERROR): only while the stream is open
	}{
		{"len:2", "GET", 0, 0},
		{"len:10", "GET", 4, 0},      // short: found at the end, the stream closed
		{"len:1", "GET", 4, 4},       // past it: found before the end, the stream reset
		{"headonly:10", "GET", 4, 0}, // a length and no body
		{"headonly:10", "HEAD", 0, 0},
		{"headonly:0", "GET", 0, 0},
	} {
		// Every other answer is a plain "ok" (a run with no good response
		// at all ends in Run's protocol-mismatch error).
		url, stats := rawH2(t, nil, func(_, k int, _ uint32) string {
			if k%2 == 1 {
				return "ok"
			}
			return tc.act
		})
		res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 8, Method: tc.method})
		if res.Errors != int64(tc.bad) || res.ErrorsByKind["bad_response"] != int64(tc.bad) || res.Requests != int64(8-tc.bad) {
			t.Errorf("%s %s: responses %d errors %v; want %d bad responses of 8", tc.method, tc.act, res.Requests, res.ErrorsByKind, tc.bad)
		}
		// Each reset goes out before the next request, and the last
		// request is answered "ok".
		if n := stats.protocolResets.Load(); n != tc.resets {
			t.Errorf("%s %s: the server got %d RST_STREAM(PROTOCOL_ERROR), want %d", tc.method, tc.act, n, tc.resets)
		}
	}
}

// TestH2EngineHeadersStreamError: a HEADERS frame with a stream error
// (a priority on its own stream, §5.3.1) fails its stream whether the
// block ends in it or in a CONTINUATION (the error was dropped then).
func TestH2EngineHeadersStreamError(t *testing.T) {
	for _, act := range []string{"selfdep", "selfdep+cont"} {
		url, _ := rawH2(t, nil, func(_, k int, _ uint32) string {
			if k%2 == 1 {
				return "ok"
			}
			return act
		})
		res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Requests: 8})
		if res.Requests != 4 || res.Errors != 4 || res.ErrorsByKind["bad_response"] != 4 {
			t.Errorf("%s: responses %d errors %v; want 4 bad responses of 8", act, res.Requests, res.ErrorsByKind)
		}
	}
}

// TestH2EngineGoAwayThenClose: a server that answers, sends GOAWAY and
// closes at once (a graceful shutdown with nothing else in flight): the
// requests that were waiting for room on that connection were never
// sent, and go to a new one instead of failing with it.
func TestH2EngineGoAwayThenClose(t *testing.T) {
	url, _ := rawH2(t, []h2.Setting{{ID: h2.SettingMaxConcurrentStreams, Val: 1}}, func(_, k int, _ uint32) string {
		return "ok+goaway+close"
	})
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Streams: 8, Requests: 40})
	if res.Requests != 40 || res.Errors != 0 {
		t.Errorf("responses %d errors %v opened %d; want 40 and no error", res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
}

// TestH2EngineAcks: the server's SETTINGS and PINGs are acknowledged,
// each PING's data echoed, in order.
func TestH2EngineAcks(t *testing.T) {
	url, stats := rawH2(t, []h2.Setting{{ID: h2.SettingMaxConcurrentStreams, Val: 100}}, func(_, k int, _ uint32) string {
		if k < 5 {
			return "ping"
		}
		return "ok"
	})
	res := h2Run(t, h2Server{url: url, proto: H2C}, "/", Config{Connections: 1, Streams: 2, Requests: 20})
	if res.Requests != 20 || stats.settingsAcks.Load() != 1 || stats.pingAcks.Load() != 5 {
		t.Errorf("responses %d, SETTINGS acks %d, PING acks %d; want 20, 1, 5", res.Requests, stats.settingsAcks.Load(), stats.pingAcks.Load())
	}
}

// TestH2EngineStreamIDsSpent: a connection whose stream identifiers run
// out (2^31-1) is retired and the next request dials a new one.
func TestH2EngineStreamIDsSpent(t *testing.T) {
	url, _ := rawH2(t, nil, func(int, int, uint32) string { return "ok" })
	cfg, tg, err := Config{URL: url, Proto: H2C, Connections: 1, Streams: 2, Requests: 50}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	e, err := newH2Engine(context.Background(), &cfg, &tg, newRecorder(&timeline{}, false), func(error) {})
	if err != nil {
		t.Fatal(err)
	}
	e.firstID = h2.MaxStreamID - 2*9 // 10 streams per connection
	cfg.engine = e
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 50 || res.Errors != 0 || res.Conns.Opened != 5 {
		t.Errorf("responses %d errors %v opened %d; want 50 over 5 connections of 10 streams", res.Requests, res.ErrorsByKind, res.Conns.Opened)
	}
}

// TestH2EngineServerStopsReading: a server that stops reading while it
// keeps sending (PINGs in bursts small enough that the reader writes
// their acknowledgements itself after each batch) fills the socket's
// buffers; the request still ends by its Timeout and the run returns,
// whichever goroutine was writing when the buffers filled.
func TestH2EngineServerStopsReading(t *testing.T) {
	url := serveConns(t, func(c net.Conn, br *bufio.Reader, done <-chan struct{}) {
		if _, err := io.ReadFull(br, make([]byte, len(h2.ClientPreface))); err != nil {
			return
		}
		if _, err := c.Write(h2.AppendSettings(nil)); err != nil {
			return
		}
		var burst []byte
		for i := range 500 { // 8.5 KB of acknowledgements: under the reader's own flush
			burst = h2.AppendPing(burst, 0, [8]byte{0: byte(i)})
		}
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			if _, err := c.Write(burst); err != nil {
				return
			}
		}
	})
	ran := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := Run(context.Background(), Config{URL: strings.TrimSuffix(url, "/"), Proto: H2C, Engine: EngineFast, Connections: 1, Requests: 1, Timeout: 4 * time.Second})
		ran <- err
	}()
	select {
	case err := <-ran:
		// No response came: Run says the server may not speak HTTP/2.
		if err == nil || !strings.Contains(err.Error(), "timeout 1") {
			t.Errorf("Run: %v; want its one request timed out", err)
		}
		t.Logf("ended after %v: %v", time.Since(start), err)
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end 20 s after its request's 4 s timeout: a goroutine waits on the server's full socket")
	}
}
