package h2

import "time"

// The life of a stream (RFC 9113 §5.1), seen from a server. The figure in
// §5.1 has seven states; a server that never pushes needs five of them,
// plus one to remember that it reset the stream itself:
//
//	                    idle
//	                     | recv HEADERS
//	                     v
//	 send END_STREAM  +------+  recv END_STREAM
//	   +--------------| open |---------------+
//	   v              +------+               v
//	half-closed (local)     |     half-closed (remote)
//	   | recv END_STREAM    | RST_STREAM     | send END_STREAM
//	   +--------------> closed <-------------+
//
// The reserved states belong to server push: a stream becomes "reserved"
// only through PUSH_PROMISE. This server never sends PUSH_PROMISE, and a
// client must not (§8.4: a connection error PROTOCOL_ERROR), so neither
// reserved state can occur.

// StreamState is a stream's state (§5.1) on a server that does not push.
type StreamState uint8

const (
	// StateIdle: the client has not used the stream yet; every stream
	// starts here. Only HEADERS (which opens it) and PRIORITY may arrive.
	StateIdle StreamState = iota
	// StateOpen: both sides may send frames.
	StateOpen
	// StateHalfClosedLocal: the server has sent END_STREAM; the client
	// may still send its request body.
	StateHalfClosedLocal
	// StateHalfClosedRemote: the client has sent END_STREAM (the request
	// is whole); the server still sends its response.
	StateHalfClosedRemote
	// StateClosed: both sides sent END_STREAM, or the client reset the
	// stream, or the stream is older than the connection remembers.
	StateClosed
	// StateResetLocal: closed because the server sent RST_STREAM. The
	// client may have frames for the stream in flight, which the server
	// must discard without error (§5.1 "closed"); a connection keeps the
	// stream in this state for a while (until the client's next new
	// stream, or a few round trips) and then forgets it.
	StateResetLocal
)

var streamStateNames = [...]string{
	StateIdle:             "idle",
	StateOpen:             "open",
	StateHalfClosedLocal:  "half-closed (local)",
	StateHalfClosedRemote: "half-closed (remote)",
	StateClosed:           "closed",
	StateResetLocal:       "closed (reset by server)",
}

// String returns the state's name as §5.1 spells it.
func (s StreamState) String() string {
	if int(s) < len(streamStateNames) {
		return streamStateNames[s]
	}
	return "invalid"
}

// Active reports whether the stream counts toward
// SETTINGS_MAX_CONCURRENT_STREAMS: open or half-closed (§5.1.2).
func (s StreamState) Active() bool {
	return s == StateOpen || s == StateHalfClosedLocal || s == StateHalfClosedRemote
}

// Stream state errors.
var (
	ErrIdleStreamFrame     = connError(ErrCodeProtocol, "frame other than HEADERS or PRIORITY on an idle stream (§5.1)")
	ErrClientPushPromise   = connError(ErrCodeProtocol, "PUSH_PROMISE from a client (§8.4)")
	ErrTrailersNoEndStream = streamError(ErrCodeProtocol, "second HEADERS on a stream without END_STREAM: trailers must end the stream (§8.1)")
	ErrHalfClosedRemote    = streamError(ErrCodeStreamClosed, "DATA or HEADERS on a stream the client half-closed with END_STREAM (§5.1)")
	ErrClosedStreamData    = streamError(ErrCodeStreamClosed, "DATA on a closed stream (§5.1, §6.1)")
	ErrClosedStreamHeaders = connError(ErrCodeStreamClosed, "HEADERS on a closed stream (§5.1)")
	ErrEvenStreamID        = connError(ErrCodeProtocol, "client opened a stream with an even identifier (§5.1.1)")
	ErrStreamIDOrder       = connError(ErrCodeProtocol, "client opened a stream with an identifier not above every stream it used before (§5.1.1)")
	ErrRefusedStream       = streamError(ErrCodeRefusedStream, "new stream past SETTINGS_MAX_CONCURRENT_STREAMS (§5.1.2)")
	ErrRapidReset          = connError(ErrCodeEnhanceYourCalm, "client reset more streams than the server allows per period (rapid reset, CVE-2023-44487)")
)

// Recv returns the state a stream moves to when the server receives a
// frame of type t with flags on it, or the error the frame is.
//
// For a field block, call Recv once with its HEADERS frame's type and
// flags (the Assembler's HeaderBlock.Start) when the block is whole; a
// CONTINUATION frame leaves the state as it is (the [Assembler] has
// judged its order). Frames of the connection (SETTINGS, PING, GOAWAY)
// and of unknown types (§5.5) leave it as it is too.
//
// Whatever Recv answers, the caller still does the minimal processing
// §5.1 requires of every frame it discards: decoding a HEADERS block, so
// the HPACK table stays in step, and counting DATA against the
// connection's flow-control window.
func (s StreamState) Recv(t FrameType, flags Flags) (StreamState, error) {
	if t == FramePushPromise {
		return s, ErrClientPushPromise // §8.4, whatever the stream
	}
	if t == FramePriority || t > FrameContinuation || t == FrameSettings || t == FramePing || t == FrameGoAway {
		return s, nil // PRIORITY in any state (§5.1, §6.3); unknown (§5.5); not stream frames
	}
	end := flags.Has(FlagEndStream) && (t == FrameData || t == FrameHeaders)
	switch s {
	case StateIdle:
		if t == FrameHeaders {
			if end {
				return StateHalfClosedRemote, nil
			}
			return StateOpen, nil
		}
		return s, ErrIdleStreamFrame
	case StateOpen, StateHalfClosedLocal:
		switch t {
		case FrameRSTStream:
			return StateClosed, nil
		case FrameHeaders:
			if !end {
				return s, ErrTrailersNoEndStream
			}
		}
		if !end {
			return s, nil // DATA, WINDOW_UPDATE, CONTINUATION
		}
		if s == StateOpen {
			return StateHalfClosedRemote, nil
		}
		return StateClosed, nil
	case StateHalfClosedRemote:
		switch t {
		case FrameRSTStream:
			return StateClosed, nil
		case FrameData, FrameHeaders:
			return s, ErrHalfClosedRemote
		}
		return s, nil // WINDOW_UPDATE: the client's credit for the response
	case StateClosed:
		switch t {
		case FrameData:
			return s, ErrClosedStreamData
		case FrameHeaders:
			return s, ErrClosedStreamHeaders
		}
		// WINDOW_UPDATE and RST_STREAM may cross the frame that closed
		// the stream (§5.1): ignored.
		return s, nil
	case StateResetLocal:
		return s, nil // discarded (§5.1)
	}
	return s, nil
}

// Send returns the state a stream moves to when the server sends a frame
// of type t with flags on it; ok is false if the server must not send
// that frame in state s (a bug in the connection, not the peer's fault).
//
// The server sends HEADERS and DATA while the stream is open or
// half-closed (remote), and END_STREAM half-closes or closes it.
// RST_STREAM closes any stream past idle, including a closed one (the
// answer to a stream error on it), and moves it to StateResetLocal, where
// the frames the client had in flight are discarded. WINDOW_UPDATE goes
// on streams that are not idle or closed; PRIORITY on any; PUSH_PROMISE
// on none (this server does not push).
func (s StreamState) Send(t FrameType, flags Flags) (next StreamState, ok bool) {
	switch t {
	case FrameHeaders, FrameData:
		end := flags.Has(FlagEndStream)
		switch s {
		case StateOpen:
			if end {
				return StateHalfClosedLocal, true
			}
			return s, true
		case StateHalfClosedRemote:
			if end {
				return StateClosed, true
			}
			return s, true
		}
		return s, false
	case FrameRSTStream:
		if s == StateIdle || s == StateResetLocal {
			return s, false
		}
		return StateResetLocal, true
	case FrameWindowUpdate:
		return s, s.Active()
	case FramePushPromise:
		return s, false
	case FrameContinuation:
		// It follows the stream's HEADERS, which was judged.
		return s, s != StateIdle
	}
	return s, true
}

// DefaultMaxConcurrentStreams is ServerStreams' default limit: the value
// net/http's HTTP/2 server advertises, so that clients see the same.
const DefaultMaxConcurrentStreams = 250

// ServerStreams keeps what a server knows of the client's stream
// identifiers (§5.1.1) and how many streams are active (§5.1.2). The
// connection keeps a table of the streams it holds state for (active
// ones, and recently closed ones for a while); ServerStreams answers for
// all the others, which are idle or closed by their identifier alone:
//
//	var next h2.StreamState
//	if st, held := table[id]; held {
//		next, err = st.Recv(t, flags)
//	} else {
//		next, err = streams.RecvUntracked(id, t, flags)
//	}
//	// ... and streams.Done() when an active stream closes.
//
// The zero ServerStreams allows DefaultMaxConcurrentStreams.
type ServerStreams struct {
	// MaxConcurrent is the SETTINGS_MAX_CONCURRENT_STREAMS the server
	// advertised. 0 means DefaultMaxConcurrentStreams; to accept no new
	// streams, send GOAWAY.
	MaxConcurrent uint32

	last   uint32 // the highest stream identifier the client has opened
	active uint32
}

// Last returns the highest stream identifier the client has opened (or
// tried to, refused streams included): the last-stream-ID of a GOAWAY
// (§6.8).
func (s *ServerStreams) Last() uint32 { return s.last }

// Active returns how many admitted streams have not been marked Done.
func (s *ServerStreams) Active() uint32 { return s.active }

// Untracked returns the state of a stream the connection holds no state
// for: idle when the client has not used its identifier (every even
// identifier is idle: a server that does not push never opens streams),
// closed when it is odd and not above Last (§5.1.1: using a new
// identifier closes every idle stream below it).
func (s *ServerStreams) Untracked(id uint32) StreamState {
	if id%2 == 0 || id > s.last {
		return StateIdle
	}
	return StateClosed
}

// Open admits a new stream, when a HEADERS frame arrives for an
// identifier the connection holds no state for. The identifier must be
// odd (else ErrEvenStreamID) and above every one before it (else
// ErrStreamIDOrder), both connection errors (§5.1.1). Past MaxConcurrent
// active streams it is ErrRefusedStream, a stream error: the client may
// retry the request (§5.1.2, §8.7); the identifier is used up all the
// same, and the block must still be decoded.
func (s *ServerStreams) Open(id uint32) error {
	if id%2 == 0 {
		return ErrEvenStreamID
	}
	if id <= s.last {
		return ErrStreamIDOrder
	}
	s.last = id
	limit := s.MaxConcurrent
	if limit == 0 {
		limit = DefaultMaxConcurrentStreams
	}
	if s.active >= limit {
		return ErrRefusedStream
	}
	s.active++
	return nil
}

// Done marks an admitted stream closed: it stops counting toward
// MaxConcurrent. Call it once per successful Open, when the stream leaves
// the active states.
func (s *ServerStreams) Done() {
	if s.active == 0 {
		panic("h2: ServerStreams.Done without an open stream")
	}
	s.active--
}

// RecvUntracked is Recv for a stream the connection holds no state for:
// a HEADERS frame opens it (Open's rules and errors), any other frame
// meets the state Untracked reports. On success with HEADERS the stream is
// admitted and the returned state is open or half-closed (remote).
func (s *ServerStreams) RecvUntracked(id uint32, t FrameType, flags Flags) (StreamState, error) {
	if t == FrameHeaders {
		if err := s.Open(id); err != nil {
			return StateIdle, err
		}
		return StateIdle.Recv(t, flags)
	}
	return s.Untracked(id).Recv(t, flags)
}

// MaxStreamID is the largest stream identifier (31 bits, §5.1.1): a
// connection whose client has used it can take no more streams.
const MaxStreamID = 1<<31 - 1

// Defaults for ResetCounter.
const (
	DefaultMaxResets   = 1000
	DefaultResetPeriod = 10 * time.Second
)

// ResetCounter bounds rapid reset (CVE-2023-44487): a client that opens
// streams and resets them at once never has many streams active, so the
// concurrency limit does not stop it, yet each stream costs the server a
// request's work. The server counts the streams the client cancels (an
// RST_STREAM on an active stream) and, if it likes, the stream errors it
// answers a client's malformed requests with; past Max in one Period the
// connection ends with ENHANCE_YOUR_CALM.
//
// The count restarts each Period (a fixed window, so up to twice Max may
// pass across a window's edge). The defaults, 1,000 per 10 seconds, are
// far above what browsers and RPC clients cancel, and far below what an
// attack needs. The caller passes the time, so tests need no clock.
type ResetCounter struct {
	Max    int           // resets allowed per Period; 0 means DefaultMaxResets
	Period time.Duration // 0 means DefaultResetPeriod

	start time.Time
	n     int
}

// Count records one reset at now and returns ErrRapidReset once the
// period's count passes Max.
func (c *ResetCounter) Count(now time.Time) error {
	if countInWindow(&c.start, &c.n, now, c.Max, DefaultMaxResets, c.Period, DefaultResetPeriod) {
		return ErrRapidReset
	}
	return nil
}

// countInWindow counts one event at now in a fixed window of period
// (restarted when it has passed or the clock stepped back) and reports
// whether the window's count is past limit. Zero limit and period take
// the defaults given.
func countInWindow(start *time.Time, n *int, now time.Time, limit, defLimit int, period, defPeriod time.Duration) bool {
	if limit <= 0 {
		limit = defLimit
	}
	if period <= 0 {
		period = defPeriod
	}
	if start.IsZero() || now.Sub(*start) >= period || now.Before(*start) {
		*start, *n = now, 0
	}
	*n++
	return *n > limit
}

// Defaults for FloodCounter.
const (
	DefaultMaxIdleFrames   = 1000
	DefaultIdleFramePeriod = 10 * time.Second
)

// ErrFrameFlood is the connection error FloodCounter returns.
var ErrFrameFlood = connError(ErrCodeEnhanceYourCalm, "client sent more frames that carry no request than the server allows per period (PING, SETTINGS, PRIORITY, empty DATA or tiny WINDOW_UPDATE flood: CVE-2019-9512, -9515, -9516, -9518)")

// FloodCounter bounds the frames a client can send in any number that
// cost the server work yet move no request forward: PING and SETTINGS
// (each calls for an answer), PRIORITY, DATA that is empty without
// ending its stream ([Idle] lists them), and whatever else the caller
// judges idle with Add (a tiny WINDOW_UPDATE that gives back no window
// the server used: see MinWindowUpdate). The write queue's cap stops a
// client that sends such frames without reading the answers; this stops
// one that reads them, which otherwise holds a core with frames of 9 to
// 17 bytes. Past Max idle frames in one Period the connection ends with
// ENHANCE_YOUR_CALM.
//
// The defaults, 1,000 per 10 seconds, are far above what browsers and
// RPC clients send (a few SETTINGS and PRIORITY frames when a
// connection starts, a keep-alive PING every few seconds at most).
type FloodCounter struct {
	Max    int           // idle frames allowed per Period; 0 means DefaultMaxIdleFrames
	Period time.Duration // 0 means DefaultIdleFramePeriod

	start time.Time
	n     int
}

// MinWindowUpdate is the WINDOW_UPDATE increment below which a server
// may count the frame as idle when it sent no DATA since the client's
// previous one: clients batch their updates far above it, and a client
// that gives back each small DATA frame at once does so only after
// receiving one.
const MinWindowUpdate = 1 << 10

// Idle reports whether a frame is one FloodCounter.Count counts: it
// carries no request and asks the server for work.
func Idle(f *Frame) bool {
	switch f.Type {
	case FramePing, FrameSettings:
		return !f.Flags.Has(FlagAck)
	case FramePriority:
		return true
	case FrameData:
		return len(f.Data()) == 0 && !f.Flags.Has(FlagEndStream)
	}
	return false
}

// Count looks at one frame received at now and returns ErrFrameFlood
// once the period's idle frames pass Max. Frames that are not [Idle]
// cost nothing (not even the clock: now is called only for idle ones).
func (c *FloodCounter) Count(f *Frame, now func() time.Time) error {
	if !Idle(f) {
		return nil
	}
	return c.Add(now())
}

// Add counts one frame the caller judged idle, received at now.
func (c *FloodCounter) Add(now time.Time) error {
	if countInWindow(&c.start, &c.n, now, c.Max, DefaultMaxIdleFrames, c.Period, DefaultIdleFramePeriod) {
		return ErrFrameFlood
	}
	return nil
}
