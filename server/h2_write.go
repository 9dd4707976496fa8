package server

// HTTP/2 engine: the write loop, the one goroutine that writes a
// connection's frames to the socket, and its stall timeout.

import (
	"errors"
	"net"
	"os"
	"runtime"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// kickWriter tells the writer there is something to write, and starts
// one if an idle connection's writer had left (parkWriterLocked).
func (sc *h2Conn) kickWriter() {
	sc.kicked.Store(true)
	select {
	case sc.kick <- struct{}{}:
	default:
	}
	if sc.writerParked.Load() && sc.writerParked.CompareAndSwap(true, false) {
		go sc.writeLoop()
	}
}

// parkWriterLocked lets the writer goroutine go, with its stack, while the
// connection is idle past its trim (trimIdle kicks it for this): it
// reports true when the writer may return. Called under mu, with nothing
// queued, by the writer; a kick that comes meanwhile starts a writer
// again (kickWriter), or keeps this one.
func (sc *h2Conn) parkWriterLocked() bool {
	if !sc.trimmed || sc.running > 0 || sc.streams.Active() > 0 || sc.closed || sc.fatal {
		return false
	}
	sc.writerParked.Store(true)
	// A kick after the Store finds the writer parked and starts one; a
	// kick before it is seen here (kicked is cleared before each check
	// of the queue): this writer stays.
	if sc.kicked.Load() && sc.writerParked.CompareAndSwap(true, false) {
		return false
	}
	// The write buffers go too (nothing is queued); the next writer,
	// which waits for mu, grows new ones. With the reader parked and no
	// worker left, so does the rest of the busy state.
	if sc.h2Busy != nil {
		sc.wbuf, sc.spare = nil, nil
		sc.detachBusyLocked()
	}
	return true
}

// An h2Ref is a DATA frame's payload queued by reference: it is written
// from p, right after the write buffer's first at bytes (which end with
// the frame's header).
type h2Ref struct {
	at     int
	p      []byte
	stream uint32   // the stream the frame is on
	file   fileStat // the file p maps
	end    int64    // the offset in file just past p
}

// fileStat is the file behind a payload queued by reference.
type fileStat interface{ Stat() (os.FileInfo, error) }

// writeLoop writes what is queued in the write buffer until the
// connection closes, or until it is idle past its trim (parkWriterLocked):
// then the next kick starts it again.
func (sc *h2Conn) writeLoop() {
	if sc.writeBatches() {
		return // parked
	}
	sc.mu.Lock()
	sc.writerGone = true
	sc.wakeAllLocked() // waitWriterGone too
	sc.mu.Unlock()
}

// writeBatches is writeLoop's loop: it reports true when the writer
// parked, false when the connection is over.
func (sc *h2Conn) writeBatches() (parked bool) {
	for first := true; ; first = false {
		if !first {
			<-sc.kick
		}
		// Let the goroutines that can run (handlers finishing their
		// responses, the reader answering the rest of a batch) queue
		// their frames first: one write then carries them all.
		runtime.Gosched()
		sc.kicked.Store(false)
		sc.mu.Lock()
		stop := sc.closed || sc.fatal
		if !sc.queuedLocked() {
			// A kick with nothing to write (its frames went out in
			// the previous batch): nobody is woken, so no one kicks
			// back for nothing.
			park := !stop && sc.parkWriterLocked()
			sc.mu.Unlock()
			if stop || park {
				return park
			}
			continue
		}
		buf, refs := sc.wbuf, sc.wrefs
		sc.wbuf, sc.wrefs, sc.refBytes = sc.spare[:0], sc.refSpare[:0], 0
		sc.taken++
		sc.wakeRoomWaitersLocked() // room in the write buffer
		sc.mu.Unlock()
		var err error
		if len(refs) == 0 {
			err = sc.write(buf)
		} else {
			err = sc.writeRefs(buf, refs)
		}
		if err != nil {
			sc.mu.Lock()
			sc.closeLocked()
			sc.written = sc.taken
			sc.wakeAllLocked()
			sc.mu.Unlock()
			closeAfterFailedWrite(sc.nc)
			sc.stopParking() // a parked reader must see the closed socket
			return false
		}
		sc.mu.Lock()
		sc.spare = buf[:0]
		if sc.running == 0 && sc.streams.Active() == 0 {
			sc.dropBigWriteBufsLocked() // the burst is over
		}
		clear(refs) // no reference to the owner's memory outlives the write
		sc.refSpare = refs[:0]
		sc.written = sc.taken
		if sc.refWaiters > 0 {
			sc.cond.Broadcast()
		}
		if sc.noErrOut != 0 && sc.written >= sc.noErrOut {
			// The NO_ERROR resets are on the wire: ConnState may hear
			// that the connection is idle (a hook that closes idle
			// connections no longer cuts them off).
			sc.noErrOut = 0
			sc.mu.Unlock()
			sc.reportState()
			sc.mu.Lock()
		}
		if len(sc.wbuf) == 0 && stop {
			sc.mu.Unlock()
			return false
		}
		if len(sc.wbuf) > 0 {
			sc.kickWriter()
		} else if !stop && sc.parkWriterLocked() {
			// An idle connection past its trim (a PING woke it): the
			// writer leaves now, rather than wait for a kick that may
			// never come with the reader parked again.
			sc.mu.Unlock()
			return true
		}
		sc.mu.Unlock()
	}
}

// writeRefs writes buf with the payloads queued by reference spliced in,
// in one writev per 1,024 pieces. A payload whose pages cannot be read (a
// mapped file truncated since: EFAULT) fails its stream alone: that
// stream's frames go out with zeros for payload, so that the
// connection's framing holds, and the stream is reset (INTERNAL_ERROR)
// once the batch is written, as net/http fails a stream whose file
// shrank.
func (sc *h2Conn) writeRefs(buf []byte, refs []h2Ref) error {
	iov := sc.iov[:0]
	last := 0
	for _, r := range refs {
		if r.at > last {
			iov = append(iov, buf[last:r.at])
		}
		iov = append(iov, r.p)
		last = r.at
	}
	if last < len(buf) {
		iov = append(iov, buf[last:])
	}
	sc.iov = iov[:0]
	var err error
	var faulted []uint32
	for {
		sc.armWriteStall()
		var n int64
		n, err = iov.WriteTo(sc.nc) // consumes what it wrote
		if len(iov) > 0 && isFault(err) {
			if f := zeroFaulted(iov, refs); len(f) > 0 {
				faulted = append(faulted, f...)
				continue
			}
		}
		if !stalledWithProgress(err, n) || len(iov) == 0 {
			break
		}
	}
	clear(sc.iov[:cap(sc.iov)])
	if len(faulted) > 0 {
		sc.mu.Lock()
		for _, id := range faulted {
			if st := sc.table[id]; st != nil {
				st.mapFault = true
				sc.resetLocked(id, h2.ErrCodeInternal)
			}
		}
		sc.mu.Unlock()
	}
	return err
}

// h2Zeros stand in for the payload of a stream whose mapped pages could
// not be read (writeRefs): a frame is never larger.
var h2Zeros [h2MaxDataFrame]byte

// zeroFaulted finds, among the payloads left to write in iov, those past
// their file's end now (its file was truncated), and replaces them with
// zeros. (The kernel copies and reverts in chunks, so how far a failed
// writev got does not say which payload failed; the files' sizes do.) It
// returns the streams whose payloads it replaced.
func zeroFaulted(iov net.Buffers, refs []h2Ref) (streams []uint32) {
	// A piece is a payload's, or what is left of it, when it ends
	// where the payload ends.
	piece := func(r *h2Ref) int {
		for k, b := range iov {
			if len(b) > 0 && len(r.p) > 0 && &b[len(b)-1] == &r.p[len(r.p)-1] {
				return k
			}
		}
		return -1
	}
	for i := range refs {
		r := &refs[i]
		k := piece(r)
		if k < 0 || r.file == nil {
			continue // written, or not a file's
		}
		if fi, err := r.file.Stat(); err != nil || r.end <= fi.Size() {
			continue
		}
		if len(streams) == 0 || streams[len(streams)-1] != r.stream {
			streams = append(streams, r.stream)
		}
		iov[k] = h2Zeros[:len(iov[k])]
	}
	return streams
}

// write writes buf. WriteStallTimeout bounds each wait without progress,
// not the whole write: a big batch to a client that reads slowly but
// steadily goes on, one that stops reading is cut.
func (sc *h2Conn) write(buf []byte) error {
	if sc.tlsState != nil && sc.srv.cfg.writeStall > 0 {
		// A TLS write that times out cannot be resumed: each write
		// moves one record's worth, under a deadline of its own.
		for len(buf) > 0 {
			k := min(len(buf), h2TLSWriteChunk)
			sc.armWriteStall()
			if _, err := sc.nc.Write(buf[:k]); err != nil {
				return err
			}
			buf = buf[k:]
		}
		return nil
	}
	for {
		sc.armWriteStall()
		n, err := sc.nc.Write(buf)
		buf = buf[n:]
		if !stalledWithProgress(err, int64(n)) || len(buf) == 0 {
			return err
		}
	}
}

// h2TLSWriteChunk is what one write moves over TLS under the stall
// deadline: a full TLS record.
const h2TLSWriteChunk = 16 << 10

// armWriteStall sets the write deadline WriteStallTimeout from now.
func (sc *h2Conn) armWriteStall() {
	if d := sc.srv.cfg.writeStall; d > 0 {
		sc.nc.SetWriteDeadline(time.Now().Add(d))
	}
}

// stalledWithProgress reports whether a write hit its deadline after
// writing something: the client is slow, not gone.
func stalledWithProgress(err error, n int64) bool {
	return n > 0 && errors.Is(err, os.ErrDeadlineExceeded)
}

// waitWritten waits until the writer is done with write batch b (it
// wrote it, failed to, or will never write again): then memory queued by
// reference in that batch or before may be reused.
func (sc *h2Conn) waitWritten(b uint64) {
	sc.mu.Lock()
	sc.refWaiters++
	for sc.written < b && !sc.writerGone {
		sc.kickWriter()
		sc.cond.Wait()
	}
	sc.refWaiters--
	sc.mu.Unlock()
}
