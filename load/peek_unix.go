//go:build unix

package load

import "syscall"

// peek looks, without waiting and without consuming anything, at what
// waits in the connection's socket: bytes (data) or the server's close
// (closed). One non-blocking MSG_PEEK; the raw connection and its
// callback are made once per connection, so a look allocates nothing.
func (c *fastConn) peek() (data, closed bool) {
	if c.raw == nil {
		sc, ok := c.conn.(syscall.Conn)
		if !ok {
			return false, false
		}
		raw, err := sc.SyscallConn()
		if err != nil {
			return false, false
		}
		c.raw = raw
		if c.peekFn == nil {
			c.peekFn = c.peekFD
		}
	}
	c.peeked = -1
	if c.raw.Read(c.peekFn) != nil {
		return false, false
	}
	return c.peeked > 0, c.peeked == 0
}

// peekFD is the syscall.RawConn.Read callback of peek.
func (c *fastConn) peekFD(fd uintptr) bool {
	var buf [1]byte
	n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if err != nil {
		n = -1
	}
	c.peeked = n
	return true
}
