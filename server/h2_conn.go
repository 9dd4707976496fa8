package server

// HTTP/2 engine: the connection (h2Conn), its limits and life: start,
// idle time, end. GOAWAY and Shutdown are in h2_shutdown.go, reading in
// h2_read.go, parking in h2_park.go, requests in h2_request.go, handlers
// in h2_workers.go, writing in h2_write.go.

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The HTTP/2 engine's connection: how a Server serves HTTP/2 unless
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

const (
	// h2MaxWriteBuffer is how much may wait in the write buffer before
	// handlers writing DATA wait for the writer to catch up.
	h2MaxWriteBuffer = 256 << 10
	// h2ReadBuffer is the big read buffer: room for several frames of
	// the default maximum size. h2SmallReadBuffer is the one a
	// connection starts with (h2_read.go).
	h2ReadBuffer      = 64 << 10
	h2SmallReadBuffer = 8 << 10
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
	errH2ResetFlood   = &h2.Error{Code: h2.ErrCodeEnhanceYourCalm, Reason: "the server reset more than 100 of this connection's streams in 10 s (frames that are stream errors, refused streams: MadeYouReset, CVE-2025-8671)"}
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

// h2Conn is one HTTP/2 server connection of hotpath's engine. What it needs while
// busy is in h2Busy, which an idle connection with nothing in progress
// lets go while it is parked (h2_park.go): the rest is what the
// connection is between requests.
type h2Conn struct {
	srv      *Server
	nc       net.Conn
	base     context.Context
	remote   string
	tlsState *tls.ConnectionState
	state    func(ConnState) // nil: nobody listens
	stateMu  sync.Mutex      // reports in the order of the changes

	// The reader's own state.
	rbuf      []byte      // nil while an idle or quiet connection waits without one
	noReadBuf atomic.Bool // rbuf is nil (for tests: the reader alone touches rbuf)
	quiet     sweptWait   // a read with streams open, as the Server's sweep knows it (h2_quiet.go)
	one       [1]byte     // what a connection waiting without rbuf reads into
	readFull  bool        // the last read filled rbuf: the next fill takes a big one
	gotPref   bool        // the client's first SETTINGS frame has arrived
	// The server's SETTINGS went out at settingsSent; the client's ACK
	// is due within ReadHeaderTimeout (§6.5.3).
	settingsAcked bool
	r, w          int
	dec           h2.Decoder
	resets        h2.ResetCounter // the client's resets (Rapid Reset)
	// The server's RST_STREAMs with an error code (h2MaxSentResets);
	// sentFlood is set, under mu, when they pass the budget, and the
	// reader ends the connection.
	sentResets h2.ResetCounter
	sentFlood  atomic.Bool
	floods     h2.FloodCounter
	// Tiny WINDOW_UPDATEs the client may send without counting as a
	// flood: two (the stream's and the connection's) per DATA frame the
	// server sent, as a client that gives back each frame at once does.
	dataSeen     uint64
	tinyUpdateOK int
	settingsSent time.Time

	// Shared state, under mu.
	mu sync.Mutex
	// The busy state; nil while the connection is parked without it
	// (detachBusyLocked).
	*h2Busy
	// The writer left while the connection idles (parkWriterLocked);
	// kicked: a kick came since the writer last looked at the queue.
	// Both atomic: kickWriter is called with and without mu.
	writerParked atomic.Bool
	kicked       atomic.Bool
	enc          h2.Encoder
	streams      h2.ServerStreams
	connIn       h2.Inflow
	connOut      h2.Window
	peerWindow   uint32 // the client's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame    uint32 // the client's SETTINGS_MAX_FRAME_SIZE
	closed       bool   // the connection is over: nothing more is written
	goAway       bool   // GOAWAY sent: no new streams
	fatal        bool   // a connection error: close once the writer has flushed
	readStop     bool   // going away and every handler has returned: stop reading
	opening      bool   // handleBlock admitted a stream and has not started it yet
	writerGone   bool   // the writer has returned: nothing queued is written any more
	trimmed      bool   // trimIdle ran in this idle spell
	running      int    // handlers that have not returned
	// orphans is how many of them the server's ledger holds for client:
	// those running when the connection closed (closeLocked).
	orphans int
	client  clientKey
	// The connection's handler goroutines (see startLocked).
	workers, assigned int
	dataSent          uint64    // DATA frames queued, for the reader's tiny-WINDOW_UPDATE credit
	idleAt            time.Time // when the last handler returned with no stream open; zero while busy
	kick              chan struct{}

	// Parking (h2_park.go): the reader's, but for parked and registered
	// (the set's mutex) and noPark.
	pset       *park.Set       // where the connection parks; nil: it never does
	parked     park.State      // its place in pset while parked
	registered bool            // the socket was added to pset's epoll instance
	parkDL     time.Time       // when the set wakes it: its idle deadline
	raw        syscall.RawConn // the socket it parks on, once looked up
	noPark     atomic.Bool     // going away or closed: it parks no more
	parkFailed bool            // a park failed in this idle spell: wait on the goroutine
	woke       bool            // resumed: its next read waits on the goroutine
	readerIdle bool            // under mu: the reader is parking or parked
}

// h2Busy is what a connection holds only while it has work: its reader's
// scratch, its write queue, its streams and its handler goroutines. Each
// field is at its zero value, or holds no more than scratch, whenever the
// connection is idle with nothing queued, so that a parked connection
// lets the whole record go and takes a fresh one when it wakes. What
// must last the connection's life (the assembler's block limit, whether
// extended CONNECT is allowed) is set again in attachBusyLocked.
type h2Busy struct {
	// The reader's.
	asm    h2.Assembler
	val    h2.RequestValidator
	fields h2Fields // the block being decoded
	// The last strings made for a request's path, authority and header
	// values: a client repeating itself (most do) costs no allocation.
	strs requestStrings // the previous request's strings, reused when the bytes match
	// Streams whose response is complete while the client still sends
	// (§8.1: the server MAY reset them with NO_ERROR). The reset waits
	// until the reader has read once more, so that frames the client
	// sent before it saw the response are judged on the stream first.
	noErrQueued, noErrReady []h2StreamRef

	// Under mu.
	cond  sync.Cond // on mu: the writer's progress, for waitWritten
	wbuf  []byte
	spare []byte
	// DATA payloads queued by reference rather than copied into wbuf
	// (a mapped file's pages, see h2_file_linux.go), each to be written
	// right after wbuf[:at]; the writer's batches are counted so that
	// their owner knows when the writer is done with them.
	wrefs      []h2Ref
	refSpare   []h2Ref
	refBytes   int    // payload bytes in wrefs
	taken      uint64 // write batches the writer took
	written    uint64 // write batches the writer is done with
	refWaiters int    // goroutines in waitWritten
	mapped     int    // streams sending from a mapped file (takeMapSlot)
	// noErrOut is the write batch that carries the last NO_ERROR resets
	// (resetNoErrLocked) while it is not written, 0 after: until then
	// ConnState hears StateActive. Set only when it is listened to.
	noErrOut uint64
	// roomWaiters are the streams waiting for room in the write buffer:
	// the writer wakes them (each on its own cond) when it takes the
	// buffer.
	roomWaiters []*h2Stream
	// connWaiters are the streams waiting for the connection's send
	// window: a WINDOW_UPDATE on stream 0 wakes them (each on its own
	// cond), and no one else.
	connWaiters []*h2Stream
	iov         net.Buffers
	table       map[uint32]*h2Stream
	recent      []uint32 // streams in StateResetLocal, oldest first
	// The last h2RecentRefused streams refused (0: none), a ring whose
	// next slot is refusedNext.
	refused     [h2RecentRefused]uint32
	refusedNext int
	// The connection's handler goroutines' queue (see startLocked), and
	// what trimIdle closes to end the idle ones.
	work   chan *h2Stream
	trimCh chan struct{}
	// Scratch for encoding a head, response header maps and native
	// streams to reuse.
	block, num, lname []byte
	headers           []http.Header
	free              []*h2Stream
}

// serveH2 serves an HTTP/2 connection on the calling goroutine
// until it ends or parks (h2_park.go: then a resumer goroutine goes on,
// and ends it). pending holds bytes already read from nc (the preface,
// or part of it, for h2c). state, if not nil, reports the connection's
// ConnState: active while a stream's handler runs, idle between, closed
// at the end, as net/http's HTTP/2 server reports them.
func (s *Server) serveH2(nc net.Conn, pending []byte, tlsState *tls.ConnectionState, base context.Context, state func(ConnState)) {
	sc := &h2Conn{
		srv:        s,
		nc:         nc,
		base:       base,
		remote:     nc.RemoteAddr().String(),
		client:     clientKeyOf(nc.RemoteAddr()),
		tlsState:   tlsState,
		rbuf:       h2TakeReadBuf(len(pending)),
		connOut:    h2.ConnWindow(h2.DefaultInitialWindowSize),
		peerWindow: h2.DefaultInitialWindowSize,
		peerFrame:  h2.DefaultMaxFrameSize,
		kick:       make(chan struct{}, 1),
		state:      state,
	}
	sc.w = copy(sc.rbuf, pending)
	maxList := s.h2MaxHeaderList()
	sc.dec.MaxHeaderListSize = maxList
	// One field a little over the list limit is answered with 431, not a
	// connection error: a literal may be as long as a whole block.
	sc.dec.MaxStringLength = 2 * maxList
	sc.attachBusyLocked() // no one else has the connection yet
	sc.connIn.Init(h2.DefaultInitialWindowSize, false)
	sc.streams.MaxConcurrent = s.cfg.h2Streams
	sc.sentResets = h2.ResetCounter{Max: h2MaxSentResets, Period: h2SentResetPeriod}
	sc.initPark()
	ok, late := s.registerH2(sc)
	if !ok {
		nc.Close()
		if state != nil {
			state(StateClosed) // Close came during the TLS handshake
		}
		return
	}
	if late {
		time.AfterFunc(shutdownQuiet, sc.gracefulShutdown)
	}
	if state != nil {
		// As net/http's HTTP/2 server: active, then idle until a stream
		// comes (httptest rejects new -> idle).
		state(StateActive)
		sc.reportState()
	}

	// The server's preface: its SETTINGS, and a larger connection window.
	sc.mu.Lock()
	settings := [4]h2.Setting{
		{ID: h2.SettingMaxConcurrentStreams, Val: s.cfg.h2Streams},
		{ID: h2.SettingInitialWindowSize, Val: s.cfg.h2StreamWindow},
		{ID: h2.SettingMaxHeaderListSize, Val: uint32(maxList)},
		{ID: h2.SettingEnableConnectProtocol, Val: 1}, // RFC 8441
	}
	n := 3
	if s.cfg.extendedConnect {
		n = 4 // and the busy state's validator allows it (attachBusyLocked)
	}
	sc.wbuf = h2.AppendSettings(sc.wbuf, settings[:n]...)
	if inc := sc.connIn.Grow(s.cfg.h2ConnWindow); inc > 0 {
		sc.wbuf = h2.AppendWindowUpdate(sc.wbuf, 0, inc)
	}
	sc.mu.Unlock()
	sc.settingsSent = time.Now()
	go sc.writeLoop()
	sc.kickWriter()
	sc.ended(sc.readLoop())
}

// h2MaxHeaderList is the largest header list an HTTP/2 connection of the engine
// takes: MaxHeaderBytes, or h2's default.
func (s *Server) h2MaxHeaderList() int {
	if n := s.cfg.limits.MaxHeaderBytes; n > 0 {
		return n
	}
	return h2.DefaultMaxHeaderListSize
}

// waitWriterGone waits until the writer has returned for good (it
// broadcasts on cond as it goes), or for d at most.
func (sc *h2Conn) waitWriterGone(d time.Duration) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.writerGone {
		return
	}
	late := false
	t := time.AfterFunc(d, func() {
		sc.mu.Lock()
		late = true
		sc.cond.Broadcast()
		sc.mu.Unlock()
	})
	for !sc.writerGone && !late {
		sc.cond.Wait()
	}
	t.Stop()
}

// ended ends the connection once its reader is done with err, unless it
// parked (errH2Parked): then the reader that resumes it ends it.
func (sc *h2Conn) ended(err error) {
	if err == errH2Parked {
		return
	}
	var he *h2.Error
	if errors.As(err, &he) && !he.Stream {
		sc.connError(he)
	}
	sc.shutdownConn()
	sc.releaseReadBuf() // the reader is done with it
	sc.quiet.leave()
	if sc.state != nil {
		// After any report a worker is making (reportState holds
		// stateMu): closed is the last word.
		sc.stateMu.Lock()
		sc.state(StateClosed)
		sc.stateMu.Unlock()
	}
	sc.srv.unregisterH2(sc)
}

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
	sc.parkFailed = false // the reader's (this runs on it): it may try again
}

// reportState tells ConnState whether a handler runs (active) or none
// does (idle). It reads the truth each time, under stateMu, so that
// reports racing each other still end on the right state (the
// connection's setState skips repeats).
func (sc *h2Conn) reportState() {
	sc.stateMu.Lock()
	defer sc.stateMu.Unlock()
	sc.mu.Lock()
	// A stream whose response is complete while the client still sends
	// is open until its reset (queueNoErrLocked), as net/http's are
	// until theirs: a ConnState hook that closes idle connections
	// (httptest.Server.Close does) would otherwise close this one before
	// the reset tells the client to keep its body, and Go's client,
	// seeing the stream ended by the response, sends the body anyway
	// after ExpectContinueTimeout.
	busy := sc.running > 0 || sc.h2Busy != nil && (len(sc.noErrQueued)+len(sc.noErrReady) > 0 || sc.noErrOut != 0)
	sc.mu.Unlock()
	if busy {
		sc.state(StateActive)
	} else {
		sc.state(StateIdle)
	}
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
	sc.mu.Lock()
	if sc.h2Busy != nil {
		// Streams whose response is complete are reset now rather
		// than never: the client learns to keep their bodies.
		sc.resetNoErrLocked(sc.noErrReady)
		sc.resetNoErrLocked(sc.noErrQueued)
	}
	if sc.work != nil {
		close(sc.work) // no stream starts after the read loop: idle workers end
	}
	sc.fatal = true
	sc.mu.Unlock()
	sc.kickWriter()
	sc.waitWriterGone(time.Second)
	sc.mu.Lock()
	sc.closeLocked()
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
