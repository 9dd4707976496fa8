package ws

import "encoding/binary"

// Opcode is a frame's opcode (RFC 6455 §5.2, §11.8).
type Opcode uint8

// The opcodes of RFC 6455 §5.2. 0x3–0x7 are reserved for further data
// frames and 0xB–0xF for further control frames; a frame that carries one
// fails the connection ([ErrReservedOpcode]).
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether o is a control opcode (close, ping, pong, or
// a reserved one from 0x8 up: the high bit of the four, §5.5).
func (o Opcode) IsControl() bool { return o&0x8 != 0 }

// IsData reports whether o starts a data message (text or binary).
func (o Opcode) IsData() bool { return o == OpText || o == OpBinary }

func (o Opcode) valid() bool { return o <= OpBinary || (o >= OpClose && o <= OpPong) }

var opcodeNames = [...]string{
	OpContinuation: "continuation",
	OpText:         "text",
	OpBinary:       "binary",
	OpClose:        "close",
	OpPing:         "ping",
	OpPong:         "pong",
}

// String returns the opcode's name ("text", "ping"), or "reserved" for
// an opcode RFC 6455 does not define.
func (o Opcode) String() string {
	if int(o) < len(opcodeNames) && opcodeNames[o] != "" {
		return opcodeNames[o]
	}
	return "reserved"
}

// Header is a frame header (RFC 6455 §5.2): everything before the
// payload.
type Header struct {
	Fin              bool // the final frame of its message
	Rsv1, Rsv2, Rsv3 bool // extension bits; RSV1 marks a compressed message under permessage-deflate
	Opcode           Opcode
	Masked           bool
	Mask             [4]byte // the masking key, when Masked
	Length           int64   // payload length, 0 to 2^63-1
}

// Sizes of the header's parts (RFC 6455 §5.2), and the largest payload of
// a control frame (§5.5).
const (
	MaxHeaderLen      = 14 // 2 + 8 (64-bit length) + 4 (masking key)
	MaxControlPayload = 125
)

// DefaultMaxPayload is the largest frame payload [ParseHeader] accepts
// when [Rules] leave MaxPayload at zero: 16 MiB, which the largest frames
// of the Autobahn test suite (section 9) fit.
const DefaultMaxPayload = 16 << 20

// Role says which end of the connection reads the frames: the masking
// rules depend on it (RFC 6455 §5.1).
type Role uint8

const (
	// Server reads a client's frames, which must be masked.
	Server Role = iota
	// Client reads a server's frames, which must not be masked.
	Client
)

// Rules are what [ParseHeader] needs to know beyond RFC 6455's fixed
// rules: who reads, the size limit, and the negotiated extension.
type Rules struct {
	Role Role
	// MaxPayload is the largest payload a frame may announce; a longer
	// one fails with [ErrFrameTooLarge] (1009) before any of it is read.
	// Zero means DefaultMaxPayload; a negative value means no limit but
	// the format's own (2^63-1).
	MaxPayload int64
	// Deflate says permessage-deflate (RFC 7692) was negotiated: RSV1 may
	// then be set on the first frame of a data message. Without it, any
	// RSV bit fails the connection, as do RSV2 and RSV3 always.
	Deflate bool
}

// ParseHeader reads a frame header from the front of b and returns it
// with its length in bytes; the payload (Length bytes, masked if Masked)
// follows at b[n:]. Nothing is copied and nothing is allocated.
//
// It returns [ErrNeedMore] (and n == 0) while b holds only part of a
// header and what it holds breaks no rule: the first two bytes are
// checked as soon as they arrive, so a bad frame fails before its
// extended length is read. Any other error is an [*Error] whose Code is
// the close code to fail the connection with:
//
//   - 1002: a reserved opcode; a control frame without FIN or over 125
//     bytes; an RSV bit not negotiated (RSV1 only under Rules.Deflate,
//     and never on a control or continuation frame); a client frame the
//     server gets unmasked, or a server frame the client gets masked; a
//     64-bit length with its top bit set; a length not in its minimal
//     encoding (§5.2: "the minimal number of bytes MUST be used");
//   - 1009: a payload over Rules.MaxPayload.
//
// Whether the frame fits the message in progress (continuation frames,
// interleaved control frames) is [Assembler]'s question.
func ParseHeader(b []byte, r Rules) (Header, int, error) {
	if len(b) < 2 {
		return Header{}, 0, ErrNeedMore
	}
	b0, b1 := b[0], b[1]
	h := Header{
		Fin:    b0&0x80 != 0,
		Rsv1:   b0&0x40 != 0,
		Rsv2:   b0&0x20 != 0,
		Rsv3:   b0&0x10 != 0,
		Opcode: Opcode(b0 & 0x0f),
		Masked: b1&0x80 != 0,
	}
	len7 := int64(b1 & 0x7f)
	if !h.Opcode.valid() {
		return Header{}, 0, ErrReservedOpcode
	}
	if h.Rsv2 || h.Rsv3 {
		return Header{}, 0, ErrReservedBits
	}
	if h.Rsv1 {
		switch {
		case !r.Deflate:
			return Header{}, 0, ErrReservedBits
		case h.Opcode.IsControl():
			return Header{}, 0, ErrCompressedControl
		case h.Opcode == OpContinuation:
			return Header{}, 0, ErrCompressedFragment
		}
	}
	if h.Opcode.IsControl() {
		if !h.Fin {
			return Header{}, 0, ErrFragmentedControl
		}
		if len7 > MaxControlPayload {
			return Header{}, 0, ErrControlTooLong
		}
	}
	if r.Role == Server && !h.Masked {
		return Header{}, 0, ErrUnmaskedClientFrame
	}
	if r.Role == Client && h.Masked {
		return Header{}, 0, ErrMaskedServerFrame
	}

	n := 2
	switch len7 {
	case 126:
		if len(b) < 4 {
			return Header{}, 0, ErrNeedMore
		}
		h.Length = int64(binary.BigEndian.Uint16(b[2:4]))
		if h.Length < 126 {
			return Header{}, 0, ErrNonMinimalLength
		}
		n = 4
	case 127:
		if len(b) < 10 {
			return Header{}, 0, ErrNeedMore
		}
		l := binary.BigEndian.Uint64(b[2:10])
		if l>>63 != 0 {
			return Header{}, 0, ErrLengthTopBit
		}
		if l <= 0xffff {
			return Header{}, 0, ErrNonMinimalLength
		}
		h.Length = int64(l)
		n = 10
	default:
		h.Length = len7
	}
	max := r.MaxPayload
	if max == 0 {
		max = DefaultMaxPayload
	}
	if max > 0 && h.Length > max {
		return Header{}, 0, ErrFrameTooLarge
	}
	if h.Masked {
		if len(b) < n+4 {
			return Header{}, 0, ErrNeedMore
		}
		h.Mask = [4]byte(b[n : n+4])
		n += 4
	}
	return h, n, nil
}

// HeaderLen returns the number of bytes [AppendHeader] writes for h.
func HeaderLen(h Header) int {
	n := 2
	switch {
	case h.Length > 0xffff:
		n += 8
	case h.Length > 125:
		n += 2
	}
	if h.Masked {
		n += 4
	}
	return n
}

// AppendHeader appends h to dst, its length in the minimal encoding
// (§5.2), and returns the extended slice. It writes h as given and checks
// no rule but one: it panics if h.Length is negative, a bug in the caller
// that no encoding could carry.
func AppendHeader(dst []byte, h Header) []byte {
	if h.Length < 0 {
		panic("ws: negative frame payload length")
	}
	b0 := byte(h.Opcode & 0x0f)
	if h.Fin {
		b0 |= 0x80
	}
	if h.Rsv1 {
		b0 |= 0x40
	}
	if h.Rsv2 {
		b0 |= 0x20
	}
	if h.Rsv3 {
		b0 |= 0x10
	}
	var b1 byte
	if h.Masked {
		b1 = 0x80
	}
	switch {
	case h.Length > 0xffff:
		dst = append(dst, b0, b1|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(h.Length))
	case h.Length > 125:
		dst = append(dst, b0, b1|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(h.Length))
	default:
		dst = append(dst, b0, b1|byte(h.Length))
	}
	if h.Masked {
		dst = append(dst, h.Mask[:]...)
	}
	return dst
}

// AppendServerFrame appends a whole unmasked frame, header and payload, as
// a server sends it (§5.1): one frame of opcode op, final if fin.
func AppendServerFrame(dst []byte, op Opcode, fin bool, payload []byte) []byte {
	dst = AppendHeader(dst, Header{Fin: fin, Opcode: op, Length: int64(len(payload))})
	return append(dst, payload...)
}

// AppendClientFrame appends a whole masked frame as a client sends it
// (§5.1, §5.3): the header with key, then payload masked with key. payload
// itself is not modified. key must be fresh for every frame and
// unpredictable to the application (§10.3): the caller draws it, for
// example from crypto/rand or a per-connection generator seeded from it.
func AppendClientFrame(dst []byte, op Opcode, fin bool, key [4]byte, payload []byte) []byte {
	dst = AppendHeader(dst, Header{Fin: fin, Opcode: op, Masked: true, Mask: key, Length: int64(len(payload))})
	start := len(dst)
	dst = append(dst, payload...)
	Mask(key, 0, dst[start:])
	return dst
}
