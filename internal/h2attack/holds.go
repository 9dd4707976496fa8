package h2attack

import (
	"context"
	"fmt"
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
