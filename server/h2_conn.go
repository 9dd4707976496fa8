package server

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The native HTTP/2 connection: how a Server serves HTTP/2 unless
// HTTP2HandOff is set.
//
// One goroutine reads frames, runs them through wire/h2 (Assembler,
// Decoder, RequestValidator, ServerStreams, the windows) and starts each
// request's handler on a goroutine of its own. Everything the reader and
// the handlers share (the stream table, the send windows, the HPACK
// encoder and the write buffer) is guarded by one mutex; a cond on it
// wakes whoever waits for a window, for body bytes or for room in the
// write buffer. A writer goroutine takes what has been queued in the
// write buffer and writes it in one go, so the frames of several
// streams, and the control frames, leave in one write.

// Receive windows this server grants: larger than the protocol's 64 KiB
// defaults so that uploads are not held to a round trip per 64 KiB, and
// bounded per connection by the connection window.
const (
	h2StreamWindow = 1 << 20
	h2ConnWindow   = 4 << 20
	// h2MaxWriteBuffer is how much may wait in the write buffer before
	// handlers writing DATA wait for the writer to catch up.
	h2MaxWriteBuffer = 256 << 10
	// h2ReadBuffer is the read buffer: room for several frames of the
	// default maximum size.
	h2ReadBuffer = 64 << 10
	// h2MaxQueued bounds the write buffer against a client that sends
	// frames the server must answer (PING, SETTINGS, frames on closed
	// streams) but does not read the answers: past it the connection
	// ends with ENHANCE_YOUR_CALM.
	h2MaxQueued = 1 << 20
	// h2RecentResets is how many streams reset by the server the
	// connection remembers, so that frames the client had in flight on
	// them are discarded quietly (§5.1 "closed").
	h2RecentResets = 64
	// h2MaxRefQueue is how many bytes queued by reference (h2Ref) may
	// wait for the writer: they cost no memory of ours, so more than
	// h2MaxWriteBuffer, to write in fewer, larger writev calls.
	h2MaxRefQueue = 4 << 20
	// h2MaxDataFrame caps the DATA frames this server sends, whatever
	// SETTINGS_MAX_FRAME_SIZE the client allows, so that one frame does
	// not make the write buffer jump.
	h2MaxDataFrame = 64 << 10
)

var (
	errH2StreamClosed = errors.New("server: HTTP/2 stream closed")
	errH2ConnClosed   = errors.New("server: HTTP/2 connection closed")
	errH2FileFault    = errors.New("server: HTTP/2 file body could not be read while sent (truncated?): stream reset")
	errH2Flood        = &h2.Error{Code: h2.ErrCodeEnhanceYourCalm, Reason: "client does not read what its frames call for (PING, SETTINGS or RST_STREAM flood)"}
	errH2Idle         = &h2.Error{Code: h2.ErrCodeNo, Reason: "idle timeout"}
	errH2Preface      = &h2.Error{Code: h2.ErrCodeProtocol, Reason: "connection preface is not followed by a SETTINGS frame (§3.4)"}
	errH2SettingsAck  = &h2.Error{Code: h2.ErrCodeSettingsTimeout, Reason: "client did not acknowledge the server's SETTINGS within ReadHeaderTimeout (§6.5.3)"}
)

// h2StreamRef names a stream that may have been recycled since (native
// streams are reused): it is the same stream only while st.id == id.
type h2StreamRef struct {
	st *h2Stream
	id uint32
}

// h2Conn is one native HTTP/2 server connection.
type h2Conn struct {
	srv      *Server
	nc       net.Conn
	base     context.Context
	remote   string
	tlsState *tls.ConnectionState
	state    func(ConnState) // nil: nobody listens
	stateMu  sync.Mutex      // reports in the order of the changes

	// The reader's own state.
	rbuf      []byte      // nil while an idle connection waits without one
	noReadBuf atomic.Bool // rbuf is nil (for tests: the reader alone touches rbuf)
	one       [1]byte     // what a connection waiting without rbuf reads into
	r, w      int
	asm       h2.Assembler
	dec       h2.Decoder
	val       h2.RequestValidator
	fields    h2Fields // the block being decoded
	// The last strings made for a request's path, authority and header
	// values: a client repeating itself (most do) costs no allocation.
	lastPath, lastHost, lastValues string
	resets                         h2.ResetCounter
	floods                         h2.FloodCounter
	// Tiny WINDOW_UPDATEs the client may send without counting as a
	// flood: two (the stream's and the connection's) per DATA frame the
	// server sent, as a client that gives back each frame at once does.
	dataSeen     uint64
	tinyUpdateOK int
	gotPref      bool // the client's first SETTINGS frame has arrived
	// The server's SETTINGS went out at settingsSent; the client's ACK
	// is due within ReadHeaderTimeout (§6.5.3).
	settingsSent  time.Time
	settingsAcked bool

	// Shared state, under mu.
	mu    sync.Mutex
	cond  *sync.Cond
	wbuf  []byte
	spare []byte
	// DATA payloads queued by reference rather than copied into wbuf
	// (a mapped file's pages, see h2file_linux.go), each to be written
	// right after wbuf[:at]; the writer's batches are counted so that
	// their owner knows when the writer is done with them.
	wrefs      []h2Ref
	refSpare   []h2Ref
	refBytes   int    // payload bytes in wrefs
	taken      uint64 // write batches the writer took
	written    uint64 // write batches the writer is done with
	refWaiters int    // goroutines in waitWritten
	mapped     int    // streams sending from a mapped file (takeMapSlot)
	// roomWaiters are the streams waiting for room in the write buffer:
	// the writer wakes them (each on its own cond) when it takes the
	// buffer.
	roomWaiters []*h2Stream
	// connWaiters are the streams waiting for the connection's send
	// window: a WINDOW_UPDATE on stream 0 wakes them (each on its own
	// cond), and no one else.
	connWaiters []*h2Stream
	writerGone  bool // the writer has returned: nothing queued is written any more
	iov         net.Buffers
	enc         h2.Encoder
	streams     h2.ServerStreams
	table       map[uint32]*h2Stream
	recent      []uint32 // streams in StateResetLocal, oldest first
	connIn      h2.Inflow
	connOut     h2.Window
	peerWindow  uint32 // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame   uint32 // the client's SETTINGS_MAX_FRAME_SIZE
	closed      bool   // the connection is over: nothing more is written
	goAway      bool   // GOAWAY sent: no new streams
	fatal       bool   // a connection error: close once the writer has flushed
	readStop    bool   // going away and every handler has returned: stop reading
	running     int    // handlers that have not returned
	// The connection's handler goroutines, reused from stream to stream
	// (see startLocked).
	work              chan *h2Stream
	workers, assigned int
	dataSent          uint64        // DATA frames queued, for the reader's tiny-WINDOW_UPDATE credit
	idleAt            time.Time     // when the last handler returned with no stream open; zero while busy
	trimmed           bool          // trimIdle ran in this idle spell
	trimCh            chan struct{} // closed by trimIdle: idle workers end
	kick              chan struct{}
	writerDone        chan struct{}
	// Scratch for encoding a head, response header maps and native
	// streams to reuse.
	block, num, lname []byte
	headers           []http.Header
	free              []*h2Stream
	// Streams whose response is complete while the client still sends
	// (§8.1: the server MAY reset them with NO_ERROR). The reset waits
	// until the reader has read once more, so that frames the client
	// sent before it saw the response are judged on the stream first.
	noErrQueued, noErrReady []h2StreamRef
}

// serveNativeH2 serves an HTTP/2 connection on the calling goroutine
// until it ends. pending holds bytes already read from nc (the preface,
// or part of it, for h2c). state, if not nil, reports the connection's
// ConnState: active while a stream's handler runs, idle between, closed
// at the end, as net/http's HTTP/2 server reports them.
func (s *Server) serveNativeH2(nc net.Conn, pending []byte, tlsState *tls.ConnectionState, base context.Context, state func(ConnState)) {
	sc := &h2Conn{
		srv:        s,
		nc:         nc,
		base:       base,
		remote:     nc.RemoteAddr().String(),
		tlsState:   tlsState,
		rbuf:       h2TakeReadBuf(len(pending)),
		table:      make(map[uint32]*h2Stream),
		connOut:    h2.ConnWindow(h2.DefaultInitialWindowSize),
		peerWindow: h2.DefaultInitialWindowSize,
		peerFrame:  h2.DefaultMaxFrameSize,
		kick:       make(chan struct{}, 1),
		work:       make(chan *h2Stream, h2MaxIdleWorkers),
		trimCh:     make(chan struct{}),
		state:      state,
		writerDone: make(chan struct{}),
	}
	sc.w = copy(sc.rbuf, pending)
	sc.cond = sync.NewCond(&sc.mu)
	maxList := s.cfg.limits.MaxHeaderBytes
	if maxList <= 0 {
		maxList = h2.DefaultMaxHeaderListSize
	}
	sc.dec.MaxHeaderListSize = maxList
	// One field a little over the list limit is answered with 431, not a
	// connection error: a literal may be as long as a whole block.
	sc.dec.MaxStringLength = 2 * maxList
	sc.asm.MaxBlockSize = 2 * maxList
	sc.connIn.Init(h2.DefaultInitialWindowSize, false)
	sc.streams.MaxConcurrent = s.cfg.h2Streams
	if !s.registerH2(sc) {
		nc.Close()
		if state != nil {
			state(StateClosed) // Shutdown came during the TLS handshake
		}
		return
	}
	defer s.unregisterH2(sc)
	if state != nil {
		// As net/http's HTTP/2 server: active, then idle until a stream
		// comes (httptest rejects new -> idle).
		defer state(StateClosed)
		state(StateActive)
		sc.reportState()
	}

	// The server's preface: its SETTINGS, and a larger connection window.
	sc.mu.Lock()
	sc.wbuf = h2.AppendSettings(sc.wbuf,
		h2.Setting{ID: h2.SettingMaxConcurrentStreams, Val: s.cfg.h2Streams},
		h2.Setting{ID: h2.SettingInitialWindowSize, Val: s.cfg.h2StreamWindow},
		h2.Setting{ID: h2.SettingMaxHeaderListSize, Val: uint32(maxList)},
	)
	if inc := sc.connIn.Grow(s.cfg.h2ConnWindow); inc > 0 {
		sc.wbuf = h2.AppendWindowUpdate(sc.wbuf, 0, inc)
	}
	sc.mu.Unlock()
	sc.settingsSent = time.Now()
	go sc.writeLoop()
	sc.kickWriter()

	err := sc.readLoop()
	var he *h2.Error
	if errors.As(err, &he) && !he.Stream {
		sc.connError(he)
	}
	sc.shutdownConn()
	sc.releaseReadBuf() // the reader is done with it
}

// h2ReadBufs holds read buffers: an idle connection gives its buffer back
// (releaseReadBuf) and waits for its next byte without one.
var h2ReadBufs = sync.Pool{New: func() any { return new([h2ReadBuffer]byte) }}

// h2TakeReadBuf returns a read buffer with room for at least n bytes.
func h2TakeReadBuf(n int) []byte {
	if n > h2ReadBuffer {
		return make([]byte, n)
	}
	return h2ReadBufs.Get().(*[h2ReadBuffer]byte)[:]
}

// releaseReadBuf gives the read buffer back when it holds nothing unread
// (the reader's own).
func (sc *h2Conn) releaseReadBuf() {
	if sc.r != sc.w || sc.rbuf == nil {
		return
	}
	// What still points into the buffer: the last header block and
	// the request fields checked from it.
	sc.asm.Forget()
	sc.val.Reset(false)
	if len(sc.rbuf) == h2ReadBuffer {
		h2ReadBufs.Put((*[h2ReadBuffer]byte)(sc.rbuf))
	}
	sc.rbuf, sc.r, sc.w = nil, 0, 0
	sc.noReadBuf.Store(true)
}

// read reads into the read buffer. An idle connection that gave its
// buffer back waits for one byte, then takes a buffer again.
func (sc *h2Conn) read() (int, error) {
	if sc.rbuf == nil {
		n, err := sc.nc.Read(sc.one[:])
		if n == 0 {
			return 0, err
		}
		sc.rbuf = h2TakeReadBuf(0)
		sc.noReadBuf.Store(false)
		sc.rbuf[0] = sc.one[0]
		sc.w = 1
		return 1, nil
	}
	n, err := sc.nc.Read(sc.rbuf[sc.w:])
	sc.w += n
	return n, err
}

// h2Err returns err as an *h2.Error, or nil. (A variable errors.As
// writes to is moved to the heap: here only errors that are not an
// *h2.Error themselves pay for it.)
func h2Err(err error) *h2.Error {
	if err == nil {
		return nil
	}
	if he, ok := err.(*h2.Error); ok {
		return he
	}
	var he *h2.Error
	if errors.As(err, &he) {
		return he
	}
	return nil
}

// readLoop reads and handles frames until the connection fails or ends.
func (sc *h2Conn) readLoop() error {
	if err := sc.readPreface(); err != nil {
		return err
	}
	for {
		f, n, err := h2.ReadFrame(sc.rbuf[sc.r:sc.w], h2.DefaultMaxFrameSize)
		if err == h2.ErrNeedMore {
			if err := sc.fill(); err != nil {
				return err
			}
			continue
		}
		ferr := h2Err(err)
		if err != nil && (ferr == nil || !ferr.Stream) {
			return err
		}
		sc.r += n
		if f.Type == h2.FrameHeaders && sc.workersBusy() {
			// Let the workers finish what they run before this request
			// needs one: on one core the reader would otherwise start
			// every request of a batch before any handler ran, and so a
			// goroutine for each.
			runtime.Gosched()
		}
		if err := sc.handleFrame(&f, ferr); err != nil {
			return err
		}
		if f.Type == h2.FrameHeaders && sc.state != nil {
			sc.reportState()
		}
		if sc.r == sc.w {
			sc.r, sc.w = 0, 0
		}
	}
}

// fill reads more bytes, making room for a whole frame first.
func (sc *h2Conn) fill() error {
	sc.mu.Lock()
	for _, ref := range sc.noErrReady {
		if st := ref.st; st.id == ref.id && st.state == h2.StateHalfClosedLocal {
			sc.resetLocked(st.id, h2.ErrCodeNo)
		}
	}
	clear(sc.noErrReady)
	sc.noErrReady, sc.noErrQueued = sc.noErrQueued, sc.noErrReady[:0]
	if sc.readStop {
		sc.mu.Unlock()
		return io.EOF
	}
	// Until the preface is in, ReadHeaderTimeout; while nothing is in
	// progress, h2IdleTrim (to give back what the connection holds) then
	// IdleTimeout, both from when it became idle; else no deadline
	// (streams have their stall timers); and until the client
	// acknowledges the server's SETTINGS, no later than ReadHeaderTimeout
	// after they went out. Set under mu, so that maybeDoneLocked's wins.
	var dl, ackDue time.Time
	rht := sc.srv.cfg.readHeaderTimeout
	idleTrimmed := false
	switch {
	case !sc.gotPref:
		if rht > 0 {
			dl = time.Now().Add(rht)
		}
	case sc.running == 0 && sc.streams.Active() == 0:
		dl = sc.idleDeadlineLocked()
		idleTrimmed = sc.trimmed
	}
	if !sc.settingsAcked && rht > 0 {
		ackDue = sc.settingsSent.Add(rht)
		if dl.IsZero() || ackDue.Before(dl) {
			dl = ackDue
		}
	}
	if len(sc.noErrReady) > 0 {
		// Their resets are due after this read, even if nothing comes.
		if t := time.Now().Add(h2NoErrWait); dl.IsZero() || t.Before(dl) {
			dl = t
		}
	}
	sc.nc.SetReadDeadline(dl)
	sc.mu.Unlock()
	if idleTrimmed {
		// A frame (a PING, say) woke a connection idle past its trim:
		// it waits without a buffer again.
		sc.releaseReadBuf()
	}
	if sc.r > 0 && (sc.w == len(sc.rbuf) || sc.r == sc.w) {
		sc.w = copy(sc.rbuf, sc.rbuf[sc.r:sc.w])
		sc.r = 0
	}
	if sc.rbuf != nil && sc.w == len(sc.rbuf) { // a frame larger than the buffer
		nb := make([]byte, 2*len(sc.rbuf))
		copy(nb, sc.rbuf[:sc.w])
		sc.rbuf = nb
	}
	n, err := sc.read()
	if n > 0 {
		return nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		if !ackDue.IsZero() && !time.Now().Before(ackDue) {
			return errH2SettingsAck
		}
		if !sc.gotPref {
			return err // ReadHeaderTimeout, before the preface was in
		}
		sc.mu.Lock()
		idleFor := time.Duration(-1)
		if sc.running == 0 && sc.streams.Active() == 0 && !sc.idleAt.IsZero() {
			idleFor = time.Since(sc.idleAt)
		}
		trimmed := sc.trimmed
		sc.mu.Unlock()
		if idleFor >= 0 {
			// IdleTimeout counts from the last stream, whatever the
			// client sent since: part of a frame, PINGs, SETTINGS.
			if d := sc.srv.cfg.idleTimeout; d > 0 && idleFor >= d {
				return errH2Idle
			}
			if !trimmed && idleFor >= h2IdleTrim {
				// The trim runs even with part of a frame buffered
				// (all but the read buffer, which keeps those
				// bytes), so that the next deadline is IdleTimeout's
				// and not this one again.
				sc.trimIdle()
				sc.releaseReadBuf()
			}
		}
		// Read on, under the next deadline, which fill arms anew: one
		// that has passed is never armed again as it is (a read that
		// fails at once, in a loop that reads nothing).
		return nil
	}
	return err
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

// idleDeadlineLocked is when an idle connection's reader must look up:
// to trim (h2IdleTrim into the idle spell), then to close (IdleTimeout).
func (sc *h2Conn) idleDeadlineLocked() time.Time {
	if sc.idleAt.IsZero() {
		sc.idleAt = time.Now()
	}
	var dl time.Time
	if d := sc.srv.cfg.idleTimeout; d > 0 {
		dl = sc.idleAt.Add(d)
	}
	if t := sc.idleAt.Add(h2IdleTrim); !sc.trimmed && (dl.IsZero() || t.Before(dl)) {
		dl = t
	}
	return dl
}

// trimIdle gives back what an idle connection holds for the next burst:
// its recycled native streams, its idle handler goroutines (and their
// stacks), and a write buffer grown by a big response.
func (sc *h2Conn) trimIdle() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.trimmed = true
	clear(sc.free)
	sc.free = nil
	close(sc.trimCh) // idle workers end
	sc.trimCh = make(chan struct{})
	sc.dropBigWriteBufsLocked()
}

// dropBigWriteBufsLocked lets go of write buffers a burst grew past
// h2KeepWriteBuffer, as soon as the connection has nothing in progress:
// kept until the idle trim, a burst of big responses over many new
// connections held them all for a second.
func (sc *h2Conn) dropBigWriteBufsLocked() {
	if cap(sc.spare) > h2KeepWriteBuffer {
		sc.spare = nil
	}
	if len(sc.wbuf) == 0 && cap(sc.wbuf) > h2KeepWriteBuffer {
		sc.wbuf = nil
	}
}

// h2KeepWriteBuffer is how big a write buffer an idle connection keeps.
const h2KeepWriteBuffer = 16 << 10

// becameIdleLocked runs when the last handler returns with no stream
// open: the idle spell starts, and the reader, maybe blocked in a read
// armed with no deadline, gets the idle deadlines.
func (sc *h2Conn) becameIdleLocked() {
	sc.idleAt = time.Now()
	sc.dropBigWriteBufsLocked()
	if !sc.goAway && !sc.closed {
		sc.nc.SetReadDeadline(sc.idleDeadlineLocked())
	}
}

// busyAgainLocked runs when a stream starts: the idle spell is over.
func (sc *h2Conn) busyAgainLocked() {
	sc.idleAt = time.Time{}
	sc.trimmed = false
}

func (sc *h2Conn) readPreface() error {
	for sc.w-sc.r < len(h2.ClientPreface) {
		if err := sc.fill(); err != nil {
			return err
		}
	}
	if string(sc.rbuf[sc.r:sc.r+len(h2.ClientPreface)]) != h2.ClientPreface {
		return errH2Preface
	}
	sc.r += len(h2.ClientPreface)
	return nil
}

// handleFrame acts on one frame. ferr is a stream error ReadFrame found
// in it. A returned error ends the connection.
func (sc *h2Conn) handleFrame(f *h2.Frame, ferr *h2.Error) error {
	if !sc.gotPref {
		if f.Type != h2.FrameSettings || f.Flags.Has(h2.FlagAck) {
			return errH2Preface
		}
		sc.gotPref = true
	}
	if ferr == nil {
		if err := sc.countIdle(f); err != nil {
			return err
		}
	}
	st, err := sc.asm.Add(f)
	if err != nil {
		return err
	}
	sc.mu.Lock()
	flood := len(sc.wbuf) > h2MaxQueued
	sc.mu.Unlock()
	if flood {
		return errH2Flood
	}
	switch st {
	case h2.BlockOpen:
		return nil
	case h2.BlockDone:
		return sc.handleBlock(sc.asm.Block(), ferr)
	}
	if ferr != nil {
		sc.mu.Lock()
		sc.resetLocked(f.StreamID, ferr.Code)
		sc.mu.Unlock()
		return sc.resets.Count(time.Now()) // each one calls for an answer
	}
	switch f.Type {
	case h2.FrameSettings:
		return sc.handleSettings(f)
	case h2.FramePing:
		if !f.Flags.Has(h2.FlagAck) {
			sc.mu.Lock()
			sc.wbuf = h2.AppendPing(sc.wbuf, h2.FlagAck, f.PingData())
			sc.mu.Unlock()
			sc.kickWriter()
		}
		return nil
	case h2.FrameGoAway:
		return nil // the client sends no more streams; those open finish
	case h2.FrameWindowUpdate:
		if f.StreamID == 0 {
			sc.mu.Lock()
			err := sc.connOut.Add(f.Increment())
			if sc.connOut.Available() > 0 {
				sc.wakeConnWaitersLocked()
			}
			sc.mu.Unlock()
			return err
		}
	case h2.FrameData, h2.FrameRSTStream, h2.FramePriority:
	default:
		return nil // unknown types are ignored (§4.1, §5.5)
	}
	return sc.handleStreamFrame(f)
}

// countIdle counts the frames that carry no request (h2.FloodCounter):
// those h2.Idle lists, and WINDOW_UPDATEs below h2.MinWindowUpdate past
// the credit the server's DATA frames gave.
func (sc *h2Conn) countIdle(f *h2.Frame) error {
	if f.Type != h2.FrameWindowUpdate || f.Increment() >= h2.MinWindowUpdate {
		return sc.floods.Count(f, time.Now)
	}
	sc.mu.Lock()
	sent := sc.dataSent
	sc.mu.Unlock()
	sc.tinyUpdateOK = int(min(uint64(sc.tinyUpdateOK)+2*(sent-sc.dataSeen), 1<<10))
	sc.dataSeen = sent
	if sc.tinyUpdateOK > 0 {
		sc.tinyUpdateOK--
		return nil
	}
	return sc.floods.Add(time.Now())
}

// handleSettings applies the client's settings and acknowledges them.
func (sc *h2Conn) handleSettings(f *h2.Frame) error {
	if f.Flags.Has(h2.FlagAck) {
		sc.settingsAcked = true // nothing this server advertises waits for it
		return nil
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for i := range f.NumSettings() {
		s := f.Setting(i)
		switch s.ID {
		case h2.SettingHeaderTableSize:
			sc.enc.SetMaxTableSize(s.Val)
		case h2.SettingInitialWindowSize:
			for _, st := range sc.table {
				if err := st.out.ApplyInitialSize(sc.peerWindow, s.Val); err != nil {
					return err
				}
				if s.Val > sc.peerWindow {
					st.wake.Broadcast()
				}
			}
			sc.peerWindow = s.Val
		case h2.SettingMaxFrameSize:
			sc.peerFrame = s.Val
		}
	}
	sc.wbuf = h2.AppendSettingsAck(sc.wbuf)
	sc.kickWriter()
	return nil
}

// handleStreamFrame handles DATA, RST_STREAM, PRIORITY and WINDOW_UPDATE
// on a stream, after the stream's state has judged the frame.
func (sc *h2Conn) handleStreamFrame(f *h2.Frame) error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	id := f.StreamID
	if f.Type == h2.FrameData {
		// DATA counts against the connection's window whatever becomes
		// of it (§6.9).
		if err := sc.connIn.Receive(f.Length); err != nil {
			return err
		}
	}
	st := sc.table[id]
	var next h2.StreamState
	var err error
	if st != nil {
		next, err = st.state.Recv(f.Type, f.Flags)
	} else {
		next, err = sc.streams.RecvUntracked(id, f.Type, f.Flags)
	}
	he := h2Err(err)
	if err != nil && (he == nil || !he.Stream) {
		return err
	}
	if f.Type == h2.FrameData && (he != nil || st == nil) {
		sc.releaseConnLocked(f.Length) // dropped
	}
	if he != nil {
		if st == nil || st.state != h2.StateResetLocal {
			sc.resetLocked(id, he.Code)
		}
		return nil
	}
	if st == nil {
		return nil // PRIORITY on an idle stream, or a frame on a forgotten one
	}
	wasActive := st.state.Active()
	st.state = next
	switch f.Type {
	case h2.FrameData:
		if err := st.receiveData(f); err != nil {
			sc.resetLocked(id, err.Code)
			return nil
		}
	case h2.FrameRSTStream:
		st.peerReset()
		sc.streamClosedLocked(st)
		if !wasActive {
			return nil
		}
		return sc.resets.Count(time.Now())
	case h2.FrameWindowUpdate:
		if err := st.out.Add(f.Increment()); err != nil {
			sc.resetLocked(id, err.(*h2.Error).Code)
			return nil
		}
		st.wake.Broadcast()
	}
	if !next.Active() {
		sc.streamClosedLocked(st)
	}
	return nil
}

// handleBlock handles a complete HEADERS block: a new request, or a
// request's trailers.
func (sc *h2Conn) handleBlock(blk h2.HeaderBlock, ferr *h2.Error) error {
	id := blk.Start.StreamID
	if blk.Start.Type == h2.FramePushPromise {
		return h2.ErrClientPushPromise
	}
	sc.mu.Lock()
	st := sc.table[id]
	var next h2.StreamState
	var serr error
	if st != nil {
		next, serr = st.state.Recv(blk.Start.Type, blk.Start.Flags)
	} else {
		next, serr = sc.streams.RecvUntracked(id, blk.Start.Type, blk.Start.Flags)
	}
	goingAway := sc.goAway
	sc.mu.Unlock()
	he := h2Err(serr)
	if serr != nil && (he == nil || !he.Stream) {
		return serr
	}
	admitted := st == nil && serr == nil // counts toward the limit until Done

	// Decode the block whatever becomes of the stream, to keep the HPACK
	// table in step (§4.3).
	trailers := st != nil
	sc.val.Reset(trailers)
	sc.fields.reset()
	var verr error
	err := sc.dec.Decode(blk.Fragment, func(f h2.Field) {
		if verr != nil {
			return
		}
		if err := sc.val.Field(f); err != nil {
			verr = err
			return
		}
		if len(f.Name) > 0 && f.Name[0] == ':' {
			return
		}
		sc.fields.add(f)
	})
	if err != nil && !errors.Is(err, h2.ErrHeaderListTooLarge) {
		return err // a connection error: the table is lost
	}
	if err == nil {
		err = verr
	}
	if err == nil {
		err = sc.val.End()
	}
	if err == nil && !trailers && blk.Start.Flags.Has(h2.FlagEndStream) {
		// A request that ends with its header block has no body: a
		// content-length above 0 is malformed (§8.1.1).
		err = h2.CheckContentLength(sc.val.ContentLength, 0, true)
	}
	if ferr != nil && err == nil {
		err = ferr
	}

	sc.mu.Lock()
	defer sc.mu.Unlock()
	if st == nil {
		// A new stream, even one refused or answered without a
		// handler, is activity: the idle spell starts over.
		sc.busyAgainLocked()
	}
	if he != nil {
		if st == nil || st.state != h2.StateResetLocal {
			sc.resetLocked(id, he.Code)
		}
		return nil
	}
	if err != nil && admitted && ferr == nil && errors.Is(err, h2.ErrHeaderListTooLarge) {
		// Over MaxHeaderBytes: answer 431, as HTTP/1.1 and the hand-off
		// do, rather than a bare reset (§10.5.1 allows either).
		sc.streams.Done()
		sc.answerLocked(id, 431, blk.Start.Flags.Has(h2.FlagEndStream))
		return sc.resets.Count(time.Now())
	}
	if err != nil {
		code := h2.ErrCodeProtocol
		if he := h2Err(err); he != nil {
			code = he.Code
		}
		if admitted {
			sc.streams.Done()
		}
		if st != nil {
			sc.resetLocked(id, code)
		} else {
			sc.appendResetLocked(id, code)
		}
		return sc.resets.Count(time.Now())
	}
	if st != nil { // trailers
		st.state = next
		if st.nx != nil {
			st.endBody() // the native API has no request trailers
		} else if sc.fields.count-1 > sc.srv.cfg.limits.MaxHeaders {
			// Too many trailer fields: the body read fails, as the
			// HTTP/1.1 engine's does (wire.ErrTooManyTrailers).
			st.endBody()
			if st.bodyErr == nil {
				st.bodyErr = wire.ErrTooManyTrailers
			}
		} else {
			st.trailers(sc.fields.header(nil, sc.fields.values()))
		}
		if !next.Active() {
			sc.streamClosedLocked(st)
		}
		return nil
	}
	if goingAway {
		sc.streams.Done()
		sc.appendResetLocked(id, h2.ErrCodeRefusedStream)
		return nil
	}
	if sc.srv.Native != nil {
		st = sc.newNativeStream(id, next, blk.Start.Flags.Has(h2.FlagEndStream))
	} else {
		st = sc.newStream(id, next)
		if err := sc.newRequest(st, blk.Start.Flags.Has(h2.FlagEndStream)); err != nil {
			delete(sc.table, id)
			sc.streams.Done()
			sc.appendResetLocked(id, h2.ErrCodeProtocol)
			return nil
		}
	}
	if !next.Active() {
		sc.streamClosedLocked(st)
	}
	sc.running++
	sc.startLocked(st)
	if id == h2.MaxStreamID || sc.srv.noKeepAlives.Load() {
		// No stream can follow this one (§5.1.1), or keep-alives are
		// off (SetKeepAlivesEnabled): say so, and close once it is
		// done rather than idle until IdleTimeout.
		sc.goAwayLocked()
	}
	return nil
}

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
	go sc.worker(st)
}

// reportState tells ConnState whether a handler runs (active) or none
// does (idle). It reads the truth each time, under stateMu, so that
// reports racing each other still end on the right state (the
// connection's setState skips repeats).
func (sc *h2Conn) reportState() {
	sc.stateMu.Lock()
	defer sc.stateMu.Unlock()
	sc.mu.Lock()
	busy := sc.running > 0
	sc.mu.Unlock()
	if busy {
		sc.state(StateActive)
	} else {
		sc.state(StateIdle)
	}
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
func (sc *h2Conn) worker(st *h2Stream) {
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
			return
		}
		trim := sc.trimCh
		sc.mu.Unlock()
		if st = sc.nextStream(trim); st == nil {
			return
		}
	}
}

// nextStream waits for the worker's next stream; nil when the worker is
// to end (the connection is over, or idle long enough to trim), in which
// case it is no longer counted.
func (sc *h2Conn) nextStream(trim chan struct{}) *h2Stream {
	select {
	case st, ok := <-sc.work:
		if ok {
			return st
		}
	case <-trim:
		sc.mu.Lock()
		defer sc.mu.Unlock()
		select {
		case st, ok := <-sc.work: // queued while the worker was told to go
			if ok {
				return st
			}
		default:
		}
		sc.workers--
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

// newRequest builds the stream's request from the validated header
// block, in the stream's own memory where it can: the URL, the context,
// the body and the header values; the Request and its Header map are
// the two allocations of their own.
func (sc *h2Conn) newRequest(st *h2Stream, ended bool) error {
	v := &sc.val
	var r http.Request
	r.Method = methodString(v.Method)
	path := cachedBytes(&sc.lastPath, v.Path)
	host := cachedBytes(&sc.lastHost, v.Authority)
	if r.Method == http.MethodConnect {
		st.url = url.URL{Host: host}
		r.URL = &st.url
		path = ""
	} else {
		u, err := parseURL(&st.url, r.Method, path)
		if err != nil {
			return err
		}
		r.URL = u
	}
	r.Proto, r.ProtoMajor = "HTTP/2.0", 2
	st.isHead = r.Method == http.MethodHead
	r.Header = sc.fields.header(st.vals[:], cachedBytes(&sc.lastValues, sc.fields.vals))
	st.fieldCount = sc.fields.count
	if host == "" {
		host = r.Header.Get("Host")
	}
	r.Host = host
	r.RemoteAddr = sc.remote
	r.RequestURI = path
	r.TLS = sc.tlsState
	if ended {
		r.Body = http.NoBody
		st.bodyEnd = true
	} else {
		r.ContentLength = -1
		if v.ContentLength >= 0 {
			r.ContentLength = v.ContentLength
		}
		st.body.st = st
		r.Body = &st.body
		st.expect100 = strings.EqualFold(r.Header.Get("Expect"), "100-continue")
	}
	if tr := r.Header["Trailer"]; len(tr) > 0 {
		r.Trailer = make(http.Header)
		for _, line := range tr {
			for k := range strings.SplitSeq(line, ",") {
				if k = strings.TrimSpace(k); k != "" {
					r.Trailer[http.CanonicalHeaderKey(k)] = nil
				}
			}
		}
		delete(r.Header, "Trailer")
	}
	st.req = r.WithContext(&st.ctx)
	return nil
}

// cachedBytes returns b as a string, reusing *last when it holds the
// same bytes.
func cachedBytes(last *string, b []byte) string {
	if string(b) == *last {
		return *last
	}
	*last = string(b)
	return *last
}

// h2Fields gathers a header block's regular fields as it is decoded
// (the decoder's bytes live only until the next field): canonical
// names, and the values back to back in one buffer, reused from block
// to block.
type h2Fields struct {
	names   []byte // lowercase, back to back
	nends   []int  // end of each name in names
	vals    []byte
	ends    []int // end of each value in vals
	cookies int   // cookie fields among them
	count   int   // fields as HTTP/1.1 would count them: one per field, plus Host
}

func (f *h2Fields) reset() {
	f.names, f.nends, f.vals, f.ends = f.names[:0], f.nends[:0], f.vals[:0], f.ends[:0]
	f.cookies = 0
	f.count = 1
}

func (f *h2Fields) add(fl h2.Field) {
	f.count++
	switch string(fl.Name) {
	case "cookie":
		f.cookies++
	case "trailer":
		// Each name it declares counts, as on HTTP/1.1 (wire.Request).
		if k := wire.ListLen(fl.Value); k > 1 {
			f.count += k - 1
		}
	}
	f.names = append(f.names, fl.Name...)
	f.nends = append(f.nends, len(f.names))
	f.vals = append(f.vals, fl.Value...)
	f.ends = append(f.ends, len(f.vals))
}

// field returns the i-th field's name and the bounds of its value.
func (f *h2Fields) field(i int) (name []byte, start, end int) {
	ns, vs := 0, 0
	if i > 0 {
		ns, vs = f.nends[i-1], f.ends[i-1]
	}
	return f.names[ns:f.nends[i]], vs, f.ends[i]
}

// values returns the values as one string.
func (f *h2Fields) values() string { return string(f.vals) }

// header builds the Header map, slicing the values from all (the
// values as one string) and backing one-value fields with backing.
// Cookie fields are joined into one, for HTTP/1.1 semantics (§8.2.3).
func (f *h2Fields) header(backing []string, all string) http.Header {
	hdr := make(http.Header, len(f.ends)-f.cookies+min(f.cookies, 1))
	var cookies []string
	for i := range f.ends {
		name, start, end := f.field(i)
		v := all[start:end]
		if string(name) == "cookie" {
			cookies = append(cookies, v)
			continue
		}
		k := canonicalKey(name)
		if prev, ok := hdr[k]; ok {
			hdr[k] = append(prev, v)
			continue
		}
		if i < len(backing) {
			backing[i] = v
			hdr[k] = backing[i : i+1 : i+1]
		} else {
			hdr[k] = []string{v}
		}
	}
	if len(cookies) > 0 {
		hdr["Cookie"] = []string{strings.Join(cookies, "; ")}
	}
	return hdr
}

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

func (sc *h2Conn) appendResetLocked(id uint32, code h2.ErrCode) {
	if sc.closed {
		return
	}
	sc.wbuf = h2.AppendRSTStream(sc.wbuf, id, code)
	sc.kickWriter()
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
// returned, whichever comes last. A stream the client resets keeps its
// place while its handler runs, as net/http's do: were it freed at the
// reset, a client opening and resetting streams in a loop (Rapid Reset,
// CVE-2023-44487) would have the server run any number of handlers that
// do not watch their context. With every place taken, a new stream is
// refused (REFUSED_STREAM, which clients retry), so a connection runs at
// most MAX_CONCURRENT_STREAMS (250) handlers at once.
func (sc *h2Conn) releaseSlotLocked(st *h2Stream) {
	if st.counted || st.state.Active() || !st.handlerDone {
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
	for _, st := range sc.table {
		st.wake.Broadcast()
	}
	sc.wakeConnWaitersLocked()
	sc.wakeRoomWaitersLocked()
	sc.cond.Broadcast()
}

// queuedLocked reports whether frames wait for the writer.
func (sc *h2Conn) queuedLocked() bool { return len(sc.wbuf) > 0 }

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

func (sc *h2Conn) kickWriter() {
	select {
	case sc.kick <- struct{}{}:
	default:
	}
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
// connection closes.
func (sc *h2Conn) writeLoop() {
	defer close(sc.writerDone)
	defer func() {
		sc.mu.Lock()
		sc.writerGone = true
		sc.wakeAllLocked()
		sc.mu.Unlock()
	}()
	for range sc.kick {
		// Let the goroutines that can run (handlers finishing their
		// responses, the reader answering the rest of a batch) queue
		// their frames first: one write then carries them all.
		runtime.Gosched()
		sc.mu.Lock()
		stop := sc.closed || sc.fatal
		if !sc.queuedLocked() {
			// A kick with nothing to write (its frames went out in
			// the previous batch): nobody is woken, so no one kicks
			// back for nothing.
			sc.mu.Unlock()
			if stop {
				return
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
			sc.closed = true
			sc.written = sc.taken
			sc.wakeAllLocked()
			sc.mu.Unlock()
			sc.nc.Close()
			return
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
		if len(sc.wbuf) == 0 && stop {
			sc.mu.Unlock()
			return
		}
		if len(sc.wbuf) > 0 {
			sc.kickWriter()
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

// connError queues GOAWAY with the error's code (§5.4.1).
func (sc *h2Conn) connError(he *h2.Error) {
	sc.mu.Lock()
	if !sc.closed {
		sc.wbuf = h2.AppendGoAway(sc.wbuf, sc.streams.Last(), he.Code, []byte(he.Reason))
		sc.goAway = true
		sc.fatal = true
	}
	sc.mu.Unlock()
	sc.kickWriter()
}

// shutdownConn ends the connection: flush what is queued, fail every
// stream, close the socket.
func (sc *h2Conn) shutdownConn() {
	close(sc.work) // no stream starts after the read loop: idle workers end
	sc.mu.Lock()
	sc.fatal = true
	sc.mu.Unlock()
	sc.kickWriter()
	select {
	case <-sc.writerDone:
	case <-time.After(time.Second):
	}
	sc.mu.Lock()
	sc.closed = true
	for _, st := range sc.table {
		st.connGone()
	}
	sc.wakeAllLocked()
	sc.mu.Unlock()
	// Let the client read the GOAWAY before the socket goes: close our
	// side for writing and drain a little of what it still sends.
	if cw, ok := sc.nc.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		sc.nc.SetReadDeadline(time.Now().Add(time.Second))
		io.CopyN(io.Discard, sc.nc, 1<<20)
	}
	sc.nc.Close()
}

// gracefulShutdown sends GOAWAY (NO_ERROR) with the last stream the
// connection took, lets the streams it has finish, and closes.
func (sc *h2Conn) gracefulShutdown() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.goAwayLocked()
}

// goAwayLocked sends GOAWAY (NO_ERROR) and lets the streams taken so far
// finish, once.
func (sc *h2Conn) goAwayLocked() {
	if sc.goAway || sc.closed {
		return
	}
	sc.goAway = true
	sc.wbuf = h2.AppendGoAway(sc.wbuf, sc.streams.Last(), h2.ErrCodeNo, nil)
	sc.kickWriter()
	sc.maybeDoneLocked()
}

// maybeDoneLocked closes a connection that is going away once its last
// handler has returned, which ends the read loop.
func (sc *h2Conn) maybeDoneLocked() {
	if !sc.goAway || sc.fatal || sc.running > 0 {
		return
	}
	sc.readStop = true
	sc.nc.SetReadDeadline(aLongTimeAgo)
}

// registerH2 and unregisterH2 keep the native connections for Shutdown
// and Close.
func (s *Server) registerH2(sc *h2Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return false
	}
	if s.h2native == nil {
		s.h2native = make(map[*h2Conn]struct{})
	}
	s.h2native[sc] = struct{}{}
	s.h2nativeWG.Add(1)
	return true
}

func (s *Server) unregisterH2(sc *h2Conn) {
	s.mu.Lock()
	delete(s.h2native, sc)
	s.mu.Unlock()
	s.h2nativeWG.Done()
}

// shutdownNativeH2 sends GOAWAY on every native connection and waits for
// them to end, or closes them at once when now is set or ctx ends.
func (s *Server) shutdownNativeH2(ctx context.Context, now bool) error {
	s.mu.Lock()
	conns := make([]*h2Conn, 0, len(s.h2native))
	for sc := range s.h2native {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		if now {
			sc.nc.Close()
		} else {
			sc.gracefulShutdown()
		}
	}
	done := make(chan struct{})
	go func() { s.h2nativeWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
