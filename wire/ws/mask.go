package ws

import (
	"encoding/binary"
	"math/bits"
)

// Mask XORs b in place with the masking key (RFC 6455 §5.3), b being the
// payload bytes from position pos of a frame's payload on: byte i of b is
// XORed with key[(pos+i)%4]. It returns pos+len(b), the position of the
// byte that follows, so that a payload that arrives in pieces is unmasked
// piece by piece:
//
//	pos := 0
//	for each piece p of the payload { pos = ws.Mask(h.Mask, pos, p) }
//
// Masking and unmasking are the same operation. Mask works on eight bytes
// at a time (unaligned loads, which Go compiles to single instructions on
// amd64 and arm64), so it is correct for any alignment and length, and
// allocates nothing.
func Mask(key [4]byte, pos int, b []byte) int {
	end := pos + len(b)
	if len(b) >= 8 {
		// k is the key as eight little-endian bytes, rotated so that its
		// first byte is the one for b[0]; every eight bytes later the key
		// is back in the same phase.
		k32 := bits.RotateLeft32(binary.LittleEndian.Uint32(key[:]), -8*(pos&3))
		k := uint64(k32) | uint64(k32)<<32
		for len(b) >= 32 {
			_ = b[31]
			binary.LittleEndian.PutUint64(b[0:8], binary.LittleEndian.Uint64(b[0:8])^k)
			binary.LittleEndian.PutUint64(b[8:16], binary.LittleEndian.Uint64(b[8:16])^k)
			binary.LittleEndian.PutUint64(b[16:24], binary.LittleEndian.Uint64(b[16:24])^k)
			binary.LittleEndian.PutUint64(b[24:32], binary.LittleEndian.Uint64(b[24:32])^k)
			b = b[32:]
		}
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b[:8], binary.LittleEndian.Uint64(b[:8])^k)
			b = b[8:]
		}
	}
	for i := range b {
		b[i] ^= key[(pos+i)&3]
	}
	return end
}
