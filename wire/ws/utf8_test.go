package ws

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// extendable reports whether some continuation makes p valid UTF-8: p is
// valid, or ends in a sequence that the right bytes complete. The bytes
// that may follow a lead byte are in one of five ranges, each holding
// 0x80, 0x90 or 0xA0, and any later ones hold 0x80: trying those with up
// to three bytes decides it.
func extendable(p []byte) bool {
	if utf8.Valid(p) {
		return true
	}
	buf := make([]byte, len(p)+3)
	copy(buf, p)
	for _, c := range []byte{0x80, 0x90, 0xA0} {
		buf[len(p)], buf[len(p)+1], buf[len(p)+2] = c, 0x80, 0x80
		for m := 1; m <= 3; m++ {
			if utf8.Valid(buf[:len(p)+m]) {
				return true
			}
		}
	}
	return false
}

var utf8Cases = []string{
	"", "Hello", "Hello-µ@ßöäüàá-UTF-8!!", "κόσμε", "\u0080", "\u07ff", "\u0800", "\uffff",
	"\U00010000", "\U0010ffff", "\ufeff", "\ud7ff", "\ue000", "\ufffd", strings.Repeat("abcdefgh", 9) + "é",
	// Autobahn 6.x shapes: invalid inside, at the start, at the end.
	"κόσμε\xed\xa0\x80edited", "\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
	"\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xe0\x9f\xbf", "\xf0\x80\x80\xaf", "\xf0\x8f\xbf\xbf",
	"\x80", "\xbf", "\xfe", "\xff", "\xce", "\xe0\xa0", "\xf0\x90\x80", "κόσμ\xce", "a\xc2\xc2",
	"\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80", "abcdefg\x80", "abcdefgh\x80abcdefgh",
	"\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf",
}

// Fed a byte at a time, UTF8 fails exactly at the first byte that no
// continuation could make valid, and Done agrees with utf8.Valid.
func TestUTF8FailsFast(t *testing.T) {
	for _, s := range utf8Cases {
		var u UTF8
		for i := range len(s) {
			got, want := u.Write([]byte{s[i]}), extendable([]byte(s[:i+1]))
			if got != want {
				t.Errorf("%q: Write of byte %d = %v, want %v", s, i, got, want)
				break
			}
		}
		if u.Done() != utf8.Valid([]byte(s)) {
			t.Errorf("%q: Done = %v, utf8.Valid = %v", s, u.Done(), !u.Done())
		}
		u.Reset()
		if u.Write([]byte(s)) != extendable([]byte(s)) || u.Done() != utf8.Valid([]byte(s)) {
			t.Errorf("%q in one piece: Write/Done disagree with utf8.Valid", s)
		}
	}
}

// Split in three pieces at every pair of points, each Write answers what
// the text so far allows.
func TestUTF8Pieces(t *testing.T) {
	for _, s := range utf8Cases {
		b := []byte(s)
		for i := 0; i <= len(b); i++ {
			for j := i; j <= len(b); j++ {
				var u UTF8
				cuts := [4]int{0, i, j, len(b)}
				for k := 1; k < 4; k++ {
					start, end := cuts[k-1], cuts[k]
					if got, want := u.Write(b[start:end]), extendable(b[:end]); got != want {
						t.Fatalf("%q cut at %d and %d: Write up to %d = %v, want %v", s, i, j, end, got, want)
					}
				}
				if u.Done() != utf8.Valid(b) {
					t.Fatalf("%q cut at %d and %d: Done = %v", s, i, j, u.Done())
				}
			}
		}
	}
}

func TestUTF8IsSticky(t *testing.T) {
	var u UTF8
	if u.Write([]byte("\xff")) || u.Write([]byte("ok")) || u.Done() {
		t.Error("a failed validator recovered without Reset")
	}
	u.Reset()
	if !u.Write([]byte("ok")) || !u.Done() {
		t.Error("Reset did not clear the failure")
	}
}

// Every code point, encoded and split at every point, is valid; every
// surrogate, encoded as WTF-8 would, is not.
func TestUTF8AllRunes(t *testing.T) {
	var buf [4]byte
	for r := rune(0); r <= utf8.MaxRune; r++ {
		var n int
		if r >= 0xD800 && r <= 0xDFFF {
			buf[0], buf[1], buf[2], n = 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F), 3
		} else {
			n = utf8.EncodeRune(buf[:], r)
		}
		valid := utf8.Valid(buf[:n])
		for cut := 0; cut <= n; cut++ {
			var u UTF8
			ok := u.Write(buf[:cut]) && u.Write(buf[cut:n]) && u.Done()
			if ok != valid {
				t.Fatalf("U+%04X split at %d: %v, utf8.Valid %v", r, cut, ok, valid)
			}
		}
	}
}
