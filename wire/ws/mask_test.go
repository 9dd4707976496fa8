package ws

import (
	"bytes"
	"testing"
)

// maskBytes is the definition of §5.3, a byte at a time: the oracle.
func maskBytes(key [4]byte, pos int, b []byte) int {
	for i := range b {
		b[i] ^= key[(pos+i)%4]
	}
	return pos + len(b)
}

func TestMaskAgainstByteLoop(t *testing.T) {
	key := [4]byte{0x37, 0xfa, 0x21, 0x3d}
	src := make([]byte, 300)
	for i := range src {
		src[i] = byte(i*7 + 3)
	}
	for align := range 8 { // the slice's offset in its array
		for n := range 140 {
			for pos := range 9 {
				got := bytes.Clone(src[:align+n])[align:]
				want := bytes.Clone(got)
				gp, wp := Mask(key, pos, got), maskBytes(key, pos, want)
				if !bytes.Equal(got, want) || gp != wp {
					t.Fatalf("Mask(pos %d, %d bytes at offset %d) = % x, %d; want % x, %d", pos, n, align, got, gp, want, wp)
				}
			}
		}
	}
}

// A payload unmasked in pieces of any size is the payload unmasked whole.
func TestMaskInPieces(t *testing.T) {
	key := [4]byte{1, 2, 4, 8}
	whole := make([]byte, 1000)
	for i := range whole {
		whole[i] = byte(i)
	}
	want := bytes.Clone(whole)
	Mask(key, 0, want)
	for _, piece := range []int{1, 3, 5, 7, 9, 13, 31, 33, 100} {
		got := bytes.Clone(whole)
		pos := 0
		for p := got; len(p) > 0; {
			k := min(piece, len(p))
			pos = Mask(key, pos, p[:k])
			p = p[k:]
		}
		if !bytes.Equal(got, want) || pos != len(whole) {
			t.Errorf("pieces of %d: differs from the whole, or pos %d", piece, pos)
		}
	}
	// Masking twice is the identity (§5.3).
	Mask(key, 0, want)
	if !bytes.Equal(want, whole) {
		t.Error("masking twice is not the identity")
	}
}
