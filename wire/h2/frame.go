package h2

import "encoding/binary"

// ClientPreface is the connection preface a client sends before its first
// frame (RFC 9113 §3.4). A server reads these 24 bytes, then a SETTINGS
// frame.
const ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// FrameHeaderLen is the size of a frame header (RFC 9113 §4.1).
const FrameHeaderLen = 9

// Frame size limits (RFC 9113 §4.2, §6.5.2): every endpoint accepts frames
// of DefaultMaxFrameSize; SETTINGS_MAX_FRAME_SIZE may raise that up to
// MaxFrameSizeLimit, the largest 24-bit length.
const (
	DefaultMaxFrameSize = 1 << 14
	MaxFrameSizeLimit   = 1<<24 - 1
)

// FrameType is a frame's type (RFC 9113 §6, §11.2).
type FrameType uint8

// The frame types of RFC 9113 §6.
const (
	FrameData         FrameType = 0x0
	FrameHeaders      FrameType = 0x1
	FramePriority     FrameType = 0x2
	FrameRSTStream    FrameType = 0x3
	FrameSettings     FrameType = 0x4
	FramePushPromise  FrameType = 0x5
	FramePing         FrameType = 0x6
	FrameGoAway       FrameType = 0x7
	FrameWindowUpdate FrameType = 0x8
	FrameContinuation FrameType = 0x9
)

var frameTypeNames = [...]string{
	FrameData:         "DATA",
	FrameHeaders:      "HEADERS",
	FramePriority:     "PRIORITY",
	FrameRSTStream:    "RST_STREAM",
	FrameSettings:     "SETTINGS",
	FramePushPromise:  "PUSH_PROMISE",
	FramePing:         "PING",
	FrameGoAway:       "GOAWAY",
	FrameWindowUpdate: "WINDOW_UPDATE",
	FrameContinuation: "CONTINUATION",
}

// String returns the type's name as RFC 9113 spells it, or "UNKNOWN" for
// an extension type.
func (t FrameType) String() string {
	if int(t) < len(frameTypeNames) {
		return frameTypeNames[t]
	}
	return "UNKNOWN"
}

// Flags are a frame's flags. Their meaning depends on the frame type;
// flags a type does not define are kept as read and ignored (§4.1).
type Flags uint8

// The flags of RFC 9113 §6.
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS
	FlagAck        Flags = 0x1  // SETTINGS, PING
	FlagEndHeaders Flags = 0x4  // HEADERS, PUSH_PROMISE, CONTINUATION
	FlagPadded     Flags = 0x8  // DATA, HEADERS, PUSH_PROMISE
	FlagPriority   Flags = 0x20 // HEADERS
)

// Has reports whether all of want are set in f.
func (f Flags) Has(want Flags) bool { return f&want == want }

// FrameHeader is the fixed 9-byte header of a frame (RFC 9113 §4.1).
type FrameHeader struct {
	Length   uint32 // payload length, 24 bits
	Type     FrameType
	Flags    Flags
	StreamID uint32 // 31 bits; the reserved bit is dropped on read
}

// ParseFrameHeader reads a frame header from the first FrameHeaderLen
// bytes of b, or returns ErrNeedMore if b is shorter. It checks nothing
// else: [ReadFrame] applies the rules.
func ParseFrameHeader(b []byte) (FrameHeader, error) {
	if len(b) < FrameHeaderLen {
		return FrameHeader{}, ErrNeedMore
	}
	return FrameHeader{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     FrameType(b[3]),
		Flags:    Flags(b[4]),
		StreamID: binary.BigEndian.Uint32(b[5:9]) & streamIDMask,
	}, nil
}

// AppendFrameHeader appends h's 9 bytes to dst. It panics if h.Length does
// not fit in 24 bits: that is a bug in the caller, and a truncated length
// would desynchronize the connection.
func AppendFrameHeader(dst []byte, h FrameHeader) []byte {
	if h.Length > MaxFrameSizeLimit {
		panic("h2: frame payload longer than 2^24-1 bytes")
	}
	return append(dst, byte(h.Length>>16), byte(h.Length>>8), byte(h.Length),
		byte(h.Type), byte(h.Flags),
		byte(h.StreamID>>24)&0x7f, byte(h.StreamID>>16), byte(h.StreamID>>8), byte(h.StreamID))
}

const streamIDMask = 1<<31 - 1

// Frame is one frame read by [ReadFrame]: its header and payload. Payload
// and every slice its accessors return alias the buffer given to ReadFrame;
// they are valid while that buffer is unchanged.
//
// ReadFrame has checked the frame against the rules of its type, so the
// accessors cannot fail; each one is meaningful only for the types named in
// its comment and returns a zero value for others.
type Frame struct {
	FrameHeader
	// Payload is the whole payload as sent: pad length, priority fields
	// and padding included.
	Payload []byte

	// body is Payload without pad length, padding, priority fields or the
	// promised stream ID: the data of DATA, the field block fragment of
	// HEADERS, PUSH_PROMISE and CONTINUATION.
	body []byte
}

// Data returns a DATA frame's data, padding removed.
func (f *Frame) Data() []byte {
	if f.Type != FrameData {
		return nil
	}
	return f.body
}

// BlockFragment returns the field block fragment of a HEADERS,
// PUSH_PROMISE or CONTINUATION frame, padding and priority removed.
func (f *Frame) BlockFragment() []byte {
	switch f.Type {
	case FrameHeaders, FramePushPromise, FrameContinuation:
		return f.body
	}
	return nil
}

// PadLength returns the pad length of a padded DATA, HEADERS or
// PUSH_PROMISE frame (0 when FlagPadded is not set). Flow control counts
// the padding (§6.9.1): use Length, not len(Data()), for windows.
func (f *Frame) PadLength() int {
	switch f.Type {
	case FrameData, FrameHeaders, FramePushPromise:
		if f.Flags.Has(FlagPadded) {
			return int(f.Payload[0])
		}
	}
	return 0
}

// Priority is the stream dependency and weight of a PRIORITY frame or a
// HEADERS frame with FlagPriority (RFC 9113 §5.3.2, deprecated but still
// parsed). Weight is the wire value: the weight minus one, 0..255.
type Priority struct {
	StreamDep uint32
	Exclusive bool
	Weight    uint8
}

func parsePriority(b []byte) Priority {
	v := binary.BigEndian.Uint32(b)
	return Priority{StreamDep: v & streamIDMask, Exclusive: v>>31 == 1, Weight: b[4]}
}

// Priority returns the priority of a PRIORITY frame, or of a HEADERS frame
// with FlagPriority; ok is false for any other frame, and for a PRIORITY
// frame of the wrong length (returned with ErrPriorityLength).
func (f *Frame) Priority() (p Priority, ok bool) {
	switch {
	case f.Type == FramePriority && len(f.Payload) == 5:
		return parsePriority(f.Payload), true
	case f.Type == FrameHeaders && f.Flags.Has(FlagPriority):
		off := 0
		if f.Flags.Has(FlagPadded) {
			off = 1
		}
		return parsePriority(f.Payload[off:]), true
	}
	return Priority{}, false
}

// ErrCode returns the error code of an RST_STREAM or GOAWAY frame.
func (f *Frame) ErrCode() ErrCode {
	switch f.Type {
	case FrameRSTStream:
		return ErrCode(binary.BigEndian.Uint32(f.Payload))
	case FrameGoAway:
		return ErrCode(binary.BigEndian.Uint32(f.Payload[4:]))
	}
	return 0
}

// LastStreamID returns a GOAWAY frame's last stream identifier.
func (f *Frame) LastStreamID() uint32 {
	if f.Type != FrameGoAway {
		return 0
	}
	return binary.BigEndian.Uint32(f.Payload) & streamIDMask
}

// DebugData returns a GOAWAY frame's additional debug data.
func (f *Frame) DebugData() []byte {
	if f.Type != FrameGoAway {
		return nil
	}
	return f.Payload[8:]
}

// PromisedID returns a PUSH_PROMISE frame's promised stream identifier.
func (f *Frame) PromisedID() uint32 {
	if f.Type != FramePushPromise {
		return 0
	}
	off := 0
	if f.Flags.Has(FlagPadded) {
		off = 1
	}
	return binary.BigEndian.Uint32(f.Payload[off:]) & streamIDMask
}

// PingData returns a PING frame's 8 bytes of opaque data.
func (f *Frame) PingData() (d [8]byte) {
	if f.Type == FramePing {
		copy(d[:], f.Payload)
	}
	return d
}

// Increment returns a WINDOW_UPDATE frame's window size increment
// (1..2^31-1).
func (f *Frame) Increment() uint32 {
	if f.Type != FrameWindowUpdate {
		return 0
	}
	return binary.BigEndian.Uint32(f.Payload) & streamIDMask
}

// NumSettings returns how many settings a SETTINGS frame carries.
func (f *Frame) NumSettings() int {
	if f.Type != FrameSettings {
		return 0
	}
	return len(f.Payload) / 6
}

// Setting returns a SETTINGS frame's i-th setting, 0 ≤ i < NumSettings.
// Settings apply in order (§6.5.3); unknown identifiers must be ignored.
func (f *Frame) Setting(i int) Setting {
	b := f.Payload[i*6 : i*6+6]
	return Setting{ID: SettingID(binary.BigEndian.Uint16(b)), Val: binary.BigEndian.Uint32(b[2:])}
}

// ReadFrame reads one frame from the front of b and checks it against the
// rules RFC 9113 §4 and §6 set for its type. n is how many bytes of b the
// frame took. maxFrameSize is the SETTINGS_MAX_FRAME_SIZE this endpoint
// advertised (DefaultMaxFrameSize until the peer has acknowledged a larger
// one); a value below DefaultMaxFrameSize, which every endpoint must
// accept (§4.2), counts as DefaultMaxFrameSize.
//
// err is:
//   - nil: f is a well-formed frame; frames of unknown type are returned
//     too, and the caller must ignore them (§4.1, §5.5);
//   - [ErrNeedMore]: b holds less than a whole frame; n is 0;
//   - an [*Error] with Stream false: a connection error; n is 0, and the
//     caller sends GOAWAY with the error's code;
//   - an [*Error] with Stream true: a stream error on f.StreamID; f and n
//     are valid, so the caller can send RST_STREAM and go on with b[n:].
//     A HEADERS frame refused so (ErrSelfDependency) still carries a
//     field block, which the caller must decode all the same to keep its
//     HPACK table in step (RFC 9113 §4.3).
//
// ReadFrame does not copy: f's slices alias b. It knows nothing of the
// connection's state: which frames may follow which (CONTINUATION), what
// streams exist, flow-control windows and the frames a server must refuse
// (PUSH_PROMISE) are the caller's.
func ReadFrame(b []byte, maxFrameSize uint32) (f Frame, n int, err error) {
	h, err := ParseFrameHeader(b)
	if err != nil {
		return Frame{}, 0, err
	}
	if h.Length > max(maxFrameSize, DefaultMaxFrameSize) {
		// §4.2 lets a frame too large for a stream-only frame type be a
		// stream error; a connection error is always allowed and never
		// leaves a half-read frame behind.
		return Frame{}, 0, ErrFrameTooLarge
	}
	end := FrameHeaderLen + int(h.Length)
	if len(b) < end {
		return Frame{}, 0, ErrNeedMore
	}
	f = Frame{FrameHeader: h, Payload: b[FrameHeaderLen:end:end]}
	if err := f.check(); err != nil {
		if err.Stream {
			return f, end, err
		}
		return Frame{}, 0, err
	}
	return f, end, nil
}

// check applies the rules of f's type (RFC 9113 §6) and sets f.body.
func (f *Frame) check() *Error {
	p := f.Payload
	switch f.Type {
	case FrameData: // §6.1
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
		body, err := unpad(f.Flags, p, ErrShortData)
		if err != nil {
			return err
		}
		f.body = body
	case FrameHeaders: // §6.2
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
		min := 0
		if f.Flags.Has(FlagPadded) {
			min++
		}
		if f.Flags.Has(FlagPriority) {
			min += 5
		}
		if len(p) < min {
			return ErrShortHeaders
		}
		body, err := unpad(f.Flags, p, ErrShortHeaders)
		if err != nil {
			return err
		}
		if f.Flags.Has(FlagPriority) {
			if len(body) < 5 {
				return ErrPadding // the padding ate the priority fields
			}
			f.body = body[5:]
			if parsePriority(body).StreamDep == f.StreamID {
				return ErrSelfDependency
			}
		} else {
			f.body = body
		}
	case FramePriority: // §6.3
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
		if len(p) != 5 {
			return ErrPriorityLength
		}
		if parsePriority(p).StreamDep == f.StreamID {
			return ErrSelfDependency
		}
	case FrameRSTStream: // §6.4
		if len(p) != 4 {
			return ErrRSTStreamLength
		}
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
	case FrameSettings: // §6.5
		if f.Flags.Has(FlagAck) && len(p) != 0 {
			return ErrSettingsAckLength
		}
		if f.StreamID != 0 {
			return ErrStreamIDNotZero
		}
		if f.Flags.Has(FlagAck) {
			return nil
		}
		if len(p)%6 != 0 {
			return ErrSettingsLength
		}
		for i := 0; i < len(p); i += 6 {
			s := Setting{ID: SettingID(binary.BigEndian.Uint16(p[i:])), Val: binary.BigEndian.Uint32(p[i+2:])}
			if err := s.check(); err != nil {
				return err
			}
		}
	case FramePushPromise: // §6.6
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
		min := 4
		if f.Flags.Has(FlagPadded) {
			min++
		}
		if len(p) < min {
			return ErrShortPushPromise
		}
		body, err := unpad(f.Flags, p, ErrShortPushPromise)
		if err != nil {
			return err
		}
		if len(body) < 4 {
			return ErrPadding
		}
		f.body = body[4:]
	case FramePing: // §6.7
		if len(p) != 8 {
			return ErrPingLength
		}
		if f.StreamID != 0 {
			return ErrStreamIDNotZero
		}
	case FrameGoAway: // §6.8
		if f.StreamID != 0 {
			return ErrStreamIDNotZero
		}
		if len(p) < 8 {
			return ErrGoAwayLength
		}
	case FrameWindowUpdate: // §6.9
		if len(p) != 4 {
			return ErrWindowUpdateLength
		}
		if binary.BigEndian.Uint32(p)&streamIDMask == 0 {
			if f.StreamID == 0 {
				return ErrWindowIncrementZero
			}
			return ErrStreamIncrementZero
		}
	case FrameContinuation: // §6.10
		if f.StreamID == 0 {
			return ErrStreamIDZero
		}
		f.body = p
	}
	return nil
}

// unpad strips the pad length byte and the padding from a padded frame's
// payload. The pad length must be less than the payload length (§6.1):
// padding may leave nothing else, but it may not reach the pad length byte.
func unpad(flags Flags, p []byte, short *Error) ([]byte, *Error) {
	if !flags.Has(FlagPadded) {
		return p, nil
	}
	if len(p) < 1 {
		return nil, short
	}
	pad := int(p[0])
	if pad >= len(p) {
		return nil, ErrPadding
	}
	return p[1 : len(p)-pad], nil
}
