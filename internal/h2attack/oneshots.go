package h2attack

import (
	"context"
	"fmt"
	"strings"

	"github.com/hotpathhq/hotpath/wire/h2"
)

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
