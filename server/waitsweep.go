package server

// Both engines: a sweep that ends read waits past their time, instead of
// a read deadline per wait.
//
// A connection's read that may wait and must not wait forever with what
// it holds (HTTP/1.1's grace before parking, h1_grace.go; an HTTP/2
// connection whose open streams are quiet keeping its read buffer,
// h2_quiet.go) could arm a read deadline each time: a change to the
// runtime's timer heap to arm it and another to put the old one back, on
// the path of every read that waits. Instead the wait records the tick of
// the Server's sweep it began in (three atomic operations, one of them a
// store), and ends with one more (a swap). The sweep, a goroutine of the
// Server's that runs only while some wait is recorded (and a tenth of a
// second after), ticks every sweepTick; a wait that it finds older than
// its owner's limit (in ticks) is asked to end: the sweep moves the
// socket's read deadline to the past, which wakes the read, and the owner
// puts its deadline back under the shard's lock (endedBySweep) before it
// reads again.
//
// The sweep finds waits through their sweptWait records: one joins a
// shard's list at its first wait and leaves it when its owner no longer
// waits that way (parks, hands over, ends).

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// sweepTick is the sweep's period: half HTTP/1.1's grace.
	sweepTick = 10 * time.Millisecond
	// sweepAsked marks a wait the sweep ended: its owner restores its
	// read deadline under the shard's lock.
	sweepAsked = ^uint64(0)
	// sweepShards spreads the lists, and their locks, over cache lines.
	sweepShards = 8
	// sweepIdleTicks is how many ticks in a row with no wait end the
	// sweep's goroutine: a tenth of a second. Not the first: HTTP/2's
	// reads with streams open come and go all the time, and a goroutine
	// started for each would cost its start (and an allocation, when no
	// dead goroutine is at hand to reuse) many times a second.
	sweepIdleTicks = 10
)

// waitSweep is a Server's sweep of the read waits. Its zero value is
// ready; its goroutine starts with the first wait and ends when ticks
// have found none for a tenth of a second, when the last record leaves
// the lists (no connection that waits is left: the Server's listener and
// connections may be closed without its Close, as httptest.Server.Close
// does), or when the Server closes (stop). So no goroutine of the
// Server's outlives its connections (tests that look for goroutines left
// behind; testing/synctest's bubbles, whose time stops when their test
// returns).
type waitSweep struct {
	tick    atomic.Uint64 // ticks since the sweep first ran; waits store tick+1
	running atomic.Bool   // the goroutine runs, or is about to
	next    atomic.Uint32 // deals shards to waits
	members atomic.Int64  // records on the lists
	closed  atomic.Bool   // stop was called: no goroutine starts, the running one ends
	live    atomic.Int32  // goroutines in run (two, briefly, as one ends and the next starts)
	ticker  *time.Ticker  // the goroutine's, kept stopped between runs (no allocation to start one)
	shards  [sweepShards]sweepShard

	mu   sync.Mutex    // guards wake
	wake chan struct{} // (one slot) wakes the goroutine to see whether it should end
}

// sweepShard is one list of the records of waits.
type sweepShard struct {
	mu    sync.Mutex
	waits []*sweptWait
	_     [32]byte // a cache line of its own (with mu and waits: 64 bytes)
}

// sweptWait is what the sweep knows of one owner's waits: the tick the
// wait in progress began in, plus one (0: none; sweepAsked: ended by the
// sweep), how many ticks it may last, the socket whose read it is, and
// the record's place in the lists.
type sweptWait struct {
	since atomic.Uint64
	ticks uint64
	nc    net.Conn
	sweep *waitSweep
	shard *sweepShard
	index int
}

// begin records a wait on w's socket that may last ticks ticks of the
// sweep; end must follow. The record joins a list at its first wait
// (nc is the socket the sweep ends the read of).
func (sw *waitSweep) begin(w *sweptWait, nc net.Conn, ticks uint64) {
	if w.shard == nil {
		w.nc, w.ticks = nc, ticks
		sw.join(w)
	}
	w.since.Store(sw.tick.Load() + 1)
	if !sw.running.Load() && !sw.closed.Load() && sw.running.CompareAndSwap(false, true) {
		go sw.run()
	}
}

// end ends w's wait and reports whether the sweep ended it: then the
// caller puts its read deadline back, under endedBySweep's lock.
func (w *sweptWait) end() bool {
	return w.since.Swap(0) == sweepAsked
}

// endedBySweep runs put, which sets the read deadline back, after the
// sweep has moved it (the sweep may not have done so yet when end
// returns).
func (w *sweptWait) endedBySweep(put func()) {
	sh := w.shard
	sh.mu.Lock()
	put()
	sh.mu.Unlock()
}

// join adds w to a shard's list.
func (sw *waitSweep) join(w *sweptWait) {
	sh := &sw.shards[sw.next.Add(1)%sweepShards]
	sh.mu.Lock()
	w.sweep, w.shard, w.index = sw, sh, len(sh.waits)
	sh.waits = append(sh.waits, w)
	sh.mu.Unlock()
	sw.members.Add(1)
}

// leave takes w off its shard's list, if it is on one: its owner waits
// no more (it parks, hands over, ends). No wait may be in progress.
func (w *sweptWait) leave() {
	sh := w.shard
	if sh == nil {
		return
	}
	sh.mu.Lock()
	last := len(sh.waits) - 1
	moved := sh.waits[last]
	sh.waits[w.index], moved.index = moved, w.index
	sh.waits[last] = nil
	sh.waits = sh.waits[:last]
	sh.mu.Unlock()
	sw := w.sweep
	w.sweep, w.shard, w.nc = nil, nil, nil
	if sw.members.Add(-1) == 0 && sw.running.Load() {
		sw.poke()
	}
}

// poke wakes the sweep's goroutine, if it waits for its next tick, to see
// whether it should end.
func (sw *waitSweep) poke() {
	sw.mu.Lock()
	if sw.wake != nil {
		select {
		case sw.wake <- struct{}{}:
		default: // already poked
		}
	}
	sw.mu.Unlock()
}

// run ticks until sweepIdleTicks ticks in a row find no wait, the last
// record leaves the lists, or stop is called, then ends; a wait that
// begins as it ends starts it again (begin). The ticker is the
// goroutine's alone: the running flag orders one run's Stop before the
// next run's Reset.
func (sw *waitSweep) run() {
	sw.live.Add(1)
	defer sw.live.Add(-1)
	sw.mu.Lock()
	if sw.wake == nil {
		sw.wake = make(chan struct{}, 1)
	}
	wake := sw.wake
	sw.mu.Unlock()
	if sw.ticker == nil {
		sw.ticker = time.NewTicker(sweepTick)
	} else {
		sw.ticker.Reset(sweepTick)
	}
	idle := 0
	for {
		if sw.members.Load() > 0 && !sw.closed.Load() {
			select {
			case <-wake:
				continue // a record left, or stop: look again
			case <-sw.ticker.C:
			}
			if sw.sweep(sw.tick.Add(1)) {
				idle = 0
				continue
			}
			if idle++; idle < sweepIdleTicks {
				continue
			}
		}
		// No wait for a tenth of a second, no record left, or stopped.
		sw.ticker.Stop()
		sw.running.Store(false)
		// A wait that began after the sweep and saw it running: it did
		// not start another, so this one goes on (not after stop).
		if sw.closed.Load() || !sw.sweep(sw.tick.Load()) || !sw.running.CompareAndSwap(false, true) {
			return
		}
		sw.ticker.Reset(sweepTick)
		idle = 0
	}
}

// stop ends the sweep's goroutine, if it runs, and returns once it has
// ended: the Server is closed and no connection is left (Close,
// Shutdown), so no goroutine of the Server's outlives them for a tenth of
// a second (tests that check for leaked goroutines, testing/synctest's
// bubbles). A wait that begins later (a connection handed over after
// Close) is not swept: its read waits without a limit, as a read with no
// deadline does.
func (sw *waitSweep) stop() {
	sw.closed.Store(true)
	// A goroutine that runs, or is about to (begin's swap of running
	// done, its run not begun), sees closed when it wakes and ends.
	for sw.running.Load() || sw.live.Load() > 0 {
		sw.poke()
		time.Sleep(time.Millisecond)
	}
}

// sweep asks the waits older than their limit at tick now to end, and
// reports whether any wait was found.
func (sw *waitSweep) sweep(now uint64) (found bool) {
	for i := range sw.shards {
		sh := &sw.shards[i]
		sh.mu.Lock()
		for _, w := range sh.waits {
			since := w.since.Load()
			if since == 0 || since == sweepAsked {
				continue
			}
			found = true
			if now+1-since > w.ticks && w.since.CompareAndSwap(since, sweepAsked) {
				// The owner is blocked in its read, or will take sh.mu
				// before it touches its deadline again.
				w.nc.SetReadDeadline(aLongTimeAgo)
			}
		}
		sh.mu.Unlock()
	}
	return found
}
