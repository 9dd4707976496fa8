package h2

// The client half of a connection's state: what a client knows of its
// own streams' identifiers and of the server's SETTINGS. The HTTP/2
// client (package client) and the load generator (package load) both
// keep one [ClientStreams] and one [PeerSettings] per connection, each
// under its own lock and in its own goroutine model; their stream tables
// (a map, an open-addressing table) stay theirs and are reached through
// the stream identifiers these answer for, and through a list of the
// streams' send windows when SETTINGS change them.

// Client stream errors.
var (
	// ErrUnopenedStream: a frame other than PRIORITY on a stream the
	// client has not opened (§5.1 "idle"; a server never opens one, as
	// the client disables push, §8.4).
	ErrUnopenedStream = connError(ErrCodeProtocol, "frame on a stream the client has not opened (§5.1, §5.1.1)")
	// ErrServerPreface: the server's first frame is not SETTINGS (§3.4).
	ErrServerPreface = connError(ErrCodeProtocol, "the server's connection preface is not a SETTINGS frame (§3.4)")
	// ErrServerEnablePush: the server's SETTINGS set SETTINGS_ENABLE_PUSH
	// to 1, which only a client may (§6.5.2).
	ErrServerEnablePush = connError(ErrCodeProtocol, "the server's SETTINGS set SETTINGS_ENABLE_PUSH to 1 (§6.5.2)")
)

// ClientStreams keeps a client's stream identifiers (§5.1.1: odd, each
// above the last), how many of its streams are active against the
// server's SETTINGS_MAX_CONCURRENT_STREAMS (§5.1.2), and the GOAWAY that
// stops new ones (§6.8). A stream slot is reserved first (Reserve),
// without an identifier, so that a request can wait for room and fail
// cleanly before any frame is written; Open gives the reserved slot its
// identifier when the HEADERS are queued, and Done gives the slot back
// when the stream closes or the reservation is dropped.
//
// The zero ClientStreams starts at stream 1.
type ClientStreams struct {
	next     uint32 // the next identifier; 0 means 1
	active   uint32 // reserved or open
	reserved uint32 // reserved, not opened yet
	goAway   bool
	last     uint32 // the lowest last-stream-ID of the GOAWAYs received
	cleared  bool   // Clear was called: the connection failed
}

// StartAt makes id (odd) the next stream's identifier: a test of the
// identifier space's end, which no real connection reaches in a test's
// time. Call it before the first Open.
func (s *ClientStreams) StartAt(id uint32) {
	if id%2 == 0 || s.next > 1 {
		panic("h2: ClientStreams.StartAt with an even identifier or after Open")
	}
	s.next = id
}

func (s *ClientStreams) nextID() uint32 { return max(s.next, 1) }

// Active returns how many streams are reserved or open.
func (s *ClientStreams) Active() uint32 { return s.active }

// Spent reports that no identifier is left for one more stream beside
// those reserved: the connection can take no new stream (§5.1.1).
func (s *ClientStreams) Spent() bool {
	return uint64(s.nextID())+2*uint64(s.reserved) > MaxStreamID
}

// Reserve takes a slot for a new stream if one is free: fewer than limit
// (the server's [PeerSettings].MaxConcurrentStreams) active, no GOAWAY
// received and an identifier left for it. Open or Done(0) must follow.
func (s *ClientStreams) Reserve(limit uint32) bool {
	if s.cleared || s.goAway || s.active >= limit || s.Spent() {
		return false
	}
	s.active++
	s.reserved++
	return true
}

// Open returns the identifier of a new stream, for a slot Reserve took.
func (s *ClientStreams) Open() uint32 {
	switch {
	case s.reserved > 0:
		s.reserved--
	case !s.cleared: // after Clear, a holder of a forgotten slot may still open it
		panic("h2: ClientStreams.Open without a reserved slot")
	}
	id := s.nextID()
	s.next = id + 2
	return id
}

// Done gives a slot back: of the stream id when it closes (both ends done,
// or reset), or of a reservation that never opened when id is 0.
func (s *ClientStreams) Done(id uint32) {
	if s.cleared {
		return // Clear let every slot go already
	}
	if s.active == 0 || id == 0 && s.reserved == 0 {
		panic("h2: ClientStreams.Done without a reserved or open stream")
	}
	s.active--
	if id == 0 {
		s.reserved--
	}
}

// Clear forgets every slot: the connection has failed, and its streams
// and reservations with it. After it Reserve takes nothing, and the
// holders of slots it forgot may still Open or be Done with them.
func (s *ClientStreams) Clear() { s.active, s.reserved, s.cleared = 0, 0, true }

// Untracked returns the state of a stream the connection holds no state
// for: idle when the client has not opened it (every even identifier is
// idle: the server cannot push, §8.4), closed when it has (the stream
// ended and was forgotten; its late frames are discarded, §5.1).
func (s *ClientStreams) Untracked(id uint32) StreamState {
	if id%2 == 0 || id >= s.nextID() {
		return StateIdle
	}
	return StateClosed
}

// RecvUntracked judges a frame of type t for a stream the connection
// holds no state for: on a stream the client has not opened, DATA,
// HEADERS, RST_STREAM and WINDOW_UPDATE are the connection error
// ErrUnopenedStream (§5.1); otherwise the frame is discarded (nil).
// (A HEADERS block must still be decoded, to keep the HPACK table in
// step, before it is discarded.)
func (s *ClientStreams) RecvUntracked(id uint32, t FrameType) error {
	switch t {
	case FrameData, FrameHeaders, FrameRSTStream, FrameWindowUpdate:
		if s.Untracked(id) == StateIdle {
			return ErrUnopenedStream
		}
	}
	return nil
}

// GoAway records a GOAWAY with its last-stream-ID (§6.8): no new stream
// may be reserved, and the streams above the last one were not processed
// (Unprocessed) and may be sent again elsewhere. A later GOAWAY may only
// lower the last stream (a server must not raise it): the lowest counts,
// and is returned.
func (s *ClientStreams) GoAway(last uint32) uint32 {
	if !s.goAway || last < s.last {
		s.last = last
	}
	s.goAway = true
	return s.last
}

// GoingAway reports whether a GOAWAY was received.
func (s *ClientStreams) GoingAway() bool { return s.goAway }

// Unprocessed reports whether a GOAWAY said stream id was not processed
// (§6.8: above its last-stream-ID): its request may be retried on
// another connection.
func (s *ClientStreams) Unprocessed(id uint32) bool { return s.goAway && id > s.last }

// PeerSettings is the server's SETTINGS as the client applies them
// (§6.5.2), starting at their initial values.
type PeerSettings struct {
	// HeaderTableSize is the HPACK table the server's decoder keeps for
	// the client's blocks: the client's encoder may use up to that.
	HeaderTableSize uint32
	// InitialWindowSize is each new stream's send window.
	InitialWindowSize uint32
	// MaxFrameSize is the largest frame payload the client may send.
	MaxFrameSize uint32
	// MaxHeaderListSize is the largest header list the server accepts
	// (§6.5.2: advisory); 0 when it set none.
	MaxHeaderListSize uint32
	// MaxConcurrentStreams is how many streams the client may have
	// active (§5.1.2): the client's assumption until the server's first
	// SETTINGS, then its SETTINGS_MAX_CONCURRENT_STREAMS.
	MaxConcurrentStreams uint32

	noLimit  uint32
	received bool
}

// NewPeerSettings returns the settings a client assumes before the
// server's first SETTINGS: the initial values of §6.5.2, with before as
// MaxConcurrentStreams (0: open no stream until the server's SETTINGS
// arrive). noLimit is MaxConcurrentStreams when the server's first
// SETTINGS set none: the RFC's "no limit", which a client may cap (as
// net/http caps it at 1000); 0 means 2^32-1.
func NewPeerSettings(before, noLimit uint32) PeerSettings {
	if noLimit == 0 {
		noLimit = 1<<32 - 1
	}
	return PeerSettings{
		HeaderTableSize:      DefaultMaxTableSize,
		InitialWindowSize:    DefaultInitialWindowSize,
		MaxFrameSize:         DefaultMaxFrameSize,
		MaxConcurrentStreams: before,
		noLimit:              noLimit,
	}
}

// Received reports whether the server's first SETTINGS have arrived.
func (p *PeerSettings) Received() bool { return p.received }

// CheckPreface checks that a frame the client has read is allowed before
// the server's first SETTINGS: the server's connection preface is a
// SETTINGS frame, without ACK (§3.4), so any other frame first is
// ErrServerPreface. Once SETTINGS have come, every frame passes.
func (p *PeerSettings) CheckPreface(f *Frame) error {
	if p.received || f.Type == FrameSettings && !f.Flags.Has(FlagAck) {
		return nil
	}
	return ErrServerPreface
}

// Apply applies a SETTINGS frame from the server, in one place, before
// the client acknowledges it (§6.5.3); an ACK changes nothing.
//
//   - SETTINGS_INITIAL_WINDOW_SIZE re-bases every send window in
//     sendWindows (those of the streams the connection holds, §6.9.2;
//     a slice the caller reuses, so that a SETTINGS frame costs no
//     allocation) by the change,
//     which may leave them negative; a window it would take past 2^31-1
//     is ErrInitialWindowOverflow, a connection error, and then nothing
//     in the frame is applied. The connection's window does not change.
//   - SETTINGS_HEADER_TABLE_SIZE goes to enc, the connection's encoder,
//     which announces the new size in its next block (RFC 7541 §4.2). A
//     nil enc is a client whose blocks use no dynamic table (which every
//     size holds): it is recorded only.
//   - SETTINGS_MAX_CONCURRENT_STREAMS, MAX_FRAME_SIZE and
//     MAX_HEADER_LIST_SIZE are recorded for the client to hold to;
//     MaxConcurrentStreams becomes NewPeerSettings' noLimit when the
//     server's first SETTINGS do not set it.
//   - SETTINGS_ENABLE_PUSH 1 is ErrServerEnablePush, a connection error
//     (§6.5.2), and nothing in the frame is applied.
//
// ReadFrame has checked the values' ranges (Setting.Valid).
func (p *PeerSettings) Apply(f *Frame, enc *Encoder, sendWindows []*Window) error {
	if f.Type != FrameSettings || f.Flags.Has(FlagAck) {
		return nil
	}
	win := p.InitialWindowSize
	for i := range f.NumSettings() {
		switch st := f.Setting(i); {
		case st.ID == SettingInitialWindowSize:
			win = st.Val
		case st.ID == SettingEnablePush && st.Val != 0:
			return ErrServerEnablePush
		}
	}
	if win != p.InitialWindowSize {
		// All or nothing: check every window, then move them.
		delta := int64(win) - int64(p.InitialWindowSize)
		for _, w := range sendWindows {
			if w.stream && w.avail+delta > MaxWindowSize {
				return ErrInitialWindowOverflow
			}
		}
		for _, w := range sendWindows {
			w.ApplyInitialSize(p.InitialWindowSize, win)
		}
	}
	p.InitialWindowSize = win
	if !p.received {
		p.received = true
		p.MaxConcurrentStreams = p.noLimit
	}
	for i := range f.NumSettings() {
		st := f.Setting(i)
		switch st.ID {
		case SettingHeaderTableSize:
			p.HeaderTableSize = st.Val
			if enc != nil {
				enc.SetMaxTableSize(st.Val)
			}
		case SettingMaxConcurrentStreams:
			p.MaxConcurrentStreams = st.Val
		case SettingMaxFrameSize:
			p.MaxFrameSize = st.Val
		case SettingMaxHeaderListSize:
			p.MaxHeaderListSize = st.Val
		}
	}
	return nil
}
