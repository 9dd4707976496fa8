package ws

import "unicode/utf8"

// UTF8 validates a text message as UTF-8 while it arrives, in pieces of
// any size split anywhere (across frames, and across reads within a
// frame). RFC 6455 §8.1 fails the connection (1007) on text that is not
// UTF-8; UTF8 says so in the piece that holds the first byte that cannot
// continue a valid text, not at the end of the message (Autobahn section
// 6 checks that an endpoint fails fast).
//
// Valid means well-formed as Unicode defines it (Table 3-7), which is
// what unicode/utf8.Valid accepts: no overlong forms, no surrogates
// (U+D800–U+DFFF), nothing above U+10FFFF. The zero value is ready for a
// new message; it never allocates.
type UTF8 struct {
	need   uint8 // continuation bytes still due for the sequence in progress
	lo, hi byte  // the range of the next byte, while need > 0
	bad    bool  // an invalid byte was seen: sticky until Reset
}

// Write validates the next piece of the message and reports whether the
// message is still valid: false as soon as p (or an earlier piece) holds a
// byte that no valid text could continue with. A sequence that p leaves
// open is carried to the next Write.
//
// A piece is checked in three parts: the end of the sequence the last
// piece left open, byte by byte; the whole sequences that follow, by
// unicode/utf8.Valid (which runs through ASCII eight bytes at a time);
// and the sequence p leaves open, at most three bytes, byte by byte.
func (u *UTF8) Write(p []byte) bool {
	if u.bad {
		return false
	}
	if u.need > 0 {
		k := min(int(u.need), len(p))
		if !u.step(p[:k]) {
			return false
		}
		p = p[k:]
	}
	cut := len(p) - openTail(p)
	if !utf8.Valid(p[:cut]) {
		u.bad = true
		return false
	}
	return u.step(p[cut:])
}

// openTail returns how many bytes at the end of p begin a sequence that p
// does not complete (0 to 3): from the last lead byte among them on.
func openTail(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		switch {
		case c < 0x80:
			return 0
		case c < 0xC0: // a continuation byte: look further back
			continue
		case c < 0xE0 && k < 2, c >= 0xE0 && c < 0xF0 && k < 3, c >= 0xF0 && k < 4:
			return k
		default:
			return 0
		}
	}
	return 0
}

// step runs the byte-at-a-time state machine over p, a few bytes at the
// edges of a piece.
func (u *UTF8) step(p []byte) bool {
	need, lo, hi := u.need, u.lo, u.hi
	for _, c := range p {
		if need > 0 {
			if c < lo || c > hi {
				u.bad = true
				return false
			}
			need, lo, hi = need-1, 0x80, 0xBF
			continue
		}
		switch {
		case c < 0x80:
		case c < 0xC2: // a continuation byte, or an overlong two-byte lead
			u.bad = true
			return false
		case c < 0xE0:
			need, lo, hi = 1, 0x80, 0xBF
		case c == 0xE0: // no overlong three-byte forms
			need, lo, hi = 2, 0xA0, 0xBF
		case c == 0xED: // no surrogates
			need, lo, hi = 2, 0x80, 0x9F
		case c < 0xF0:
			need, lo, hi = 2, 0x80, 0xBF
		case c == 0xF0: // no overlong four-byte forms
			need, lo, hi = 3, 0x90, 0xBF
		case c < 0xF4:
			need, lo, hi = 3, 0x80, 0xBF
		case c == 0xF4: // nothing above U+10FFFF
			need, lo, hi = 3, 0x80, 0x8F
		default:
			u.bad = true
			return false
		}
	}
	u.need, u.lo, u.hi = need, lo, hi
	return true
}

// Done reports whether the message, now whole, is valid: every piece was,
// and the last one did not end inside a sequence. Call it at the frame
// with FIN; a text message that ends on a truncated sequence fails there.
func (u *UTF8) Done() bool { return !u.bad && u.need == 0 }

// Reset makes u ready for a new message.
func (u *UTF8) Reset() { *u = UTF8{} }
