package websocket

import (
	"io"
	"sync"
	"syscall"
)

// rawOp is one read of a socket through its syscall.RawConn, with its
// callback bound once and the op pooled: a closure handed to
// RawConn.Read escapes, and cost four allocations per message on the
// event loop's path (its captured variables and itself).
type rawOp struct {
	p    []byte  // read into p; nil: into a buffer from readPool, taken once readable
	bp   *[]byte // that buffer
	wait bool    // an empty socket waits (RawConn.Read's poll) instead of answering errWouldBlock
	n    int
	err  error
	fn   func(fd uintptr) bool // op.read
}

var rawOps = sync.Pool{New: func() any {
	op := &rawOp{}
	op.fn = op.read
	return op
}}

func (op *rawOp) read(fd uintptr) bool {
	buf := op.p
	if buf == nil {
		op.bp = readPool.Get().(*[]byte)
		buf = *op.bp
	}
	op.n, op.err = sysRead(fd, buf)
	if op.err == errWouldBlock && op.wait {
		if op.bp != nil {
			readPool.Put(op.bp)
			op.bp = nil
		}
		return false // wait for the socket, holding no buffer
	}
	return true
}

// rawRead reads once from rc into p, or, with p nil, into a pooled
// buffer it returns (nil with none read). Unless wait, an empty socket
// is errWouldBlock; a closed one io.EOF.
func rawRead(rc syscall.RawConn, p []byte, wait bool) (int, *[]byte, error) {
	op := rawOps.Get().(*rawOp)
	op.p, op.wait = p, wait
	err := rc.Read(op.fn)
	n, bp, rerr := op.n, op.bp, op.err
	*op = rawOp{fn: op.fn}
	rawOps.Put(op)
	switch {
	case err != nil:
	case rerr != nil:
		err = rerr
	case n == 0:
		err = io.EOF
	}
	if err != nil && bp != nil {
		readPool.Put(bp)
		bp = nil
	}
	return n, bp, err
}
