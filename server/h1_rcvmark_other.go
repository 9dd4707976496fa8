//go:build !linux

package server

import "syscall"

// setRcvLowat is Linux's SO_RCVLOWAT, used for its wake-up semantics:
// elsewhere no mark is set.
func setRcvLowat(rc syscall.RawConn, n int) bool { return false }

// rcvBuf: elsewhere 0, so no mark is set.
func rcvBuf(rc syscall.RawConn) int { return 0 }
