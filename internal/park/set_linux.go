package server

// The readiness sets parked connections (parkers: HTTP/1.1 conns,
// h1_park.go, and native HTTP/2 connections, h2_park.go) wait in, on Linux:
// one epoll instance per set, a few sets per Server (one per P, up to
// maxParkSets, connections spread round-robin), each with one waiter
// goroutine.
//
// The waiter holds no OS thread: the epoll descriptor is itself pollable,
// so it is wrapped in an os.File and waited on through Go's netpoller
// (RawConn.Read with a callback that takes what epoll_wait has, without
// waiting, and returns false when it has nothing). The same file's read
// deadline is the set's timer: it is armed for the earliest read deadline
// of the connections parked in the set (a heap), so IdleTimeout costs a
// parked connection no timer of its own.
//
// A connection's socket stays registered with Go's own epoll too; ours
// holds it with EPOLLIN|EPOLLRDHUP|EPOLLONESHOT, re-armed (EPOLL_CTL_MOD)
// at each park, its event carrying the connection's slot and generation
// in the set, so that a late event for a connection that woke another
// way (Shutdown, its deadline) is recognized and dropped. A closed socket
// leaves the epoll instance by itself.
//
// A set whose connections all woke closes its epoll instance and its
// waiter returns at the next deadline (at most parkLinger later); the next
// connection to park starts them again.

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// parkSupported: parking is implemented on this platform.
const parkSupported = true

// maxParkSets caps the readiness sets of a Server.
const maxParkSets = 16

// parkEvents is how many events the waiter takes per epoll_wait: as many
// connections as may wait to resume (maxIdleResumers). After a full batch
// it yields, so that the connections it woke run (and their goroutines
// wait for the next batch) before it takes more: a wake-up of thousands
// at once is served by a few goroutines and working states, not
// thousands.
const parkEvents = maxIdleResumers

// parkSet is one readiness set. Its mutex guards all of it.
type parkSet struct {
	mu     sync.Mutex
	epfd   int
	file   *os.File  // the epoll instance while it runs; nil otherwise
	closed bool      // the Server closed: no more parking
	broken bool      // epoll cannot be waited on here: no parking
	gen    uint32    // counts parks
	slots  []parker  // parked connections by slot
	gens   []uint32  // each slot's park, in its events
	free   []int32   // free slots
	heap   []parker  // parked connections with a deadline, earliest first
	n      int       // parked connections
	armed  time.Time // the deadline set on file; zero: none

	// epoll_ctl through RawConn.Control, under mu, without a closure
	// allocated per call.
	ctlOp  int
	ctlEv  unix.EpollEvent
	ctlErr error
	ctlFn  func(fd uintptr)
}

// parkWaiter is one run of a set's waiter goroutine, with its scratch.
// A set that stopped (empty for parkLinger) and starts again gets a new
// waiter while the old one may still be resuming what it took last, so
// the scratch is the waiter's, not the set's.
type parkWaiter struct {
	ps     *parkSet
	f      *os.File // the epoll instance this waiter waits on
	events [parkEvents]unix.EpollEvent
	woken  []parker
	waitFn func(fd uintptr) bool
}

// newParkSets makes the readiness sets of a Server.
func newParkSets() []*parkSet {
	sets := make([]*parkSet, min(runtime.GOMAXPROCS(0), maxParkSets))
	for i := range sets {
		ps := &parkSet{}
		ps.ctlFn = ps.ctl
		sets[i] = ps
	}
	return sets
}

// add parks c, to wake by its deadline (c.parkDeadline(): its read
// deadline, which stays as it is while c is parked) if it has one. It
// reports false, leaving c as it was, when c cannot park: the set is
// closed or broken, Shutdown or the like has begun for c (parkVetoed), or
// the socket cannot be registered (closed, say).
func (ps *parkSet) add(c parker) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	// Shutdown and Close set what parkVetoed reads before they look for
	// parked connections (under mu): one of the two sees the other.
	if ps.closed || ps.broken || c.parkVetoed() {
		return false
	}
	if ps.file == nil && !ps.startLocked() {
		return false
	}
	var slot int32
	if k := len(ps.free); k > 0 {
		slot = ps.free[k-1]
		ps.free = ps.free[:k-1]
	} else {
		slot = int32(len(ps.slots))
		ps.slots = append(ps.slots, nil)
		ps.gens = append(ps.gens, 0)
	}
	ps.gen++
	// MOD re-arms a socket registered before; one whose epoll instance
	// was closed since (an empty set stops) is unknown to the new one
	// (ENOENT), and one never registered may still be known under a
	// descriptor number a closed connection had (EEXIST is impossible
	// then: a closed descriptor leaves epoll; kept as a fallback).
	st, registered := c.parking()
	op := unix.EPOLL_CTL_ADD
	if *registered {
		op = unix.EPOLL_CTL_MOD
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: slot, Pad: int32(ps.gen)}
	err := ps.ctlLocked(c, op, ev)
	switch {
	case op == unix.EPOLL_CTL_MOD && errors.Is(err, unix.ENOENT):
		err = ps.ctlLocked(c, unix.EPOLL_CTL_ADD, ev)
	case op == unix.EPOLL_CTL_ADD && errors.Is(err, unix.EEXIST):
		err = ps.ctlLocked(c, unix.EPOLL_CTL_MOD, ev)
	}
	if err != nil {
		ps.free = append(ps.free, slot)
		ps.lingerIfEmptyLocked() // a set this add started must still stop
		return false
	}
	*st = parkState{slot: slot, hidx: -1, since: uint32(time.Now().UnixMilli())}
	*registered = true
	ps.gens[slot] = ps.gen
	ps.slots[slot] = c
	ps.n++
	if dl := c.parkDeadline(); !dl.IsZero() {
		ps.heapPush(c)
		if ps.armed.IsZero() || dl.Before(ps.armed) {
			ps.armLocked(dl)
		}
	}
	return true
}

func (ps *parkSet) ctlLocked(c parker, op int, ev unix.EpollEvent) error {
	rc, err := c.pollRaw()
	if err != nil {
		return err
	}
	ps.ctlOp, ps.ctlEv, ps.ctlErr = op, ev, nil
	if err := rc.Control(ps.ctlFn); err != nil {
		return err
	}
	return ps.ctlErr
}

func (ps *parkSet) ctl(fd uintptr) {
	ps.ctlErr = unix.EpollCtl(ps.epfd, ps.ctlOp, int(fd), &ps.ctlEv)
}

// take removes c from the set if it is parked there, and reports whether
// it did: the caller then owns c and must resume it.
func (ps *parkSet) take(c parker) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.takeLocked(c)
}

func (ps *parkSet) takeLocked(c parker) bool {
	st, _ := c.parking()
	s := st.slot
	if s < 0 || int(s) >= len(ps.slots) || ps.slots[s] != c {
		return false
	}
	ps.slots[s] = nil
	ps.free = append(ps.free, s)
	st.slot = -1
	if st.hidx >= 0 {
		ps.heapRemove(int(st.hidx))
	}
	ps.n--
	ps.lingerIfEmptyLocked()
	return true
}

// lingerIfEmptyLocked arms the waiter of a running set with nothing
// parked to stop at parkLinger, unless a connection parks meanwhile.
func (ps *parkSet) lingerIfEmptyLocked() {
	if ps.n == 0 && ps.file != nil {
		if until := time.Now().Add(parkLinger); ps.armed.IsZero() || until.Before(ps.armed) {
			ps.armLocked(until)
		}
	}
}

// armLocked sets the waiter's deadline (zero: none).
func (ps *parkSet) armLocked(dl time.Time) {
	ps.armed = dl
	ps.file.SetReadDeadline(dl)
}

// startLocked opens the set's epoll instance and starts its waiter.
func (ps *parkSet) startLocked() bool {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		if err != unix.EMFILE && err != unix.ENFILE && err != unix.ENOMEM {
			ps.broken = true
		}
		return false
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		ps.broken = true
		return false
	}
	f := os.NewFile(uintptr(epfd), "hotpath-idle")
	rc, err := f.SyscallConn()
	if err == nil {
		err = f.SetReadDeadline(time.Time{}) // fails unless the netpoller took it
	}
	if err != nil {
		f.Close()
		ps.broken = true
		return false
	}
	ps.epfd, ps.file, ps.armed = epfd, f, time.Time{}
	w := &parkWaiter{ps: ps, f: f}
	w.waitFn = w.wait
	go w.run(rc)
	return true
}

// stopLocked detaches the epoll instance, whose waiter then returns, and
// gives its file to the caller to close once mu is unlocked: closing
// waits for a waiter inside its callback (wait), which may be waiting
// for mu.
func (ps *parkSet) stopLocked() *os.File {
	f := ps.file
	ps.file, ps.armed = nil, time.Time{}
	return f
}

// run is the waiter: it resumes the connections whose sockets are ready
// and those whose deadlines passed, until the set stops.
func (w *parkWaiter) run(rc syscall.RawConn) {
	ps := w.ps
	for {
		err := rc.Read(w.waitFn)
		ps.mu.Lock()
		if ps.file != w.f { // closed by the Server
			ps.mu.Unlock()
			return
		}
		stop := false
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			now := time.Now()
			for len(ps.heap) > 0 && !ps.heap[0].parkDeadline().After(now) {
				c := ps.heap[0]
				ps.takeLocked(c)
				w.woken = append(w.woken, c)
			}
			if ps.n == 0 {
				stop = true
			} else if len(ps.heap) > 0 {
				ps.armLocked(ps.heap[0].parkDeadline())
			} else {
				ps.armLocked(time.Time{})
			}
		} else {
			// epoll_wait failed, or the file did: give every parked
			// connection back to a goroutine, and park no more here.
			ps.broken = true
			stop = true
			for _, c := range ps.slots {
				if c != nil {
					ps.takeLocked(c)
					w.woken = append(w.woken, c)
				}
			}
		}
		var f *os.File
		if stop {
			f = ps.stopLocked()
		}
		ps.mu.Unlock()
		if f != nil {
			f.Close() // this waiter is out of its callback: no wait
		}
		w.resumeWoken()
		if stop {
			return
		}
	}
}

// wait is the waiter's RawConn.Read callback: it takes the events epoll
// has, without waiting, and reports false (wait for more) when there are
// none left; true only when epoll_wait fails.
func (w *parkWaiter) wait(fd uintptr) bool {
	ps := w.ps
	for {
		n, err := unix.EpollWait(int(fd), w.events[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true
		}
		if n == 0 {
			return false
		}
		ps.mu.Lock()
		if ps.file != w.f {
			// The set stopped (Server closed) while this waited for
			// mu: its slots are empty, its file closes once this
			// callback returns.
			ps.mu.Unlock()
			return true
		}
		for i := range w.events[:n] {
			ev := &w.events[i]
			slot, gen := ev.Fd, uint32(ev.Pad)
			if slot < 0 || int(slot) >= len(ps.slots) {
				continue
			}
			if c := ps.slots[slot]; c != nil && ps.gens[slot] == gen && ps.takeLocked(c) {
				w.woken = append(w.woken, c)
			}
		}
		ps.mu.Unlock()
		w.resumeWoken()
		if n < len(w.events) {
			return false
		}
		runtime.Gosched()
	}
}

// resumeWoken starts the connections the waiter took.
func (w *parkWaiter) resumeWoken() {
	for i, c := range w.woken {
		c.wake()
		w.woken[i] = nil
	}
	w.woken = w.woken[:0]
}

// close stops the set for good (Server.Close, or Shutdown done): any
// connection still parked is resumed.
func (ps *parkSet) close() {
	var woken []parker // not a waiter's: it may be resuming its own
	ps.mu.Lock()
	ps.closed = true
	for _, c := range ps.slots {
		if c != nil {
			ps.takeLocked(c)
			woken = append(woken, c)
		}
	}
	var f *os.File
	if ps.file != nil {
		f = ps.stopLocked()
	}
	ps.mu.Unlock()
	if f != nil {
		f.Close()
	}
	for _, c := range woken {
		c.wake()
	}
}

// The deadline heap: parked connections by their deadlines, each
// knowing its index (parkState.hidx).

func (ps *parkSet) heapPush(c parker) {
	setHidx(c, len(ps.heap))
	ps.heap = append(ps.heap, c)
	ps.heapUp(len(ps.heap) - 1)
}

func (ps *parkSet) heapRemove(i int) {
	h := ps.heap
	last := len(h) - 1
	setHidx(h[i], -1)
	if i != last {
		h[i] = h[last]
		setHidx(h[i], i)
	}
	h[last] = nil
	ps.heap = h[:last]
	if i != last {
		ps.heapDown(i)
		ps.heapUp(i)
	}
}

func (ps *parkSet) heapUp(i int) {
	h := ps.heap
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].parkDeadline().Before(h[p].parkDeadline()) {
			break
		}
		ps.heapSwap(i, p)
		i = p
	}
}

func (ps *parkSet) heapDown(i int) {
	h := ps.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].parkDeadline().Before(h[l].parkDeadline()) {
			m = r
		}
		if !h[m].parkDeadline().Before(h[i].parkDeadline()) {
			return
		}
		ps.heapSwap(i, m)
		i = m
	}
}

func (ps *parkSet) heapSwap(i, j int) {
	h := ps.heap
	h[i], h[j] = h[j], h[i]
	setHidx(h[i], i)
	setHidx(h[j], j)
}

// setHidx records c's index in the deadline heap (-1: not in it).
func setHidx(c parker, i int) {
	st, _ := c.parking()
	st.hidx = int32(i)
}
