package server

// HTTP/2 engine: the connection's table of streams: opening, resets,
// closing, and waking the writers that wait for window or buffer room.

import (
	"net/http"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

const (
	// h2RecentRefused is how many streams reset before they had state
	// (refused, or malformed) the connection remembers, so that the
	// frames the client sent on them before it saw the reset (a body,
	// trailers) are dropped, not answered as frames on a closed stream.
	h2RecentRefused = 64
	// h2MaxSentResets is how many RST_STREAMs with an error the server
	// sends in h2SentResetPeriod before it ends the connection with
	// GOAWAY ENHANCE_YOUR_CALM: a client whose frames keep calling for
	// them (MadeYouReset, CVE-2025-8671; streams past
	// MAX_CONCURRENT_STREAMS; DATA after END_STREAM) would otherwise hold
	// a core. Honest clients cause a few: a browser or RPC client none.
	h2MaxSentResets   = 100
	h2SentResetPeriod = 10 * time.Second
)

// resetLocked sends RST_STREAM on a stream and forgets its request.
func (sc *h2Conn) resetLocked(id uint32, code h2.ErrCode) {
	st := sc.table[id]
	if st == nil {
		sc.appendResetLocked(id, code)
		return
	}
	if st.state == h2.StateResetLocal {
		return
	}
	wasActive := st.state.Active()
	st.state, _ = st.state.Send(h2.FrameRSTStream, 0)
	sc.appendResetLocked(id, code)
	st.localReset()
	if wasActive {
		sc.streamClosedLocked(st)
	}
}

// appendResetLocked queues RST_STREAM. Each one with an error code counts
// toward the connection's budget of them (h2MaxSentResets); past it the
// reader ends the connection. NO_ERROR resets are not counted: they end
// streams whose response is complete (§8.1), one per handler run.
func (sc *h2Conn) appendResetLocked(id uint32, code h2.ErrCode) {
	if sc.closed {
		return
	}
	sc.wbuf = h2.AppendRSTStream(sc.wbuf, id, code)
	sc.kickWriter()
	if code != h2.ErrCodeNo && sc.sentResets.Count(time.Now()) != nil {
		sc.sentFlood.Store(true)
	}
}

// refuseLocked refuses a new stream (REFUSED_STREAM: the client may retry
// it, §8.7). Refusals count toward the server's reset budget, but for
// those after GOAWAY (counted says): a busy client's streams in flight
// when the server said it was going away are not its fault.
func (sc *h2Conn) refuseLocked(id uint32, counted bool) {
	if counted {
		sc.appendResetLocked(id, h2.ErrCodeRefusedStream)
	} else if !sc.closed {
		sc.wbuf = h2.AppendRSTStream(sc.wbuf, id, h2.ErrCodeRefusedStream)
		sc.kickWriter()
	}
	sc.rememberResetLocked(id)
}

// rememberResetLocked remembers a stream the server reset before it had
// any state (refused, or its request malformed), so that the frames the
// client sent on it before it saw the reset (a body, trailers) are
// dropped, not answered as frames on a closed stream, each with a reset
// of its own.
func (sc *h2Conn) rememberResetLocked(id uint32) {
	sc.refused[sc.refusedNext] = id
	sc.refusedNext = (sc.refusedNext + 1) % len(sc.refused)
}

// wasRefusedLocked reports whether stream id is among the last streams
// reset before they had state (rememberResetLocked).
func (sc *h2Conn) wasRefusedLocked(id uint32) bool {
	if sc.h2Busy == nil {
		return false
	}
	for _, r := range sc.refused {
		if r == id && id != 0 {
			return true
		}
	}
	return false
}

// streamClosedLocked accounts for a stream leaving the active states:
// what waits on it wakes to find it closed, and it is forgotten once its
// handler has returned.
func (sc *h2Conn) streamClosedLocked(st *h2Stream) {
	st.wake.Broadcast()
	sc.releaseSlotLocked(st)
	sc.forgetLocked(st)
}

// releaseSlotLocked gives back the stream's place under
// MAX_CONCURRENT_STREAMS once the stream is closed and its handler has
// returned, whichever comes last: the END_STREAM that a handler's return
// queues frees the place, so a client that opens its next stream on it is
// not refused. A stream the client resets keeps its
// place while its handler runs, as net/http's do: were it freed at the
// reset, a client opening and resetting streams in a loop (Rapid Reset,
// CVE-2023-44487) would have the server run any number of handlers that
// do not watch their context. With every place taken, a new stream is
// refused (REFUSED_STREAM, which clients retry), so a connection runs at
// most MAX_CONCURRENT_STREAMS (250) handlers at once.
func (sc *h2Conn) releaseSlotLocked(st *h2Stream) {
	if st.counted || st.state.Active() || !st.returned && !st.handlerDone {
		return
	}
	st.counted = true
	sc.streams.Done()
}

// wakeConnWaitersLocked wakes the streams waiting for the connection's
// send window.
func (sc *h2Conn) wakeConnWaitersLocked() {
	for _, st := range sc.connWaiters {
		st.connWaiting = false
	}
	sc.connWaiters = wakeStreams(sc.connWaiters)
}

// wakeRoomWaitersLocked wakes the streams waiting for room in the write
// buffer.
func (sc *h2Conn) wakeRoomWaitersLocked() {
	for _, st := range sc.roomWaiters {
		st.roomWaiting = false
	}
	sc.roomWaiters = wakeStreams(sc.roomWaiters)
}

// wakeStreams wakes the streams listed and returns the list emptied.
// (A stream recycled since it was listed gets a spurious wake-up, which
// its wait loop tells from a real one.)
func wakeStreams(list []*h2Stream) []*h2Stream {
	for i, st := range list {
		st.wake.Broadcast()
		list[i] = nil
	}
	return list[:0]
}

// wakeAllLocked wakes every goroutine waiting on the connection: it is
// closed.
func (sc *h2Conn) wakeAllLocked() {
	if sc.h2Busy == nil {
		return // parked without it: no one waits
	}
	for _, st := range sc.table {
		st.wake.Broadcast()
	}
	sc.wakeConnWaitersLocked()
	sc.wakeRoomWaitersLocked()
	sc.cond.Broadcast()
}

// queuedLocked reports whether frames wait for the writer.
func (sc *h2Conn) queuedLocked() bool { return sc.h2Busy != nil && len(sc.wbuf) > 0 }

// forgetLocked drops a closed stream whose handler is done from the
// table; one the server reset is kept a while among the recent resets.
func (sc *h2Conn) forgetLocked(st *h2Stream) {
	if !st.counted || !st.handlerDone || sc.table[st.id] != st {
		return
	}
	if st.state != h2.StateResetLocal {
		delete(sc.table, st.id)
		sc.recycleLocked(st)
		return
	}
	if st.remembered {
		return
	}
	st.remembered = true
	sc.recent = append(sc.recent, st.id)
	if len(sc.recent) > h2RecentResets {
		old := sc.table[sc.recent[0]]
		delete(sc.table, sc.recent[0])
		sc.recent = append(sc.recent[:0], sc.recent[1:]...)
		if old != nil {
			sc.recycleLocked(old)
		}
	}
}

func (sc *h2Conn) releaseConnLocked(n uint32) {
	if n == 0 || sc.closed {
		return
	}
	if inc := sc.connIn.Release(n); inc > 0 {
		sc.wbuf = h2.AppendWindowUpdate(sc.wbuf, 0, inc)
		sc.kickWriter()
	}
}

func (sc *h2Conn) newStream(id uint32, state h2.StreamState) *h2Stream {
	st := &h2Stream{
		sc:       sc,
		id:       id,
		state:    state,
		out:      h2.StreamWindow(sc.peerWindow),
		declared: sc.val.ContentLength,
	}
	st.in.Init(sc.srv.cfg.h2StreamWindow, true)
	st.wake.L = &sc.mu
	st.ctx.Context = sc.base
	var hdr http.Header
	if n := len(sc.headers); n > 0 {
		hdr = sc.headers[n-1]
		sc.headers = sc.headers[:n-1]
	} else {
		hdr = make(http.Header)
	}
	st.rw.take(st, hdr)
	sc.table[id] = st
	return st
}

// queueNoErrLocked queues the NO_ERROR reset of a stream whose response
// is complete while the client still sends, and makes sure the reader
// looks up soon even if the client sends nothing more: else the stream
// would stay half-closed, counted as active, and the connection would
// never be idle, nor closed by IdleTimeout.
func (sc *h2Conn) queueNoErrLocked(st *h2Stream) {
	sc.noErrQueued = append(sc.noErrQueued, h2StreamRef{st, st.id})
	if !sc.closed && !sc.readStop {
		sc.nc.SetReadDeadline(time.Now().Add(h2NoErrWait))
	}
}

// h2NoErrWait is how long frames the client sent before it saw a
// response are given to arrive before the stream is reset (NO_ERROR).
const h2NoErrWait = 100 * time.Millisecond

// resetNoErrLocked resets (NO_ERROR) the streams of refs still waiting
// for it: the client has not ended them since.
func (sc *h2Conn) resetNoErrLocked(refs []h2StreamRef) {
	for _, ref := range refs {
		if st := ref.st; st.id == ref.id && st.state == h2.StateHalfClosedLocal {
			sc.resetLocked(st.id, h2.ErrCodeNo)
		}
	}
}
