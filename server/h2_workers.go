package server

// HTTP/2 engine: the worker goroutines that run handlers, bounded per
// connection, and the queue of streams waiting for one.

import (
	"strconv"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// h2MaxIdleWorkers bounds the handler goroutines a connection keeps
// waiting for its next streams.
const h2MaxIdleWorkers = 16

// startLocked runs a stream's handler on one of the connection's worker
// goroutines: one that is free (or about to be: it has finished its
// stream and will take the next from sc.work), else a new one. Reusing
// them saves starting a goroutine, and growing its stack, per request.
// assigned counts the streams given to workers and not yet finished, so
// workers-assigned is the number of workers that will look at sc.work
// again: a stream is queued only when one of them will take it.
func (sc *h2Conn) startLocked(st *h2Stream) {
	sc.assigned++
	if sc.workers >= sc.assigned {
		select {
		case sc.work <- st:
			return
		default:
		}
	}
	sc.workers++
	if sc.work == nil {
		sc.work = make(chan *h2Stream, h2MaxIdleWorkers)
	}
	go sc.worker(st, sc.work)
}

// workersBusy reports whether the connection has several workers and
// none free.
func (sc *h2Conn) workersBusy() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.workers >= h2YieldWorkers && sc.workers <= sc.assigned
}

// h2YieldWorkers is how many busy workers make the reader yield before
// it starts another.
const h2YieldWorkers = 4

// worker runs streams' handlers until the connection ends or enough
// others are free.
func (sc *h2Conn) worker(st *h2Stream, work chan *h2Stream) {
	goexit := true // until a return below
	defer func() {
		if goexit {
			sc.workerGoexit()
		}
	}()
	for {
		st.run()
		if sc.state != nil {
			sc.reportState()
		}
		sc.mu.Lock()
		sc.assigned--
		if sc.workers-sc.assigned > h2MaxIdleWorkers {
			sc.workers--
			sc.mu.Unlock()
			goexit = false
			return
		}
		if sc.trimmed {
			// The idle trim ran while this worker finished its stream
			// (a slow ConnState hook, say): it ends as the others did.
			sc.workers--
			sc.detachBusyLocked()
			sc.mu.Unlock()
			goexit = false
			return
		}
		if sc.trimCh == nil { // the trim made none since the last one
			sc.trimCh = make(chan struct{})
		}
		trim := sc.trimCh
		sc.mu.Unlock()
		if st = sc.nextStream(work, trim); st == nil {
			goexit = false
			return
		}
	}
}

// workerGoexit accounts for a worker whose handler ended the goroutine
// (runtime.Goexit) inside its stream, which run has reset: the stream is
// no longer assigned, the worker is gone, and ConnState hears whether
// anything still runs.
func (sc *h2Conn) workerGoexit() {
	sc.mu.Lock()
	sc.assigned--
	sc.workers--
	sc.detachBusyLocked()
	sc.mu.Unlock()
	if sc.state != nil {
		sc.reportState()
	}
}

// nextStream waits for the worker's next stream; nil when the worker is
// to end (the connection is over, or idle long enough to trim), in which
// case it is no longer counted.
func (sc *h2Conn) nextStream(work chan *h2Stream, trim chan struct{}) *h2Stream {
	select {
	case st, ok := <-work:
		if ok {
			return st
		}
	case <-trim:
		sc.mu.Lock()
		defer sc.mu.Unlock()
		select {
		case st, ok := <-work: // queued while the worker was told to go
			if ok {
				return st
			}
		default:
		}
		sc.workers--
		sc.detachBusyLocked() // the last worker of a parked connection
		return nil
	}
	sc.mu.Lock()
	sc.workers--
	sc.mu.Unlock()
	return nil
}

// answerLocked answers a stream that gets no handler with a bare status
// and END_STREAM, then, if the client is still sending, RST_STREAM
// (NO_ERROR); the stream is kept a while as reset, so that the client's
// frames in flight are dropped quietly.
func (sc *h2Conn) answerLocked(id uint32, status int, ended bool) {
	if sc.closed {
		return
	}
	block := sc.enc.StartBlock(nil)
	block = sc.enc.AppendField(block, ":status", strconv.Itoa(status))
	sc.wbuf = h2.AppendHeaderBlock(sc.wbuf, id, true, block, sc.peerFrame)
	if !ended {
		sc.wbuf = h2.AppendRSTStream(sc.wbuf, id, h2.ErrCodeNo)
		st := &h2Stream{sc: sc, id: id, state: h2.StateResetLocal, counted: true, handlerDone: true, bodyClosed: true}
		st.in.Init(sc.srv.cfg.h2StreamWindow, true)
		st.wake.L = &sc.mu
		sc.table[id] = st
		sc.forgetLocked(st)
	}
	sc.kickWriter()
}
