//go:build unix

package server

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
)

// initRaw enables buffer-less idle waits for TCP and Unix sockets: the
// connection waits for readability through the netpoller with no buffer
// attached, and takes a buffer set only once bytes can be read.
func (c *conn) initRaw() {
	switch c.nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return
	}
	rc, err := c.nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return
	}
	c.raw = rc
}

// rawRead is the callback given to RawConn.Read: it reads what the socket
// has into rbuf[w:], taking a buffer set first if the connection was idle.
// It returns false (wait for readability) when the socket has nothing yet;
// an idle connection then gives the set straight back. With rawGrace
// (graceFill) the first empty read also begins the grace wait
// (h1_grace.go), so that an idle connection learns it is idle in one
// read.
func (cw *connWork) rawRead(fd uintptr) bool {
	c := cw.c
	fresh := c.set == nil
	if fresh {
		c.acquire()
	}
	for {
		n, err := syscall.Read(int(fd), c.rbuf[c.w:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if (fresh || c.idleRead) && c.r == c.w {
				c.release() // no buffer while it waits
			}
			if c.rawGrace {
				c.rawGrace = false
				if c.noGrace {
					c.rawErr = errWouldBlock
					return true
				}
				c.graceBegin()
				c.graced = true
			}
			return false
		case err != nil:
			c.rawErr = err
			return true
		case n == 0:
			c.rawErr = io.EOF
			return true
		}
		c.w += n
		return true
	}
}

// watchDisconnect cancels ctx when the client closes the connection while
// a handler runs. It waits for readability without a buffer and peeks: EOF
// or an error means the client left; data (a pipelined request) means it
// did not, and the watch ends there, as net/http's background read does.
// It returns, closing done, when the read deadline is moved to the past.
func (c *conn) watchDisconnect(ctx *requestContext, done chan struct{}) {
	defer close(done)
	var b [1]byte
	gone := false
	err := c.raw.Read(func(fd uintptr) bool {
		for {
			n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			switch {
			case err == syscall.EINTR:
				continue
			case err == syscall.EAGAIN:
				return false
			case err != nil || n == 0:
				gone = true
			}
			return true
		}
	})
	// Closed under us (Server.Close): the client is gone as surely as
	// if it had left, and a handler waiting on its context must learn
	// it, or Close would wait for it forever.
	if gone || errors.Is(err, net.ErrClosed) {
		ctx.cancel(context.Canceled)
	}
}
