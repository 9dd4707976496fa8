package server

// HTTP/2 engine: a stream's output as frames: HEADERS, DATA within the
// flow-control windows, trailers, queued for the write loop.

import (
	"os"
	"strconv"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2HopFold is h2Hop's list for names in any case.
func h2HopFold(name string) bool {
	for _, k := range h2HopFields {
		if equalFoldString(name, k) {
			return true
		}
	}
	return false
}

// statusStrings are the :status values, made once.
var statusStrings = func() (s [600]string) {
	for i := 100; i < len(s); i++ {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func statusString(code int) string {
	if code < len(statusStrings) {
		return statusStrings[code]
	}
	return strconv.Itoa(code)
}

var (
	contentLengthName = []byte("content-length")
	dateName          = []byte("date")
)

// queueBlock queues a HEADERS block on the stream, which encode builds
// under the connection's mutex, into its scratch: HPACK needs blocks
// encoded in the order they are queued. A final block (a response head,
// trailers) moves the stream's state; an interim 1xx head does not.
func (st *h2Stream) queueBlock(end, final bool, encode func(sc *h2Conn, block []byte) []byte) error {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.closed {
		return errH2ConnClosed
	}
	flags := h2.Flags(0)
	if end {
		flags = h2.FlagEndStream
	}
	next, ok := st.state.Send(h2.FrameHeaders, flags)
	if !ok {
		return st.closedErrLocked()
	}
	block := encode(sc, sc.enc.StartBlock(sc.block[:0]))
	sc.block = block
	sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, st.id, end, block, sc.peerFrame)
	if final {
		st.state = next
		if !next.Active() {
			sc.streamClosedLocked(st)
		}
	}
	sc.kickWriter()
	return nil
}

// sendData queues p as DATA frames within the send windows, waiting for
// WINDOW_UPDATEs and for room in the write buffer (under
// WriteStallTimeout); end sets END_STREAM on the last frame.
func (st *h2Stream) sendData(p []byte, end bool) error {
	sc := st.sc
	if st.isHead {
		p = nil // a HEAD response has no body (RFC 9110 §9.3.2)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	for {
		n, err := st.dataRoomLocked(len(p))
		if err != nil {
			return err
		}
		if n == 0 && !end {
			sc.kickWriter()
			return nil
		}
		last := end && n == len(p)
		flags := h2.Flags(0)
		if last {
			flags = h2.FlagEndStream
		}
		sc.wbuf = h2.AppendData(sc.wbuf, st.id, flags, p[:n], 0)
		st.sentDataLocked(last)
		if p = p[n:]; last {
			return nil
		}
	}
}

// sendDataRef is sendData without END_STREAM, where the frames' payloads
// are not copied into the write buffer but written from p itself (see
// h2Ref), from file, where end is the offset just past p. It returns the write batch
// that carries the last of them, even
// with an error (0 if none was queued): p must stay valid and unchanged
// until the writer is done with that batch (waitWritten).
func (st *h2Stream) sendDataRef(p []byte, file fileStat, end int64) (batch uint64, err error) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	for len(p) > 0 {
		n, err := st.dataRoomLocked(len(p))
		if err != nil {
			return batch, err
		}
		sc.wbuf = h2.AppendFrameHeader(sc.wbuf, h2.FrameHeader{Length: uint32(n), Type: h2.FrameData, StreamID: st.id})
		sc.wrefs = append(sc.wrefs, h2Ref{at: len(sc.wbuf), p: p[:n], stream: st.id, file: file, end: end - int64(len(p)-n)})
		p = p[n:]
		sc.refBytes += n
		st.sentDataLocked(false)
		// The batch the writer takes next carries it (0 means none
		// was queued: nothing to wait for).
		batch = sc.taken + 1
	}
	sc.kickWriter()
	return batch, nil
}

// dataRoomLocked waits until the stream may queue its next DATA frame of
// at most left bytes and takes that frame's share of the send windows:
// it returns the frame's size, 0 only when left is 0. It fails when the
// stream or the connection can no longer send.
func (st *h2Stream) dataRoomLocked(left int) (int, error) {
	n, err := st.waitRoomLocked(left)
	if n > 0 {
		st.sc.connOut.Consume(uint32(n))
		st.out.Consume(uint32(n))
	}
	return n, err
}

// waitSendWindow waits until the stream may send, and returns how many
// bytes the flow-control windows let it send now.
func (st *h2Stream) waitSendWindow() (int64, error) {
	sc := st.sc
	sc.mu.Lock()
	defer sc.mu.Unlock()
	defer st.writeStall.end()
	if _, err := st.waitRoomLocked(1); err != nil {
		return 0, err
	}
	return min(sc.connOut.Available(), st.out.Available()), nil
}

// closedErrLocked is what a write to a stream that can no longer send
// gets: os.ErrDeadlineExceeded when its write deadline ended it, as
// net/http's HTTP/2 server returns.
func (st *h2Stream) closedErrLocked() error {
	if st.writeExpired {
		return os.ErrDeadlineExceeded
	}
	return errH2StreamClosed
}

// waitRoomLocked is dataRoomLocked without taking the frame's share of
// the windows. Each wait sleeps on the stream's own cond until what it
// waits for may have changed: nothing wakes it, and it wakes nothing, in
// between.
func (st *h2Stream) waitRoomLocked(left int) (int, error) {
	sc := st.sc
	for {
		if sc.closed || sc.writerGone {
			return 0, errH2ConnClosed
		}
		if st.state != h2.StateOpen && st.state != h2.StateHalfClosedRemote {
			return 0, st.closedErrLocked()
		}
		if left == 0 {
			return 0, nil
		}
		full := len(sc.wbuf) >= h2MaxWriteBuffer || sc.refBytes >= h2MaxRefQueue
		n := 0
		if !full {
			n = h2.SendLimit(&sc.connOut, &st.out, min(sc.peerFrame, h2MaxDataFrame), left)
		}
		if n > 0 {
			st.writeStall.end() // progress
			return n, nil
		}
		if sc.queuedLocked() {
			sc.kickWriter() // what is queued goes out while we wait
		}
		if full {
			// Waiting for the writer, which the connection's own
			// stall deadline watches (a client that stops reading
			// loses the connection); a slow one is no stall. The
			// writer wakes us when it takes the buffer.
			st.writeStall.end()
			if !st.roomWaiting {
				st.roomWaiting = true
				sc.roomWaiters = append(sc.roomWaiters, st)
			}
			st.wake.Wait()
			continue
		}
		// Waiting for the client's WINDOW_UPDATE: on the stream's own
		// cond, woken by an update of its window, of the connection's
		// (connWaiters), or a change of its state. Nothing else runs
		// for it meanwhile.
		st.writeStall.begin(sc.srv.cfg.writeStall, st)
		if sc.connOut.Available() <= 0 && !st.connWaiting {
			st.connWaiting = true
			sc.connWaiters = append(sc.connWaiters, st)
		}
		st.wake.Wait()
	}
}

// sentDataLocked accounts for a queued DATA frame; end (END_STREAM)
// moves the stream's state and wakes the writer.
func (st *h2Stream) sentDataLocked(end bool) {
	sc := st.sc
	sc.dataSent++
	if end {
		st.state, _ = st.state.Send(h2.FrameData, h2.FlagEndStream)
		if !st.state.Active() {
			sc.streamClosedLocked(st)
		}
		sc.kickWriter()
	}
}

// mapFaulted reports whether the writer found the stream's mapped pages
// unreadable (writeRefs).
func (st *h2Stream) mapFaulted() bool {
	st.sc.mu.Lock()
	defer st.sc.mu.Unlock()
	return st.mapFault
}
