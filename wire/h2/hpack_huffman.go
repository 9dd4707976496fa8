package h2

// Huffman coding of HPACK string literals (RFC 7541 §5.2, Appendix B).
//
// The code is canonical: the codes of one length are consecutive numbers,
// and every longer code's prefix of that length is greater than all of
// them. The decoder looks the next huffFastBits bits up in a table, which
// resolves every code of up to that length (nearly all the bytes of real
// headers), and otherwise walks the lengths upwards comparing the next
// bits against the last code of each length.

const huffFastBits = 10

var (
	// huffFast maps the next huffFastBits bits to sym<<8 | length for a code
	// of at most huffFastBits bits; 0 means a longer code (or padding).
	huffFast [1 << huffFastBits]uint16
	// huffFirst[l] is the first code of length l; huffCount[l] how many
	// there are; huffSyms[huffIndex[l]:] their symbols in code order.
	huffFirst [31]uint32
	huffCount [31]uint32
	huffIndex [31]uint32
	huffSyms  [257]uint16
)

func init() {
	var codes [257]uint32
	var lens [257]uint8
	copy(codes[:], huffCodes[:])
	copy(lens[:], huffLens[:])
	codes[256], lens[256] = huffEOS, 30
	// Symbols by (length, code): a canonical code sorts the same by both.
	n := uint32(0)
	for l := uint8(1); l <= 30; l++ {
		huffIndex[l] = n
		for s := range 257 {
			if lens[s] != l {
				continue
			}
			if huffCount[l] == 0 {
				huffFirst[l] = codes[s]
			}
			huffCount[l]++
			huffSyms[n] = uint16(s)
			n++
		}
	}
	for s := range 256 {
		l := uint(lens[s])
		if l > huffFastBits {
			continue
		}
		lo := codes[s] << (huffFastBits - l)
		for i := range uint32(1) << (huffFastBits - l) {
			huffFast[lo+i] = uint16(s)<<8 | uint16(l)
		}
	}
}

// errHuffman is returned for an invalid Huffman string: one that encodes
// EOS, or ends with padding longer than 7 bits or not all ones (§5.2).
var errHuffman = connError(ErrCodeCompression, "invalid Huffman-encoded string literal (RFC 7541 §5.2)")

// huffmanDecode appends the decoding of src to dst. It fails, with dst
// cut back to its length on entry, if the result would exceed max bytes.
func huffmanDecode(dst, src []byte, max int) ([]byte, *Error) {
	start := len(dst)
	var acc uint64 // next bits, left-aligned
	var nbits uint
	i := 0
	for {
		for nbits <= 56 && i < len(src) {
			acc |= uint64(src[i]) << (56 - nbits)
			nbits += 8
			i++
		}
		if nbits == 0 {
			return dst, nil
		}
		var sym, l uint
		if e := huffFast[acc>>(64-huffFastBits)]; e != 0 && uint(e&0xff) <= nbits {
			sym, l = uint(e>>8), uint(e&0xff)
		} else {
			for l = huffFastBits + 1; l <= 30 && l <= nbits; l++ {
				if c := uint32(acc >> (64 - l)); c-huffFirst[l] < huffCount[l] {
					sym = uint(huffSyms[huffIndex[l]+c-huffFirst[l]])
					break
				}
			}
			if l > 30 || l > nbits {
				// No code fits in what is left: it must be padding, at
				// most 7 bits, all ones (the start of EOS).
				if nbits > 7 || acc>>(64-nbits) != 1<<nbits-1 {
					return dst[:start], errHuffman
				}
				return dst, nil
			}
			if sym == 256 {
				return dst[:start], errHuffman
			}
		}
		if len(dst)-start >= max {
			return dst[:start], errStringTooLong
		}
		dst = append(dst, byte(sym))
		acc <<= l
		nbits -= l
	}
}

// huffmanLen returns the length in bytes of s Huffman-encoded.
func huffmanLen[S string | []byte](s S) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += int(huffLens[s[i]])
	}
	return (n + 7) / 8
}

// huffmanAppend appends s Huffman-encoded to dst, padded with the high bits
// of EOS (ones) to a whole byte.
func huffmanAppend[S string | []byte](dst []byte, s S) []byte {
	var acc uint64 // pending bits, right-aligned
	var nbits uint
	for i := 0; i < len(s); i++ {
		c := s[i]
		acc = acc<<huffLens[c] | uint64(huffCodes[c])
		nbits += uint(huffLens[c])
		for nbits >= 8 {
			nbits -= 8
			dst = append(dst, byte(acc>>nbits))
		}
	}
	if nbits > 0 {
		dst = append(dst, byte(acc<<(8-nbits))|byte(1<<(8-nbits)-1))
	}
	return dst
}
