//go:build linux

package client

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// sockConn is a TCP connection of the Transport's own whose small reads
// and writes skip the runtime's system-call bookkeeping.
//
// A read or write through net.Conn enters the scheduler's "in a system
// call" state, and the first one after the program sat idle (a client
// waiting for its answer, every request in a one-at-a-time loop) wakes
// the runtime's monitor thread with a futex, which then sleeps again:
// about one futex and two context switches per request, measured with
// perf stat on net/http's client and on this one alike. The socket is
// non-blocking, so its read and write never wait in the kernel: sockConn
// makes them through syscall.RawConn with raw system calls, and parks on
// the runtime's poller (deadlines, Close) exactly as net.Conn does when
// the socket has nothing to give or no room. Transfers over rawIOMax go
// through net.Conn: a long copy should let the scheduler run others, and
// its bookkeeping is paid once per many bytes.
//
// Reads are serialized among themselves and writes among themselves, as
// net.Conn's are. Everything else (deadlines, Close, ReadFrom's sendfile,
// net.Buffers' writev, CloseWrite) is the embedded *net.TCPConn's.
type sockConn struct {
	*net.TCPConn
	raw syscall.RawConn

	rmu    sync.Mutex
	rp     []byte
	rn     int
	rerr   syscall.Errno
	readFn func(fd uintptr) bool // s.readOnce, bound once

	wmu     sync.Mutex
	wp      []byte
	wn      int
	werr    syscall.Errno
	writeFn func(fd uintptr) bool // s.writeAll, bound once
}

// rawIOMax is the largest read or write made with a raw system call.
const rawIOMax = 64 << 10

// fastSocket wraps a *net.TCPConn in a sockConn; any other connection (a
// DialContext's own type, a Unix socket) is returned as it is.
func fastSocket(nc net.Conn) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nc
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	s := &sockConn{TCPConn: tc, raw: raw}
	s.readFn, s.writeFn = s.readOnce, s.writeAll
	return s
}

// Read reads into p as net.Conn does: io.EOF at the peer's end, errors as
// *net.OpError with Op "read".
func (s *sockConn) Read(p []byte) (int, error) {
	if len(p) > rawIOMax {
		return s.TCPConn.Read(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	s.rp, s.rn, s.rerr = p, 0, 0
	err := s.raw.Read(s.readFn)
	n, errno := s.rn, s.rerr
	s.rp = nil
	s.rmu.Unlock()
	switch {
	case err != nil:
		return 0, s.opError("read", err)
	case errno != 0:
		return 0, s.opError("read", os.NewSyscallError("read", errno))
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is the RawConn.Read callback: one read, or false to wait for
// the socket to become readable.
func (s *sockConn) readOnce(fd uintptr) bool {
	for {
		n, errno := sysRead(fd, s.rp)
		switch errno {
		case 0:
			s.rn = n
			return true
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.rerr = errno
			return true
		}
	}
}

// Write writes all of p as net.Conn does, waiting for room as needed;
// errors as *net.OpError with Op "write".
func (s *sockConn) Write(p []byte) (int, error) {
	if len(p) > rawIOMax {
		return s.TCPConn.Write(p)
	}
	s.wmu.Lock()
	s.wp, s.wn, s.werr = p, 0, 0
	err := s.raw.Write(s.writeFn)
	n, errno := s.wn, s.werr
	s.wp = nil
	s.wmu.Unlock()
	switch {
	case err != nil:
		return n, s.opError("write", err)
	case errno != 0:
		return n, s.opError("write", os.NewSyscallError("write", errno))
	}
	return n, nil
}

// writeAll is the RawConn.Write callback: it writes what is left of wp,
// or returns false to wait for room.
func (s *sockConn) writeAll(fd uintptr) bool {
	for s.wn < len(s.wp) {
		n, errno := sysWrite(fd, s.wp[s.wn:])
		switch errno {
		case 0:
			s.wn += n
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werr = errno
			return true
		}
	}
	return true
}

// opError is err as net.Conn reports it: RawConn's errors (a deadline, a
// closed connection) renamed from "raw-read" and "raw-write", a system
// call's error wrapped with the connection's addresses.
func (s *sockConn) opError(op string, err error) error {
	if oe, ok := err.(*net.OpError); ok {
		oe.Op = op
		return oe
	}
	return &net.OpError{Op: op, Net: "tcp", Source: s.LocalAddr(), Addr: s.RemoteAddr(), Err: err}
}
