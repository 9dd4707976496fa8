//go:build unix

package websocket

import (
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
	n, _, err := rawRead(rc, p, false)
	return n, err
}
