package park

// Edge-triggered parking (AddEdge), for connections that park after
// nearly every message: an event WebSocket. Add registers a socket
// EPOLLONESHOT and re-arms it (EPOLL_CTL_MOD) at each park: one system
// call per park, a third of an echoed message's (strace of wsbench echo:
// a read, a write and an epoll_ctl per message, where gws, on Go's
// edge-triggered netpoller, has a read and a write). AddEdge registers a
// socket once, EPOLLET, and keeps its slot while the connection runs
// between parks: a park is then bookkeeping under the set's mutex. An
// edge that comes while the connection runs (data arrived after its last
// read) is kept (EdgeState.ready), and its next AddEdge answers Retry:
// read again, without waiting, then park. So no arrival is lost: every
// byte that comes after the registration makes an edge, which either
// wakes the parked connection or marks the running one.
//
// The registration lasts until Forget (the connection ends) or the set's
// epoll instance closes (an empty set stops after Linger; Close): the
// epoch then moves on, and the next AddEdge registers again, in the new
// instance, which reports what is already readable.

import (
	"errors"

	"golang.org/x/sys/unix"
)

// AddEdge parks c as Add does, registering its socket edge-triggered
// the first time (and again after the set's epoll instance changed), or
// answers Retry when an edge came since its last park.
func (ps *Set) AddEdge(c EdgeParker) AddResult {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if !ps.admitLocked(c) {
		return Refused
	}
	es := c.Edge()
	if es.epoch == ps.epoch {
		if es.ready {
			es.ready = false
			return Retry
		}
	} else {
		slot := ps.slotLocked()
		ps.gen++
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: slot, Pad: int32(ps.gen)}
		err := ps.ctlLocked(c, unix.EPOLL_CTL_ADD, ev)
		if errors.Is(err, unix.EEXIST) { // a descriptor number reused: kept as a fallback, as Add's
			err = ps.ctlLocked(c, unix.EPOLL_CTL_MOD, ev)
		}
		if err != nil {
			ps.free = append(ps.free, slot)
			ps.lingerIfEmptyLocked()
			return Refused
		}
		*es = EdgeState{slot: slot, epoch: ps.epoch}
		ps.gens[slot] = ps.gen
		ps.slots[slot] = c
		ps.edge[slot] = true
	}
	st, _ := c.Parking()
	ps.parkLocked(c, st, es.slot)
	return Parked
}

// Forget ends c's registration: it ends (its socket is closed, or about
// to be, which takes it out of the epoll instance). If it is parked it
// leaves the set unwoken.
func (ps *Set) Forget(c EdgeParker) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	es := c.Edge()
	if es.epoch != ps.epoch {
		*es = EdgeState{}
		return
	}
	ps.takeLocked(c)
	s := es.slot
	ps.slots[s], ps.edge[s] = nil, false
	ps.free = append(ps.free, s)
	*es = EdgeState{}
}

// voidEdgesLocked ends every edge registration, as the epoll instance
// closes (no connection is parked then: the set stops empty, or Close
// and a failed wait took them all).
func (ps *Set) voidEdgesLocked() {
	ps.epoch++
	if ps.epoch == 0 {
		ps.epoch = 1
	}
	for s, edge := range ps.edge {
		if edge {
			ps.slots[s], ps.edge[s] = nil, false
			ps.free = append(ps.free, int32(s))
		}
	}
}
