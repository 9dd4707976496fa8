package server

// HTTP/1.1 engine: the grace before parking, ended by a sweep instead of
// a read deadline per wait.
//
// An idle connection waits parkGrace in the netpoller before it parks
// (h1_park.go), so that a client sending one request after another does
// not pay for parking at each. That wait used to be a read deadline: one
// update of the socket's deadline when the read found nothing and
// another to put the old one back, each a change to the runtime's timer
// heap, which the scheduler then keeps sorting. Under wrk -c50 (server on
// one core) they cost 2.5% of the server's CPU, a tenth of its user
// time, on the path of every request that waits.
//
// Instead a wait records the tick of the Server's sweep it began in
// (graceBegin: three atomic operations, one of them a store), and ends
// with one more (graceEnd: a swap). The sweep, a goroutine of the Server's that runs only while
// some connection waits, ticks every graceTick; a wait that it finds
// older than graceTicks ticks is asked to end: the sweep moves the
// socket's read deadline to the past, which wakes the read, and the
// connection puts its deadline back before it parks. A connection's
// grace is so between parkGrace and parkGrace+graceTick.
//
// The sweep finds waits through the working states (connWork) that had
// one: a working state joins a shard's list at its first wait and leaves
// it when its connection parks, hands over to HTTP/2 or ends.

import (
	"sync"
	"sync/atomic"
	"time"
)

const (
	// graceTick is the sweep's period.
	graceTick = parkGrace / 2
	// graceTicks is how many ticks a wait lasts at least: parkGrace.
	graceTicks = uint64(parkGrace / graceTick)
	// graceAsked marks a wait the sweep ended: the connection restores
	// its read deadline under the shard's lock.
	graceAsked = ^uint64(0)
	// graceShards spreads the lists, and their locks, over cache lines.
	graceShards = 8
)

// graceSweep is a Server's sweep of the grace waits. Its zero value is
// ready; its goroutine starts with the first wait and ends when a tick
// finds none.
type graceSweep struct {
	tick    atomic.Uint64 // ticks since the sweep first ran; waits store tick+1
	running atomic.Bool   // the goroutine runs, or is about to
	next    atomic.Uint32 // deals shards to working states
	shards  [graceShards]graceShard
}

// graceShard is one list of working states that had a grace wait.
type graceShard struct {
	mu  sync.Mutex
	cws []*connWork
	_   [32]byte // a cache line of its own (with mu and cws: 64 bytes)
}

// graceBegin records that c's read found nothing and waits in the
// netpoller: the sweep ends the wait once parkGrace passed. Called from
// the raw read's callback or before a TLS read; graceEnd must follow.
func (c *conn) graceBegin() {
	cw, sw := c.connWork, &c.srv.grace
	if cw.graceShard == nil {
		sw.join(cw)
	}
	cw.graceSince.Store(sw.tick.Load() + 1)
	if !sw.running.Load() && sw.running.CompareAndSwap(false, true) {
		go sw.run()
	}
}

// graceEnd ends c's grace wait, whose read returned err: errWouldBlock
// when the sweep ended it with nothing read (the read deadline in force
// put back: restoreReadDeadline).
func (c *conn) graceEnd(err error) error {
	cw := c.connWork
	if cw.graceSince.Swap(0) != graceAsked {
		return err
	}
	sh := cw.graceShard
	sh.mu.Lock() // the sweep may not have moved the deadline yet
	c.restoreReadDeadline()
	sh.mu.Unlock()
	if err != nil && isTimeout(err) {
		return errWouldBlock
	}
	return err
}

// join adds cw to a shard's list.
func (sw *graceSweep) join(cw *connWork) {
	sh := &sw.shards[sw.next.Add(1)%graceShards]
	sh.mu.Lock()
	cw.graceShard, cw.graceIndex = sh, len(sh.cws)
	sh.cws = append(sh.cws, cw)
	sh.mu.Unlock()
}

// graceLeave takes cw off its shard's list, if it is on one: its
// connection parks, leaves for HTTP/2 or ends, and has no wait.
func (cw *connWork) graceLeave() {
	sh := cw.graceShard
	if sh == nil {
		return
	}
	sh.mu.Lock()
	last := len(sh.cws) - 1
	moved := sh.cws[last]
	sh.cws[cw.graceIndex], moved.graceIndex = moved, cw.graceIndex
	sh.cws[last] = nil
	sh.cws = sh.cws[:last]
	sh.mu.Unlock()
	cw.graceShard = nil
}

// run ticks until a tick finds no wait, then ends; a wait that begins as
// it ends starts it again (graceBegin).
func (sw *graceSweep) run() {
	t := time.NewTicker(graceTick)
	defer t.Stop()
	for range t.C {
		if sw.sweep(sw.tick.Add(1)) {
			continue
		}
		sw.running.Store(false)
		// A wait that began after the sweep and saw it running: it did
		// not start another, so this one goes on.
		if !sw.sweep(sw.tick.Load()) || !sw.running.CompareAndSwap(false, true) {
			return
		}
	}
}

// sweep asks the waits older than graceTicks at tick now to end, and
// reports whether any wait was found.
func (sw *graceSweep) sweep(now uint64) (found bool) {
	for i := range sw.shards {
		sh := &sw.shards[i]
		sh.mu.Lock()
		for _, cw := range sh.cws {
			since := cw.graceSince.Load()
			if since == 0 || since == graceAsked {
				continue
			}
			found = true
			if now+1-since > graceTicks && cw.graceSince.CompareAndSwap(since, graceAsked) {
				// The connection is blocked in its read, or will take
				// sh.mu before it touches its deadline again.
				cw.c.nc.SetReadDeadline(aLongTimeAgo)
			}
		}
		sh.mu.Unlock()
	}
	return found
}

// restoreReadDeadline puts the read deadline in force back on the socket
// after a wait that moved it, and Shutdown's interrupt with it if one
// came meanwhile (the flag stays set: readMore handles it).
func (c *conn) restoreReadDeadline() {
	c.nc.SetReadDeadline(c.readDL)
	if c.interrupted.Load() {
		c.nc.SetReadDeadline(aLongTimeAgo)
	}
}
