//go:build unix

package websocket

import (
	"io"
	"syscall"
)

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
