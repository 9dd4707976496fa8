package server

import (
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// A big upload that arrives faster than the handler reads it is read
// with a receive low-water mark (SO_RCVLOWAT, Linux): the socket wakes
// its reader once a batch of bytes is waiting, not at every segment.
// Without it the server drains the socket faster than the client fills
// it, finds it empty, sleeps, and the client's next sends pay to wake it:
// under strace, 1,234 empty reads per 256 MB from curl, where net/http's
// slower 8 KiB reads met 2, and 0.97x net/http's upload throughput at
// 0.92x its CPU. With the mark (bench/bigbody.sh --only upload --runs
// 15): 1.09x at 0.68x, and 1.05x at 0.73x with a 512 KiB cap.
//
// The mark never holds bytes back from a read (a read returns what the
// socket has); it only delays the wake-up of a reader that found the
// socket empty. It is used only where that delay is safe:
//   - after markStreak reads in a row came back full: the client sends
//     faster than the handler reads;
//   - at most rcvbuf/markBufShare, so the receive window stays open and
//     the client can always send a mark's worth (for a mark the buffer
//     cannot hold twice the kernel grows the buffer and sets the window
//     clamp from the mark; measured with a buffer of 1.1 MB, 512 KiB gave
//     0.88x and 1 MiB stalled at 18 MB/s);
//   - while more than markTailShare marks of the body are left: the
//     body's last bytes never wait for a mark they cannot reach;
//   - with a watchdog: markIdle without progress drops the mark (which
//     wakes a reader waiting below it), so a client that slows down or
//     pauses waits at most about two markIdle, once per mark;
//   - only in readDirect's large reads of a Content-Length body on a TCP
//     socket: any other read of the connection drops it first (fillBody,
//     so a drain too), and so do the handler's return and a hijack.
const (
	markStreak    = 8
	markMinBytes  = 64 << 10
	markMaxBytes  = 256 << 10
	markBufShare  = 4
	markTailShare = 4
	markTries     = 2 // marks per body: the watchdog may have dropped one for a pause of the handler's
)

// markIdle is the watchdog's period (a variable for tests).
var markIdle atomic.Int64

func init() { markIdle.Store(int64(20 * time.Millisecond)) }

// rcvMark is a connection's receive low-water mark state. bytes is read
// by the connection's reader without the lock; mu orders setting and
// dropping it between the reader, the watchdog's timer and the handler
// (SetReadDeadline).
type rcvMark struct {
	mu       sync.Mutex
	bytes    atomic.Int64    // the mark in force; 0: none
	lastLeft int64           // the body's bytes left at the watchdog's last look
	timer    *time.Timer     // this mark's watchdog; each mark has its own
	gen      uint64          // which mark is in force, for its watchdog
	raw      syscall.RawConn // the socket the mark is set on
}

// noteBigRead is called after each large read of a Content-Length body
// (n bytes read into a buffer of want): it sets the mark after a streak
// of full reads, and drops it as the body's end nears. A streak that
// finds no mark to set (the receive buffer is still small) doubles the
// next streak needed.
func (b *bodyReader) noteBigRead(n, want int) {
	c := b.c
	if m := c.mark.bytes.Load(); m != 0 {
		if b.left.Load() <= markTailShare*m {
			c.dropMark()
		}
		return
	}
	if n < want {
		b.streak = 0
		return
	}
	if b.streak++; b.streak < markStreak<<b.markMisses || b.marks >= markTries {
		return
	}
	b.streak = 0
	if c.setMark(b.left.Load()) {
		b.marks++
	} else if b.markMisses < 10 {
		b.markMisses++
	}
}

// setMark sets a mark sized from the socket's receive buffer when the
// body has enough left for it and the handler set no read deadline of
// its own (a deadline shorter than the watchdog would fire with bytes
// waiting below the mark), and starts the mark's watchdog.
func (c *conn) setMark(left int64) bool {
	if c.raw == nil || c.tcp == nil {
		return false
	}
	m := min(int64(rcvBuf(c.raw))/markBufShare, markMaxBytes)
	if m < markMinBytes || left <= 2*markTailShare*m {
		return false
	}
	c.dlMu.Lock() // SetReadDeadline drops the mark under it
	defer c.dlMu.Unlock()
	if c.ownReadDeadline {
		return false
	}
	k := &c.mark
	k.mu.Lock()
	defer k.mu.Unlock()
	if !setRcvLowat(c.raw, int(m)) {
		return false
	}
	k.bytes.Store(m)
	k.lastLeft = left
	k.raw = c.raw
	k.gen++
	gen := k.gen
	// A new timer per mark: a previous mark's watchdog that already
	// fired, waiting for mu, finds another generation and leaves. It
	// holds the mark and the body, not the connection: both belong to
	// the connection's working state, which moves to another connection
	// once this one parks (the mark is dropped before).
	body := &c.ctx.body
	k.timer = time.AfterFunc(time.Duration(markIdle.Load()), func() { k.watch(gen, body) })
	return true
}

// watch is mark gen's watchdog: it drops the mark when the body made no
// progress since its last look.
func (k *rcvMark) watch(gen uint64, body *bodyReader) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.bytes.Load() == 0 || k.gen != gen {
		return
	}
	if left := body.left.Load(); left != k.lastLeft {
		k.lastLeft = left
		k.timer.Reset(time.Duration(markIdle.Load()))
		return
	}
	k.dropLocked()
}

// dropMark drops the mark, if one is set: a reader waiting below it
// wakes if any byte is waiting.
func (c *conn) dropMark() {
	if c.mark.bytes.Load() != 0 {
		c.mark.drop()
	}
}

func (k *rcvMark) drop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dropLocked()
}

func (k *rcvMark) dropLocked() {
	if k.bytes.Load() == 0 {
		return
	}
	k.timer.Stop()
	setRcvLowat(k.raw, 1) // before bytes reads 0: whoever sees 0 sees the socket reset
	k.bytes.Store(0)
}
