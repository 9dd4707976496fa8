package park

// The readiness sets Parkers wait in, on Linux: one epoll instance per
// set, a few sets per user (NewSets: one per P, up to maxSets; the user
// deals its connections to them), each with one waiter goroutine.
//
// The waiter holds no OS thread: the epoll descriptor is itself pollable,
// so it is wrapped in an os.File and waited on through Go's netpoller
// (RawConn.Read with a callback that takes what epoll_wait has, without
// waiting, and returns false when it has nothing). The same file's read
// deadline is the set's timer: it is armed for the earliest read deadline
// of the connections parked in the set (a heap), so a parked connection's
// deadline (a server's IdleTimeout) costs it no timer of its own.
//
// A connection's socket stays registered with Go's own epoll too; ours
// holds it with EPOLLIN|EPOLLRDHUP|EPOLLONESHOT, re-armed (EPOLL_CTL_MOD)
// at each park, its event carrying the connection's slot and generation
// in the set, so that a late event for a connection that woke another
// way (Shutdown, its deadline) is recognized and dropped. A closed socket
// leaves the epoll instance by itself. AddEdge (set_edge_linux.go)
// registers a socket once, edge-triggered, for connections that park
// after nearly every message.
//
// A set whose connections all woke closes its epoll instance and its
// waiter returns at the next deadline (at most Linger later); the next
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

// Supported: parking is implemented on this platform.
const Supported = true

// maxSets caps the readiness sets NewSets makes.
const maxSets = 16

// Set is one readiness set. Its mutex guards all of it.
type Set struct {
	mu     sync.Mutex
	epfd   int
	file   *os.File  // the epoll instance while it runs; nil otherwise
	closed bool      // Close was called: no more parking
	broken bool      // epoll cannot be waited on here: no parking
	gen    uint32    // counts parks
	slots  []Parker  // parked connections by slot, and edge-registered ones (set_edge_linux.go)
	gens   []uint32  // each slot's park, in its events
	edge   []bool    // the slot is an edge registration's: it outlives the park
	epoch  uint32    // counts the epoll instances' ends: edge registrations of an earlier one are void
	free   []int32   // free slots
	heap   []Parker  // parked connections with a deadline, earliest first
	n      int       // parked connections
	armed  time.Time // the deadline set on file; zero: none

	// epoll_ctl through RawConn.Control, under mu, without a closure
	// allocated per call.
	ctlOp  int
	ctlEv  unix.EpollEvent
	ctlErr error
	ctlFn  func(fd uintptr)
}

// waiter is one run of a set's waiter goroutine, with its scratch.
// A set that stopped (empty for Linger) and starts again gets a new
// waiter while the old one may still be resuming what it took last, so
// the scratch is the waiter's, not the set's.
type waiter struct {
	ps     *Set
	f      *os.File // the epoll instance this waiter waits on
	events [Batch]unix.EpollEvent
	woken  []Parker
	waitFn func(fd uintptr) bool
}

// NewSets makes the readiness sets of one user (a Server): one per P, up
// to maxSets.
func NewSets() []*Set {
	sets := make([]*Set, min(runtime.GOMAXPROCS(0), maxSets))
	for i := range sets {
		ps := &Set{epoch: 1}
		ps.ctlFn = ps.ctl
		sets[i] = ps
	}
	return sets
}

// Add parks c, to wake by its deadline (c.ParkDeadline(): its read
// deadline, which stays as it is while c is parked) if it has one. It
// reports false, leaving c as it was, when c cannot park: the set is
// closed or broken, Shutdown or the like has begun for c (ParkVetoed), or
// the socket cannot be registered (closed, say). When it reports true, c
// is the set's: it may already have been woken (Wake) on another
// goroutine.
func (ps *Set) Add(c Parker) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.admitLocked(c) {
		return false
	}
	slot := ps.slotLocked()
	ps.gen++
	// MOD re-arms a socket registered before; one whose epoll instance
	// was closed since (an empty set stops) is unknown to the new one
	// (ENOENT), and one never registered may still be known under a
	// descriptor number a closed connection had (EEXIST is impossible
	// then: a closed descriptor leaves epoll; kept as a fallback).
	st, registered := c.Parking()
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
	*registered = true
	ps.gens[slot] = ps.gen
	ps.slots[slot] = c
	ps.parkLocked(c, st, slot)
	return true
}

// admitLocked reports whether c may park now, starting the set's epoll
// instance and waiter if they are stopped.
func (ps *Set) admitLocked(c Parker) bool {
	// Shutdown and Close set what ParkVetoed reads before they look for
	// parked connections (under mu): one of the two sees the other.
	if ps.closed || ps.broken || c.ParkVetoed() {
		return false
	}
	return ps.file != nil || ps.startLocked()
}

// parkLocked records c, registered under slot, as parked (st is its
// State), in the deadline heap too if it has a deadline.
func (ps *Set) parkLocked(c Parker, st *State, slot int32) {
	*st = State{slot: slot, hidx: -1, since: uint32(time.Now().UnixMilli())}
	ps.n++
	if dl := c.ParkDeadline(); !dl.IsZero() {
		ps.heapPush(c)
		if ps.armed.IsZero() || dl.Before(ps.armed) {
			ps.armLocked(dl)
		}
	}
}

// slotLocked returns a free slot.
func (ps *Set) slotLocked() int32 {
	if k := len(ps.free); k > 0 {
		slot := ps.free[k-1]
		ps.free = ps.free[:k-1]
		return slot
	}
	ps.slots = append(ps.slots, nil)
	ps.gens = append(ps.gens, 0)
	ps.edge = append(ps.edge, false)
	return int32(len(ps.slots) - 1)
}

func (ps *Set) ctlLocked(c Parker, op int, ev unix.EpollEvent) error {
	rc, err := c.PollRaw()
	if err != nil {
		return err
	}
	ps.ctlOp, ps.ctlEv, ps.ctlErr = op, ev, nil
	if err := rc.Control(ps.ctlFn); err != nil {
		return err
	}
	return ps.ctlErr
}

func (ps *Set) ctl(fd uintptr) {
	ps.ctlErr = unix.EpollCtl(ps.epfd, ps.ctlOp, int(fd), &ps.ctlEv)
}

// Take removes c from the set if it is parked there, and reports whether
// it did: the caller then owns c and must run it (the set does not Wake
// it).
func (ps *Set) Take(c Parker) bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.takeLocked(c)
}

func (ps *Set) takeLocked(c Parker) bool {
	st, _ := c.Parking()
	s := st.slot
	if s < 0 || int(s) >= len(ps.slots) || ps.slots[s] != c {
		return false
	}
	if !ps.edge[s] {
		ps.slots[s] = nil
		ps.free = append(ps.free, s)
	}
	st.slot = -1
	if st.hidx >= 0 {
		ps.heapRemove(int(st.hidx))
	}
	ps.n--
	ps.lingerIfEmptyLocked()
	return true
}

// lingerIfEmptyLocked arms the waiter of a running set with nothing
// parked to stop at Linger, unless a connection parks meanwhile.
func (ps *Set) lingerIfEmptyLocked() {
	if ps.n == 0 && ps.file != nil {
		if until := time.Now().Add(Linger); ps.armed.IsZero() || until.Before(ps.armed) {
			ps.armLocked(until)
		}
	}
}

// armLocked sets the waiter's deadline (zero: none).
func (ps *Set) armLocked(dl time.Time) {
	ps.armed = dl
	ps.file.SetReadDeadline(dl)
}

// startLocked opens the set's epoll instance and starts its waiter.
func (ps *Set) startLocked() bool {
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
	w := &waiter{ps: ps, f: f}
	w.waitFn = w.wait
	go w.run(rc)
	return true
}

// stopLocked detaches the epoll instance, whose waiter then returns, and
// gives its file to the caller to close once mu is unlocked: closing
// waits for a waiter inside its callback (wait), which may be waiting
// for mu.
func (ps *Set) stopLocked() *os.File {
	f := ps.file
	ps.file, ps.armed = nil, time.Time{}
	ps.voidEdgesLocked()
	return f
}

// run is the waiter: it resumes the connections whose sockets are ready
// and those whose deadlines passed, until the set stops.
func (w *waiter) run(rc syscall.RawConn) {
	ps := w.ps
	for {
		err := rc.Read(w.waitFn)
		ps.mu.Lock()
		if ps.file != w.f { // closed (Close)
			ps.mu.Unlock()
			return
		}
		stop := false
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			now := time.Now()
			for len(ps.heap) > 0 && !ps.heap[0].ParkDeadline().After(now) {
				c := ps.heap[0]
				ps.takeLocked(c)
				w.woken = append(w.woken, c)
			}
			if ps.n == 0 {
				stop = true
			} else if len(ps.heap) > 0 {
				ps.armLocked(ps.heap[0].ParkDeadline())
			} else {
				ps.armLocked(time.Time{})
			}
		} else {
			// epoll_wait failed, or the file did: give every parked
			// connection back to a goroutine, and park no more here.
			ps.broken = true
			stop = true
			for _, c := range ps.slots {
				if c != nil && ps.takeLocked(c) {
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
func (w *waiter) wait(fd uintptr) bool {
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
			// The set stopped (Close) while this waited for
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
			if c := ps.slots[slot]; c != nil && ps.gens[slot] == gen {
				if ps.takeLocked(c) {
					w.woken = append(w.woken, c)
				} else if ps.edge[slot] {
					c.(EdgeParker).Edge().ready = true // it runs: its next park reads first
				}
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
func (w *waiter) resumeWoken() {
	for i, c := range w.woken {
		c.Wake()
		w.woken[i] = nil
	}
	w.woken = w.woken[:0]
}

// Close stops the set for good (its server closed, or shut down): any
// connection still parked is woken (Wake), and none parks any more.
func (ps *Set) Close() {
	var woken []Parker // not a waiter's: it may be resuming its own
	ps.mu.Lock()
	ps.closed = true
	for _, c := range ps.slots {
		if c != nil && ps.takeLocked(c) {
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
		c.Wake()
	}
}

// Parked, Parks, Running and Each tell what the set holds, for tests and
// statistics; each takes the set's mutex.

// Parked is how many connections are parked in the set.
func (ps *Set) Parked() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.n
}

// Parks counts the set's parks (each Add that got as far as registering
// the socket), wrapping.
func (ps *Set) Parks() uint32 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.gen
}

// Running reports whether the set holds its epoll instance and waiter: it
// has parked connections, or had them less than Linger ago.
func (ps *Set) Running() bool {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.file != nil
}

// Each calls f for each parked connection, under the set's mutex: f must
// not call the set.
func (ps *Set) Each(f func(Parker)) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i, c := range ps.slots {
		if c == nil {
			continue
		}
		if st, _ := c.Parking(); st.slot == int32(i) { // parked, not only registered
			f(c)
		}
	}
}
