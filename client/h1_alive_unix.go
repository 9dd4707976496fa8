//go:build unix

package client

import (
	"crypto/tls"
	"errors"
	"syscall"
)

// alive reports whether the server has neither closed c nor sent anything
// unasked while it was idle: one non-blocking MSG_PEEK, which consumes
// nothing. The raw connection and the peek function are made once per
// connection, so a check allocates nothing.
func (c *conn) alive() bool {
	if c.raw == nil {
		nc := c.nc
		if tc, ok := nc.(*tls.Conn); ok {
			// The socket under TLS: a close, an alert or any record
			// the server sent unasked shows there too.
			nc = tc.NetConn()
		}
		sc, ok := nc.(syscall.Conn)
		if !ok {
			return true // a wrapped conn: left to the retry rule
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return false
		}
		c.raw, c.peekFn = raw, c.peek
	}
	c.peekOK = false
	return c.raw.Read(c.peekFn) == nil && c.peekOK
}

// peek is the syscall.RawConn.Read callback of alive.
func (c *conn) peek(fd uintptr) bool {
	var buf [1]byte
	n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.peekOK = n < 0 && (errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK))
	return true
}
