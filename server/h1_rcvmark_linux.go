package server

import "syscall"

// setRcvLowat sets the socket's SO_RCVLOWAT to n bytes (1, the default,
// clears it; setting it wakes a reader whose bytes now reach it).
func setRcvLowat(rc syscall.RawConn, n int) bool {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVLOWAT, n)
	})
	return err == nil && serr == nil
}

// rcvBuf is the socket's receive buffer size (SO_RCVBUF), 0 if unknown.
func rcvBuf(rc syscall.RawConn) int {
	var v int
	var serr error
	err := rc.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	})
	if err != nil || serr != nil {
		return 0
	}
	return v
}
