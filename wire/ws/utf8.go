package ws

import "encoding/binary"

// UTF8 validates a text message as UTF-8 while it arrives, in pieces of
// any size split anywhere (across frames, and across reads within a
// frame). RFC 6455 §8.1 fails the connection (1007) on text that is not
// UTF-8; UTF8 says so at the first byte that cannot continue a valid
// sequence, not at the end of the message (Autobahn section 6 checks
// that an endpoint fails fast).
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
func (u *UTF8) Write(p []byte) bool {
	if u.bad {
		return false
	}
	need, lo, hi := u.need, u.lo, u.hi
	i := 0
	for i < len(p) {
		if need == 0 {
			// ASCII runs, eight bytes at a time.
			for i+8 <= len(p) && binary.LittleEndian.Uint64(p[i:i+8])&0x8080808080808080 == 0 {
				i += 8
			}
			if i == len(p) {
				break
			}
			c := p[i]
			i++
			switch {
			case c < 0x80:
				continue
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
			continue
		}
		c := p[i]
		if c < lo || c > hi {
			u.bad = true
			return false
		}
		i++
		need, lo, hi = need-1, 0x80, 0xBF
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
