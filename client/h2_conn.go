package client

// HTTP/2 client connection (RFC 9113) on hotpath's codec, wire/h2.
//
// One goroutine per connection reads frames (h2_read.go); everything else
// runs on the callers' goroutines: a request's HEADERS and DATA are
// encoded and written by the goroutine that calls send
// (h2_stream.go; the header block h2_head.go, the body h2_upload.go), and
// a response body is read by whoever reads it (h2_body.go), which gives
// flow-control credit back as it goes. All the state of a connection
// and of its streams is under one mutex, cc.mu: critical sections are
// short, and one lock costs less than the hand-offs between the several
// that a finer scheme needs.
//
// Writes are combined: a goroutine appends its frames to cc.wbuf under
// cc.mu and, when no write is in progress, writes the buffer itself (with
// the lock released) until it is empty; a goroutine that finds a write in
// progress leaves its frames to that writer. So concurrent streams share
// system calls, and a lone request costs one write and no hand-off.

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

const (
	// h2StreamWindow is the receive window each stream gets: a response
	// of up to 4 MiB arrives without waiting for the reader, and a slow
	// reader holds no more than this of the connection's window.
	h2StreamWindow = 4 << 20
	// h2ConnWindow is the connection's receive window: room for four
	// streams' full windows, so one stalled reader leaves the others
	// three quarters of it.
	h2ConnWindow = 16 << 20
	// h2ReadBufSize holds a few frames of the default maximum size.
	h2ReadBufSize = 64 << 10
	// h2MaxBuffered is how much a request body may queue in the write
	// buffer while another goroutine is writing it out, before the body's
	// writer waits: the buffer stays small however fast bodies are read.
	h2MaxBuffered = 256 << 10
	// h2InitialMaxStreams is the concurrency assumed until the server's
	// SETTINGS arrive, and h2DefaultMaxStreams the one assumed when they
	// set none (both as net/http's HTTP/2 client).
	h2InitialMaxStreams = 100
	h2DefaultMaxStreams = 1000
	// h2UserAgent is net/http's default User-Agent over HTTP/2.
	h2UserAgent = "Go-http-client/2.0"
	// h2KeepBufCap caps the write buffers kept between writes: a burst of
	// big frames does not pin its buffer for the connection's life.
	h2KeepBufCap = 1 << 20
	// h2CancelWriteGrace is how long the write a cancelled request's own
	// goroutine is in may go on before it is broken, and the connection
	// with it: RoundTrip cannot return before that write does (an
	// upload's frames, or a reset behind them). A write that moves ends
	// within it (the buffer holds at most a few hundred KiB); one to a
	// server that stopped reading would never end.
	h2CancelWriteGrace = 250 * time.Millisecond
	// h2MaxQueuedAcks bounds the PING and SETTINGS acknowledgements queued
	// behind a write in progress, as net/http's server bounds its queued
	// control frames (CVE-2019-9512): a server that floods them while it
	// does not read would grow the write buffer without end.
	h2MaxQueuedAcks = 10000
)

// errH2Retry is what send's error Is when the server certainly did
// not process the request: its stream was above a GOAWAY's last stream,
// the server refused it (REFUSED_STREAM), or the connection closed before
// any byte of it was written. The caller may send it again on another
// connection. Check it with errors.Is.
var errH2Retry = errors.New("client: HTTP/2 request not processed by the server")

// errH2Closed fails the streams of a connection closed by close().
var errH2Closed = errors.New("client: HTTP/2 connection closed")

// h2RetryError is errH2Retry with the reason the request was not
// processed, so that logs say why and errors.Is finds both.
type h2RetryError struct{ cause error }

// Error says the request may be retried, and why.
func (e *h2RetryError) Error() string {
	return "client: HTTP/2 request not processed by the server, retry it on another connection: " + e.cause.Error()
}

// Is makes errors.Is(err, errH2Retry) true.
func (e *h2RetryError) Is(target error) bool { return target == errH2Retry }

// Unwrap exposes the cause: a GOAWAY, a reset, the connection's end.
func (e *h2RetryError) Unwrap() error { return e.cause }

// h2ResetError reports a stream the server reset with RST_STREAM, with
// its code, so a caller (and a log) can tell CANCEL from INTERNAL_ERROR.
type h2ResetError struct{ Code h2.ErrCode }

// Error names the code the server reset the stream with.
func (e *h2ResetError) Error() string {
	return "client: HTTP/2 stream reset by the server: " + e.Code.String()
}

// h2Conn is one HTTP/2 connection, shared by the requests that reserve a
// stream on it.
type h2Conn struct {
	t        *Transport
	key      connKey // the pool key
	nc       net.Conn
	tlsState *tls.ConnectionState // set on responses, as net/http does

	mu sync.Mutex // guards everything below but the read loop's own

	// The write side: frames waiting in wbuf, written by one goroutine at
	// a time (flushing). taken counts the bytes handed to Write so far
	// and written those it reported written, so that a stream whose
	// frames start at or past taken is known never to have left.
	wbuf, spare  []byte
	flushing     bool
	flusher      *h2Stream // the stream whose goroutine writes, if any
	graceWrite   bool      // a cancel gave the flusher's writes a deadline (h2CancelWriteGrace)
	acks         int       // PING and SETTINGS acknowledgements in wbuf since a write took it
	taken        int64
	written      int64
	flushWaiters []*h2Stream // bodies waiting for the buffer to drain
	// deferred counts goroutines that queued frames and yielded before
	// writing them, to write a batch: the read loop leaves the buffer to
	// them rather than write it before blocking.
	deferred int

	enc     h2.Encoder        // request fields; its table is in wbuf's order
	hbuf    []byte            // a block being encoded
	pbuf    []byte            // a :path being built
	traced  []string          // a traced head's fields, while it is encoded (h2Conn.field)
	lowered map[string]string // header names lowercased, per connection

	streams   map[uint32]*h2Stream // open streams by id
	ids       h2.ClientStreams     // stream identifiers, slots reserved and open, GOAWAY
	spent     bool                 // no new streams, it closes after those it has: DisableKeepAlives took its one, or a request timed out behind a stuck write
	idleSince time.Time            // when its last stream ended
	closed    bool                 // no new streams: closed, failed or broken
	err       error                // why the connection ended, once it has

	deadlines deadlineHeap // streams with a deadline (h2_deadline.go)
	dlTimer   *time.Timer  // the connection's one deadline timer
	dlAt      time.Time    // when dlTimer fires; zero when not set

	sendWin       h2.Window       // the connection's send window
	peer          h2.PeerSettings // the server's SETTINGS (written by the read loop, under mu)
	sendWins      []*h2.Window    // the streams' send windows, gathered for a SETTINGS frame
	sendWaiters   []*h2Stream     // streams waiting for send window
	inflow        h2.Inflow       // the connection's receive window
	maxHeaderList int             // our SETTINGS_MAX_HEADER_LIST_SIZE

	// The read loop's own, touched by no other goroutine.
	rbuf     []byte
	r, w     int
	asm      h2.Assembler
	blockErr *h2.Error // the stream error of a field block's HEADERS frame, for when its CONTINUATION ends it
	dec      h2.Decoder
	fields   []h2.Field
	canon    map[string]string // lowercase name → canonical, beyond the common ones
	vals     []byte
	readDone chan struct{} // closed when the read loop has exited
}

// newH2Conn starts HTTP/2 on nc (a *tls.Conn that negotiated "h2", or a
// cleartext conn for h2c with prior knowledge): it writes the client
// preface and SETTINGS, and starts the one read-loop goroutine of the
// connection. On error nc is closed.
func newH2Conn(t *Transport, key connKey, nc net.Conn) (*h2Conn, error) {
	maxList := t.maxResponseHeaderBytes()
	cc := &h2Conn{
		t: t, key: key, nc: nc,
		wbuf:          make([]byte, 0, 4<<10),
		spare:         make([]byte, 0, 4<<10),
		streams:       make(map[uint32]*h2Stream),
		sendWin:       h2.ConnWindow(h2.DefaultInitialWindowSize),
		peer:          h2.NewPeerSettings(h2InitialMaxStreams, h2DefaultMaxStreams),
		maxHeaderList: maxList,
		rbuf:          make([]byte, h2ReadBufSize),
		readDone:      make(chan struct{}),
	}
	if tc, ok := nc.(tlsConn); ok {
		st := tc.ConnectionState()
		cc.tlsState = &st
	}
	cc.dec.MaxHeaderListSize = maxList
	cc.asm.MaxBlockSize = 2 * maxList
	// One field over the list's limit fails its stream (the decoder
	// reads on, keeping its table in step), not the connection: a
	// literal may be as long as the block itself.
	cc.dec.MaxStringLength = cc.asm.MaxBlockSize
	cc.inflow.Init(h2.DefaultInitialWindowSize, false)
	inc := cc.inflow.Grow(h2ConnWindow)

	b := append(cc.wbuf[:0], h2.ClientPreface...)
	b = h2.AppendSettings(b,
		h2.Setting{ID: h2.SettingEnablePush, Val: 0},
		h2.Setting{ID: h2.SettingInitialWindowSize, Val: h2StreamWindow},
		h2.Setting{ID: h2.SettingMaxHeaderListSize, Val: uint32(min(maxList, 1<<31))},
	)
	b = h2.AppendWindowUpdate(b, 0, inc)
	if _, err := nc.Write(b); err != nil {
		nc.Close()
		return nil, err
	}
	cc.wbuf = b[:0]
	go cc.readLoop()
	return cc, nil
}

// reserve takes a stream slot for one request: false when the connection
// is closing (GOAWAY received, read error, closed) or has as many streams
// open, reserved ones included, as the server's
// SETTINGS_MAX_CONCURRENT_STREAMS allows. send must follow a true
// reserve; it gives the slot back when the stream ends.
func (cc *h2Conn) reserve() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed || cc.spent || !cc.ids.Reserve(cc.peer.MaxConcurrentStreams) {
		return false
	}
	// Without keep-alives, one request per connection, as net/http's
	// HTTP/2 transport does.
	cc.spent = cc.t.DisableKeepAlives
	return true
}

// idle reports whether no stream is open or reserved, for the pool's
// idle timer.
func (cc *h2Conn) idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.ids.Active() == 0
}

// close closes the connection and fails its streams.
func (cc *h2Conn) close() { cc.fail(errH2Closed) }

// releaseLocked gives back a stream slot: of stream id when it closes, of
// a reservation that never opened a stream when id is 0. A connection
// that takes no new streams closes once its last one is done.
func (cc *h2Conn) releaseLocked(id uint32) {
	cc.ids.Done(id)
	if cc.ids.Active() == 0 {
		cc.idleSince = time.Now() // for httptrace's GotConnInfo.IdleTime
	}
	if cc.ids.Active() == 0 && (cc.ids.GoingAway() || cc.spent) && !cc.closed {
		cc.shutdownLocked(errH2Closed)
		go cc.nc.Close() // not under cc.mu: a TLS close may write
	}
}

// fail ends the connection with err: the streams fail, the socket
// closes, the read loop exits. Only the first call counts.
func (cc *h2Conn) fail(err error) {
	cc.mu.Lock()
	first := cc.err == nil
	cc.shutdownLocked(err)
	cc.mu.Unlock()
	if first {
		cc.nc.Close()
	}
}

// shutdownLocked marks the connection ended with err and fails every
// stream: with errH2Retry those of which nothing was handed to the
// socket, with err (or a wrap of it) the others.
func (cc *h2Conn) shutdownLocked(err error) {
	if cc.err != nil {
		return
	}
	cc.closed = true
	cc.err = err
	if cc.dlTimer != nil {
		cc.dlTimer.Stop()
	}
	// Bytes handed to a write still in progress may have left; with none
	// in progress, those past written certainly did not.
	sent := cc.written
	if cc.flushing {
		sent = cc.taken
	}
	for _, s := range cc.streams {
		serr := err
		if s.startOff >= sent {
			serr = &h2RetryError{cause: err}
		}
		s.abortLocked(serr)
	}
	// Frames still queued will never be written.
	cc.wbuf = cc.wbuf[:0]
	cc.wakeFlushWaitersLocked()
	cc.wakeSendWaitersLocked()
}

// wakeSendWaitersLocked wakes the bodies waiting for send window: the
// connection's window grew, or every stream's did.
func (cc *h2Conn) wakeSendWaitersLocked() {
	for i, s := range cc.sendWaiters {
		s.waitSend = false
		s.cond.Broadcast()
		cc.sendWaiters[i] = nil
	}
	cc.sendWaiters = cc.sendWaiters[:0]
}

// wakeFlushWaitersLocked wakes the bodies waiting for the write buffer
// to drain: a writer has just taken it.
func (cc *h2Conn) wakeFlushWaitersLocked() {
	for i, s := range cc.flushWaiters {
		s.waitFlush = false
		s.cond.Broadcast()
		cc.flushWaiters[i] = nil
	}
	cc.flushWaiters = cc.flushWaiters[:0]
}

// connLostError is the error of the streams a broken connection fails.
func connLostError(err error) error {
	return fmt.Errorf("client: HTTP/2 connection lost: %w", err)
}

// flushLocked writes what wbuf holds until it is empty, unless another
// goroutine is already doing so (then that one will write these frames
// too). s is the stream on whose behalf the caller writes, nil for none:
// its deadline may interrupt a write that does not progress. Called and
// returns with cc.mu held; the lock is released during each write.
func (cc *h2Conn) flushLocked(s *h2Stream) {
	if cc.flushing {
		return
	}
	for len(cc.wbuf) > 0 && cc.err == nil {
		buf := cc.wbuf
		cc.wbuf = cc.spare[:0]
		cc.acks = 0
		cc.spare = nil
		cc.taken += int64(len(buf))
		cc.flushing, cc.flusher = true, s
		if len(cc.flushWaiters) > 0 {
			cc.wakeFlushWaitersLocked()
		}
		cc.mu.Unlock()
		n, err := cc.nc.Write(buf)
		cc.mu.Lock()
		cc.flushing, cc.flusher = false, nil
		cc.written += int64(n)
		if cap(buf) <= h2KeepBufCap {
			cc.spare = buf[:0]
		}
		if err != nil {
			cc.graceWrite = false
			if cc.err == nil {
				cc.shutdownLocked(connLostError(err))
				go cc.nc.Close()
			}
			return
		}
	}
	if cc.graceWrite {
		cc.graceWrite = false
		cc.nc.SetWriteDeadline(time.Time{})
	}
	if cc.spare == nil {
		cc.spare = make([]byte, 0, 4<<10)
	}
}

// interruptWriteLocked breaks a write that s's goroutine is blocked in,
// once s's deadline has passed: the socket has taken nothing for the
// whole of a request's time, and the connection cannot be saved (a frame
// may be half written). The write fails and ends the connection.
func (cc *h2Conn) interruptWriteLocked(s *h2Stream) {
	if cc.flushing && cc.flusher == s {
		cc.nc.SetWriteDeadline(aLongTimeAgo)
	}
}

// goAwayLocked queues a GOAWAY for a connection error of the server's and
// ends the connection with err; the caller flushes and closes.
func (cc *h2Conn) goAwayLocked(code h2.ErrCode, err error) {
	if cc.err != nil {
		return
	}
	cc.wbuf = h2.AppendGoAway(cc.wbuf, 0, code, []byte(err.Error()))
	// Write the GOAWAY, briefly: the connection is going anyway. A write
	// in progress on a request's goroutine would stop at the shutdown
	// below and leave it unsent: let it end first (a protocol error is
	// rare; the wait is bounded).
	wait := time.Now().Add(time.Second)
	for cc.flushing && time.Now().Before(wait) {
		cc.mu.Unlock()
		time.Sleep(time.Millisecond)
		cc.mu.Lock()
	}
	if !cc.flushing && cc.err == nil {
		cc.nc.SetWriteDeadline(time.Now().Add(time.Second))
		cc.flushLocked(nil)
	}
	cc.shutdownLocked(err)
}
