package server

// What both engines' idle connections share to park (h1_park.go,
// h2_park.go): the readiness sets (park_linux.go) hold parkers, and
// resumer goroutines run the connections that woke.

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A parker is a connection that can wait in a readiness set without a
// goroutine: an HTTP/1.1 conn or a native HTTP/2 h2Conn. The set calls
// its methods under the set's mutex, except wake.
type parker interface {
	// parking is the connection's place in its set, and whether its
	// socket was registered with the set's epoll instance: both guarded
	// by the set's mutex.
	parking() (st *parkState, registered *bool)
	// parkDeadline is when the set must wake it (its read deadline, as
	// set on the socket); zero: never. It does not change while parked.
	parkDeadline() time.Time
	// pollRaw is the socket to wait on: under TLS, the TCP connection's.
	pollRaw() (syscall.RawConn, error)
	// parkVetoed reports that the connection may not park (any more):
	// Shutdown, Close or the like came. It reads atomics only, which
	// whoever vetoes sets before it looks for the connection in its set
	// (take): one of the two sees the other.
	parkVetoed() bool
	// wake hands a connection the set gave up to a goroutine
	// (Server.resumeConn), which calls resume.
	wake()
	// resume runs the connection on the calling goroutine until it parks
	// again or ends.
	resume()
}

// parkState is a connection's place in its readiness set while parked.
// The set's mutex guards it.
type parkState struct {
	slot  int32  // index in the set's slots while parked; -1 otherwise
	hidx  int32  // index in the set's deadline heap; -1 when not in it
	since uint32 // when it parked, in Unix milliseconds (wrapping)
}

// resumeConn runs a connection that woke on a goroutine: an idle
// resumer's if one waits, else a new one, which stays to resume others
// (resumer).
func (s *Server) resumeConn(p parker) {
	select {
	case s.resumeCh <- p:
	default:
		go s.resumer(p)
	}
}

// parkMinLeft: a connection whose read deadline is nearer than this
// waits for it in the netpoller instead of parking.
const parkMinLeft = 10 * time.Millisecond

// parkLinger is how long an empty readiness set keeps its epoll instance
// and waiter, and an idle resumer waits for a connection to resume.
const parkLinger = time.Second

// maxIdleResumers bounds the goroutines that wait for connections to
// resume; each keeps its stack, grown by serving, for the next.
const maxIdleResumers = 32

// resumer resumes p, then others handed to it while it waits (up to
// parkLinger, at most maxIdleResumers waiting), until the Server closes.
func (s *Server) resumer(p parker) {
	var t *time.Timer
	for {
		p.resume()
		if s.idleResumers.Add(1) > maxIdleResumers {
			s.idleResumers.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(parkLinger)
		} else {
			t.Reset(parkLinger)
		}
		select {
		case p = <-s.resumeCh:
			s.idleResumers.Add(-1)
		case <-t.C:
			s.idleResumers.Add(-1)
			return
		case <-s.parkQuit:
			s.idleResumers.Add(-1)
			return
		}
	}
}

// parkSocket is the socket a connection on nc would park on: nc itself
// (TCP or Unix), or under TLS the TCP connection's; nil when there is
// none (a wrapped connection).
func parkSocket(nc net.Conn) syscall.Conn {
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

// errNoParkSocket: the connection has no socket of its own to wait on.
var errNoParkSocket = errors.New("server: no socket to park on")

// parkRaw is parkSocket's raw connection.
func parkRaw(nc net.Conn) (syscall.RawConn, error) {
	sc := parkSocket(nc)
	if sc == nil {
		return nil, errNoParkSocket
	}
	return sc.SyscallConn()
}

// nextParkSet deals s's readiness sets to connections in turn; nil where
// parking is off.
func (s *Server) nextParkSet() *parkSet {
	if len(s.parks) == 0 {
		return nil
	}
	return s.parks[s.parkNext.Add(1)%uint32(len(s.parks))]
}

// parkEnv turns parking off for every Server of the process when set to
// "off" (or "0", "false"): for A/B measurements of binaries built on
// hotpath (bench/server.sh --idle runs both), and as an escape hatch
// that needs no rebuild.
const parkEnv = "HOTPATH_IDLEPARK"

var parkOffByEnv = sync.OnceValue(func() bool {
	switch strings.ToLower(os.Getenv(parkEnv)) {
	case "off", "0", "false", "no":
		return true
	}
	return false
})
