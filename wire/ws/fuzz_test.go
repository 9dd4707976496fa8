package ws

// Fuzz targets, one per parser, seeded from testdata/fuzz/ and the seeds
// below. What must hold for any input:
//
// FuzzParseHeader:
//   - ParseHeader never panics, never reports more bytes than it was
//     given, and fails only with ErrNeedMore or an *Error with a reason and
//     a code a close frame may carry;
//   - a header it reads is written back byte for byte by AppendHeader (one
//     encoding per header: non-minimal lengths are refused), is HeaderLen
//     long, and every prefix of it needs more;
//   - an error does not depend on the bytes after the input;
//   - it agrees with headerRules, the rules of §5.2 written out one by
//     one: no error when no rule is broken, and otherwise one of the
//     broken rules' errors.
//
// FuzzMask: Mask equals the byte loop of §5.3, whole or in two pieces.
//
// FuzzUTF8: over the input split in up to four pieces, each Write says
// whether some continuation could still make the text so far valid, and
// Done agrees with unicode/utf8.Valid on the whole.
//
// FuzzParseClose: a payload it accepts is written back byte for byte by
// AppendClose; one it refuses has the close code its fault calls for.
//
// FuzzDeflateOffer: NextExtension walks any list to its end or an error,
// each element shorter than the list; an offer FirstDeflateOffer accepts,
// written by AppendDeflate and read again, is the same offer.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unicode/utf8"
)

func FuzzParseHeader(f *testing.F) {
	for _, seed := range [][]byte{rfcHello, rfcMaskHello, rfcHel, rfcLo, rfcPing, rfcMaskedPong,
		rfc256Header, rfc64KHeader, {0xc1, 0x80, 1, 2, 3, 4}, {0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0},
		{0x89, 0xfe, 0, 126}, {0x82, 0xfe, 0, 5}} {
		f.Add(seed, uint8(0))
		f.Add(seed, uint8(7))
	}
	f.Fuzz(func(t *testing.T, b []byte, flags uint8) {
		r := Rules{Role: Role(flags & 1), Deflate: flags&2 != 0}
		switch flags >> 2 & 3 {
		case 1:
			r.MaxPayload = -1
		case 2:
			r.MaxPayload = 200
		}
		h, n, err := ParseHeader(b, r)
		if n < 0 || n > len(b) {
			t.Fatalf("n = %d for %d bytes", n, len(b))
		}
		broken, whole := headerRules(b, r)
		switch e, _ := err.(*Error); {
		case len(broken) == 0 && !whole && err != ErrNeedMore,
			len(broken) == 0 && whole && err != nil,
			len(broken) > 0 && (e == nil || !broken[e]):
			t.Fatalf("% x: %v; the rules broken are %v, the header whole %v", b, err, broken, whole)
		}
		var e *Error
		switch {
		case err == ErrNeedMore:
			if n != 0 {
				t.Fatalf("ErrNeedMore with n = %d", n)
			}
			return
		case errors.As(err, &e):
			if n != 0 || e.Reason == "" || !e.Code.Valid() {
				t.Fatalf("%v: n = %d, code %d", err, n, e.Code)
			}
			if _, _, err2 := ParseHeader(append(bytes.Clone(b), 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0), r); err2 != err {
				t.Fatalf("%v, but %v once more bytes follow", err, err2)
			}
			return
		case err != nil:
			t.Fatalf("error %v (%T)", err, err)
		}
		if n != HeaderLen(h) {
			t.Fatalf("n = %d, HeaderLen = %d", n, HeaderLen(h))
		}
		if again := AppendHeader(nil, h); !bytes.Equal(again, b[:n]) {
			t.Fatalf("% x read as %+v, written back as % x", b[:n], h, again)
		}
		for k := range n {
			if _, m, perr := ParseHeader(b[:k], r); perr != ErrNeedMore || m != 0 {
				t.Fatalf("prefix of %d of %d bytes: %d, %v", k, n, m, perr)
			}
		}
	})
}

func FuzzMask(f *testing.F) {
	f.Add([]byte("Hello"), uint32(0x3d21fa37), uint8(0), uint16(2))
	f.Add(make([]byte, 100), uint32(0xdeadbeef), uint8(3), uint16(41))
	f.Fuzz(func(t *testing.T, b []byte, key32 uint32, pos uint8, split uint16) {
		var key [4]byte
		binary.LittleEndian.PutUint32(key[:], key32)
		want := bytes.Clone(b)
		wp := maskBytes(key, int(pos), want)
		got := bytes.Clone(b)
		if gp := Mask(key, int(pos), got); gp != wp || !bytes.Equal(got, want) {
			t.Fatalf("Mask = % x, %d; want % x, %d", got, gp, want, wp)
		}
		got = bytes.Clone(b)
		k := int(split) % (len(b) + 1)
		p := Mask(key, int(pos), got[:k])
		if gp := Mask(key, p, got[k:]); gp != wp || !bytes.Equal(got, want) {
			t.Fatalf("Mask in pieces at %d = % x, %d; want % x, %d", k, got, gp, want, wp)
		}
	})
}

func FuzzUTF8(f *testing.F) {
	for _, s := range utf8Cases {
		f.Add([]byte(s), uint64(0x030201))
	}
	f.Fuzz(func(t *testing.T, b []byte, cuts uint64) {
		var u UTF8
		start := 0
		for i := range 4 {
			end := len(b)
			if i < 3 && len(b) > 0 {
				end = min(len(b), start+int(cuts>>(16*i)&0xffff)%(len(b)+1))
			}
			if got, want := u.Write(b[start:end]), extendable(b[:end]); got != want {
				t.Fatalf("% x: Write of [%d:%d] = %v, want %v", b, start, end, got, want)
			}
			start = end
		}
		if u.Done() != utf8.Valid(b) {
			t.Fatalf("% x: Done = %v, utf8.Valid = %v", b, u.Done(), utf8.Valid(b))
		}
	})
}

func FuzzParseClose(f *testing.F) {
	for _, seed := range []string{"", "\x03", "\x03\xe8", "\x03\xe9bye", "\x03\xee", "\x0f\xa0κόσμε", "\x03\xe8\xed\xa0\x80", "\x13\x88"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		code, reason, err := ParseClose(p)
		if err == nil {
			if again := AppendClose(nil, code, string(reason)); !bytes.Equal(again, p) {
				t.Fatalf("% x read as %d %q, written back as % x", p, code, reason, again)
			}
			return
		}
		var want *Error
		switch {
		case len(p) == 1:
			want = ErrCloseOneByte
		case len(p) > MaxControlPayload:
			want = ErrControlTooLong
		case !CloseCode(binary.BigEndian.Uint16(p)).Valid():
			want = ErrCloseCodeInvalid
		case !utf8.Valid(p[2:]):
			want = ErrCloseReasonUTF8
		}
		if err != errOrNil(want) {
			t.Fatalf("% x: %v, want %v", p, err, want)
		}
	})
}

func FuzzDeflateOffer(f *testing.F) {
	for _, seed := range []string{
		"permessage-deflate; client_max_window_bits",
		"permessage-deflate; client_max_window_bits=10; server_no_context_takeover, permessage-deflate",
		`foo; a="x,y", permessage-deflate; server_max_window_bits="9"`,
		"permessage-deflate; server_max_window_bits=16, x-webkit-deflate-frame",
		"permessage-deflate;; x", `a; b="\"c"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, list []byte) {
		for rest := list; ; {
			name, params, next, err := NextExtension(rest)
			if err != nil || name == nil {
				break
			}
			if len(next) >= len(rest) || len(name)+len(params) > len(rest) {
				t.Fatalf("NextExtension(%q) did not advance: %q", rest, next)
			}
			ParseDeflate(params)
			rest = next
		}
		d, ok, err := FirstDeflateOffer(list)
		if err != nil && err != ErrExtensionSyntax {
			t.Fatalf("FirstDeflateOffer: %v", err)
		}
		if !ok {
			return
		}
		b := AppendDeflate(nil, d)
		if d2, ok2, err2 := FirstDeflateOffer(b); d2 != d || !ok2 || err2 != nil {
			t.Fatalf("%+v written as %q reads back as %+v, %v, %v", d, b, d2, ok2, err2)
		}
	})
}

// headerRules checks b's header against the rules of RFC 6455 §5.2, §5.5
// and §5.1 (and RFC 7692 §6.1) one by one, as far as b goes, and returns
// the errors of those broken and whether b holds the whole header.
func headerRules(b []byte, r Rules) (broken map[*Error]bool, whole bool) {
	broken = map[*Error]bool{}
	if len(b) < 2 {
		return broken, false
	}
	fin, rsv1, rsv2, rsv3 := b[0]&0x80 != 0, b[0]&0x40 != 0, b[0]&0x20 != 0, b[0]&0x10 != 0
	op, masked, len7 := b[0]&0xf, b[1]&0x80 != 0, int(b[1]&0x7f)
	control := op >= 8
	broken[ErrReservedOpcode] = (op >= 3 && op <= 7) || op >= 0xB
	broken[ErrReservedBits] = rsv2 || rsv3 || (rsv1 && !r.Deflate)
	broken[ErrCompressedControl] = rsv1 && r.Deflate && control
	broken[ErrCompressedFragment] = rsv1 && r.Deflate && op == 0
	broken[ErrFragmentedControl] = control && !fin
	broken[ErrControlTooLong] = control && len7 > 125
	broken[ErrUnmaskedClientFrame] = r.Role == Server && !masked
	broken[ErrMaskedServerFrame] = r.Role == Client && masked
	need, length := 2, uint64(len7)
	switch len7 {
	case 126:
		need = 4
	case 127:
		need = 10
	}
	if len(b) >= need {
		switch len7 {
		case 126:
			length = uint64(b[2])<<8 | uint64(b[3])
			broken[ErrNonMinimalLength] = length < 126
		case 127:
			length = binary.BigEndian.Uint64(b[2:10])
			broken[ErrLengthTopBit] = length >= 1<<63
			broken[ErrNonMinimalLength] = length < 1<<16
		}
		max := uint64(DefaultMaxPayload)
		if r.MaxPayload > 0 {
			max = uint64(r.MaxPayload)
		}
		broken[ErrFrameTooLarge] = r.MaxPayload >= 0 && length < 1<<63 && length > max
	}
	if masked {
		need += 4
	}
	for e, ok := range broken {
		if !ok {
			delete(broken, e)
		}
	}
	return broken, len(b) >= need
}
