package tcpcork

import (
	"net"
	"syscall"
)

// Set sets (on) or clears TCP_CORK on nc when it is a TCP connection, and
// reports whether it did. Clearing it sends what the cork held.
func Set(nc net.Conn, on bool) bool {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	v := 0
	if on {
		v = 1
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
	})
	return err == nil && serr == nil
}
