package server

// HTTP/2 engine: a reader whose open streams are quiet gives its read
// buffer back.
//
// While a stream is open the reader waits for the client's next frame
// with no deadline (streams have their stall timers), holding its read
// buffer: 8 KiB, or 64 KiB once a big frame or a burst grew it. A
// connection whose streams are long-lived and quiet (server-sent events,
// a gRPC stream, a WebSocket over extended CONNECT) would hold it as long
// as they last; an idle connection gives it back after h2IdleTrim
// (h2_read.go), but this one is not idle. Instead such a read is recorded
// with the Server's sweep of read waits (waitsweep.go): when nothing has
// come for h2QuietTicks of its ticks, the sweep ends the read, the reader
// gives its buffer back and waits for one byte without one (read), and
// takes a buffer again when the byte comes. A read costs the record three
// atomic operations more, one of them a store; a quiet spell ended, one
// more read (of the byte) and the buffer's trip through its pool.

import "time"

// h2QuietTicks is how long, in the sweep's ticks, a read with streams open
// waits with its buffer before giving it back: a second (a stream's
// client sending every few hundred milliseconds keeps it).
const h2QuietTicks = uint64(time.Second / sweepTick)

// quietBegin records the read about to wait with the buffer while streams
// are open; quietEnd must follow.
func (sc *h2Conn) quietBegin() {
	sc.srv.grace.begin(&sc.quiet, sc.nc, h2QuietTicks)
}

// quietEnd ends the read recorded by quietBegin, which read n bytes, and
// reports whether the sweep ended it with nothing read: then the reader
// has given its buffer back. The deadline the sweep moved is set again by
// the next fill, after the sweep is done with it.
func (sc *h2Conn) quietEnd(n int) (gaveBack bool) {
	if !sc.quiet.end() {
		return false
	}
	// Off the lists until the next quiet read (a connection may stay
	// quiet for hours). leave takes the shard's lock, under which the
	// sweep moved the deadline: that is done when it returns.
	sc.quiet.leave()
	if n > 0 {
		return false
	}
	sc.releaseReadBuf()
	return true
}
