//go:build unix

package websocket

import (
	"io"
	"syscall"
)

// sysRead reads from the socket fd once: errWouldBlock when it is
// empty (Go's netpoller keeps sockets non-blocking).
func sysRead(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			return 0, errWouldBlock
		case err != nil:
			return 0, err
		case n < 0:
			n = 0
		}
		return n, nil
	}
}

// rawReadNow reads what the socket holds, without waiting: the socket is
// non-blocking (Go's netpoller sets it so), so an empty one answers
// EAGAIN at once.
func rawReadNow(rc syscall.RawConn, p []byte) (int, error) {
	var n int
	var serr error
	if err := rc.Read(func(fd uintptr) bool {
		n, serr = syscall.Read(int(fd), p)
		return true
	}); err != nil {
		return 0, err
	}
	switch {
	case serr == syscall.EAGAIN || serr == syscall.EWOULDBLOCK:
		return 0, errWouldBlock
	case serr != nil:
		return 0, serr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
