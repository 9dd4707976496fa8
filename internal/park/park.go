// Package park lets idle connections wait without a goroutine: their
// sockets wait in readiness sets (epoll on Linux, set_linux.go; none
// elsewhere, set_other.go), and a set hands back each one whose socket
// became readable or whose deadline passed. It knows nothing of HTTP:
// what parks is a Parker, the one interface at its boundary, which the
// server's HTTP/1.1 and HTTP/2 connections implement.
package park

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// A Parker is a connection that can wait in a readiness set without a
// goroutine. The set calls its methods under the set's mutex, except
// Wake.
type Parker interface {
	// Parking is the connection's place in its set, and whether its
	// socket was registered with the set's epoll instance: both guarded
	// by the set's mutex.
	Parking() (st *State, registered *bool)
	// ParkDeadline is when the set must wake it (its read deadline, as
	// set on the socket); zero: never. It does not change while parked.
	ParkDeadline() time.Time
	// PollRaw is the socket to wait on: under TLS, the TCP connection's.
	PollRaw() (syscall.RawConn, error)
	// ParkVetoed reports that the connection may not park (any more):
	// Shutdown, Close or the like came. It reads atomics only, which
	// whoever vetoes sets before it looks for the connection in its set
	// (Take): one of the two sees the other.
	ParkVetoed() bool
	// Wake hands a connection the set gave up to a goroutine, which runs
	// it. It must not block.
	Wake()
}

// An EdgeParker is a Parker that parks with AddEdge (set_edge_linux.go;
// elsewhere AddEdge answers Refused).
type EdgeParker interface {
	Parker
	// Edge is the connection's registration, guarded by the set's mutex.
	Edge() *EdgeState
}

// EdgeState is an EdgeParker's registration with its set. The zero value
// is not registered.
type EdgeState struct {
	slot  int32  // its slot while registered
	epoch uint32 // the set's epoch it registered in; 0: none
	ready bool   // an edge came while it was not parked
}

// AddResult is what AddEdge did.
type AddResult uint8

const (
	// Parked: the connection is the set's, as after Add reported true.
	Parked AddResult = iota
	// Retry: something arrived since the connection last read: it
	// reads again without waiting, and parks again if nothing came.
	Retry
	// Refused: it cannot park (as Add's false): it waits on its
	// goroutine.
	Refused
)

// State is a connection's place in its readiness set while parked. The
// set's mutex guards it. Init it before the connection first parks.
type State struct {
	slot  int32  // index in the set's slots while parked; -1 otherwise
	hidx  int32  // index in the set's deadline heap; -1 when not in it
	since uint32 // when it parked, in Unix milliseconds (wrapping)
}

// Init readies st for a connection that is not parked.
func (st *State) Init() { st.slot, st.hidx = -1, -1 }

// Since is when the connection last parked, in Unix milliseconds
// (wrapping: compare differences of uint32s).
func (st *State) Since() uint32 { return st.since }

// Linger is how long an empty readiness set keeps its epoll instance and
// waiter before it stops (the next park starts them again).
const Linger = time.Second

// Batch is how many ready connections a set's waiter takes at once
// (events per epoll_wait). After a full batch it yields, so that the
// connections it woke run (and their goroutines wait for the next batch)
// before it takes more: a wake-up of thousands at once is served by a few
// goroutines, if some wait to run woken connections (Resumers).
const Batch = 32

// Socket is the socket a connection on nc would park on: nc itself (TCP
// or Unix), or under TLS the TCP connection's; nil when there is none (a
// wrapped connection).
func Socket(nc net.Conn) syscall.Conn {
	switch c := nc.(type) {
	case *net.TCPConn:
		return c
	case *net.UnixConn:
		return c
	case *tls.Conn:
		if tc, ok := c.NetConn().(*net.TCPConn); ok {
			return tc
		}
	}
	return nil
}

// errNoSocket: the connection has no socket of its own to wait on.
var errNoSocket = errors.New("park: no socket to park on")

// Raw is Socket's raw connection.
func Raw(nc net.Conn) (syscall.RawConn, error) {
	sc := Socket(nc)
	if sc == nil {
		return nil, errNoSocket
	}
	return sc.SyscallConn()
}
