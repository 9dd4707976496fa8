package server

import (
	"io"
	"net"
	"os"

	"github.com/hotpathhq/hotpath/wire"
)

// Big bodies skip the write buffer. Small writes are copied into the
// connection's write buffer so that a response leaves in one write with
// its pipelined neighbours; a large one would be copied for nothing. For
// http.Handlers (whose Write arguments escape anyway, through the
// interface):
//
//   - a Write of directWriteMin bytes or more, once the head is due, goes
//     to the socket with what is buffered before it in one writev;
//   - ReadFrom with a declared Content-Length hands the source to the TCP
//     connection's ReadFrom: sendfile for an *os.File (http.FileServer,
//     http.ServeContent), splice for a socket.
//
// The native API's Write must not let its argument escape (handlers
// write from stack buffers), so no writev: on a TCP connection a Write of
// directWriteMin bytes or more, once the head is due, sends what is
// buffered (the head, a chunk header) first, then p in one write of its
// own (writeTCP).
//
// All keep WriteStallTimeout's meaning: a transfer that times out while
// still moving is given a fresh timeout (see writeStalling).

// directWriteMin is the smallest Write sent straight to the socket.
const directWriteMin = 16 << 10

// writeDirect sends p as body after the head was committed, in one
// writev with the buffered output before it (the head, a chunk header).
func (r *response) writeDirect(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	c := r.x.c
	var err error
	switch {
	case r.state == respChunked:
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
		err = c.writeVec(net.Buffers{c.wbuf, p, crlf})
	case len(c.wbuf) > 0:
		err = c.writeVec(net.Buffers{c.wbuf, p})
	default:
		c.armStreamWrite()
		err = c.writeStalling(p)
	}
	c.wbuf = c.wbuf[:0]
	if err != nil {
		r.err = err
		c.writeFailed()
		return 0, err
	}
	r.sent += int64(len(p))
	return len(p), nil
}

var crlf = []byte("\r\n")

// writeTCP is writeDirect for the native API, on a TCP connection: the
// buffered output goes first in a write of its own, then p, so that p
// never escapes (writeStallingTCP).
func (r *response) writeTCP(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	c := r.x.c
	if r.state == respChunked {
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
	}
	err := c.flush()
	if err == nil {
		c.armStreamWrite()
		err = c.writeStallingTCP(p)
	}
	if err != nil {
		r.err = err
		c.writeFailed()
		return 0, err
	}
	if r.state == respChunked {
		c.wbuf = wire.AppendChunkEnd(c.wbuf)
	}
	r.sent += int64(len(p))
	return len(p), nil
}

// kernelSource reports whether src is something the TCP connection's
// ReadFrom moves inside the kernel (sendfile from a file, splice from a
// socket), directly or under one io.LimitedReader. Other readers are
// copied through a pooled buffer: net's own fallback would allocate a
// 32 KiB one per call.
func kernelSource(src io.Reader) bool {
	if lr, ok := src.(*io.LimitedReader); ok {
		src = lr.R
	}
	switch src.(type) {
	case *os.File, *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// readFromDirect sends src as the body of a response with a declared
// length, through the connection's ReadFrom (sendfile, splice). It
// reports ok=false, having sent nothing, when the response cannot go that
// way (no declared length, no body, chunked, a connection without
// ReadFrom): the caller copies instead.
func (r *response) readFromDirect(src io.Reader) (n int64, ok bool, err error) {
	c := r.x.c
	rf, isRF := c.nc.(io.ReaderFrom)
	if !isRF || !c.retryWrites() || r.declaredLen < 0 || !kernelSource(src) {
		return 0, false, nil
	}
	if r.state == respCollecting {
		if err := r.commit(); err != nil {
			return 0, true, err
		}
	}
	if r.state != respFixed || r.discard {
		return 0, false, nil
	}
	// One LimitedReader over the source itself: the TCP connection's
	// sendfile looks through one level only.
	lr := &io.LimitedReader{R: src, N: r.declaredLen - r.sent}
	outer, isLR := src.(*io.LimitedReader)
	if isLR {
		lr.R, lr.N = outer.R, min(outer.N, lr.N)
	}
	// Not corked (TCP_CORK): measured with the client on the other core,
	// a corked 1 GB file went at 0.62x net/http's throughput over
	// loopback and gained nothing over a veth pair, where uncorked is at
	// parity on both (bench/README, "Big bodies").
	if err := c.flush(); err != nil {
		r.err = err
		return 0, true, err
	}
	before := lr.N
	err = c.readFromStalling(rf, lr)
	n = before - lr.N
	r.sent += n
	if isLR {
		outer.N -= n
	}
	if err != nil {
		r.err = err
		c.writeFailed()
		return n, true, err
	}
	if r.sent == r.declaredLen && (!isLR || outer.N > 0) {
		// The declared length is sent: more from src is an error, as for
		// Write.
		var one [1]byte
		if k, _ := src.Read(one[:]); k > 0 {
			return n, true, ErrContentLength
		}
	}
	return n, true, nil
}
