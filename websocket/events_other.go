//go:build !unix

package websocket

import "syscall"

// sysRead is never called where there are no readiness sets: Conn.direct
// is false there (conn.go).
func sysRead(fd uintptr, p []byte) (int, error) { return 0, errWouldBlock }

// rawReadNow is never called where there are no readiness sets (see
// events.go): a connection that cannot park reads as Read does.
func rawReadNow(rc syscall.RawConn, p []byte) (int, error) { return 0, errWouldBlock }
