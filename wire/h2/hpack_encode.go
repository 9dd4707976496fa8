package h2

// HPACK encoding (RFC 7541 §6).

// Encoder encodes HPACK field blocks. One Encoder serves one direction of
// one connection: the dynamic table carries state from block to block,
// so blocks must reach the peer in the order they were encoded. The zero
// Encoder is ready, with the 4096-byte table every connection starts with.
//
// A block is StartBlock followed by one AppendField per field. The
// Encoder indexes what repeats: a field found whole in the static or
// dynamic table is sent as an index; otherwise the field is sent as a
// literal (its name as an index where the tables have it), added to the
// dynamic table unless it is sensitive or unlikely to repeat. Strings are
// Huffman-coded when that is shorter. Sensitive fields (RFC 7541 §7.1.3:
// authorization, proxy-authorization, and cookies shorter than 20 bytes,
// whose values are easy to guess) are sent "never indexed".
//
// An Encoder does not allocate once its table has filled.
type Encoder struct {
	// MaxTableSize caps the dynamic table this Encoder uses, whatever the
	// peer allows: the memory an encoder spends per connection. 0 means
	// DefaultMaxTableSize; set it before the first block.
	MaxTableSize uint32

	table   dynTable
	started bool
	// A table size change waiting for the next block: the smallest size
	// since the last block (minSize) and the size to end with (§4.2).
	pending          bool
	minSize, endSize uint32
	peerLimit        uint32
}

func (e *Encoder) start() {
	if e.started {
		return
	}
	e.started = true
	e.peerLimit = DefaultMaxTableSize
	e.table.maxSize = DefaultMaxTableSize
	e.resize()
}

func (e *Encoder) resize() {
	want := e.peerLimit
	if c := e.MaxTableSize; c != 0 && c < want {
		want = c
	} else if c == 0 && want > DefaultMaxTableSize {
		want = DefaultMaxTableSize
	}
	if want == e.table.maxSize && !e.pending {
		return
	}
	if !e.pending {
		e.pending, e.minSize = true, want
	}
	e.minSize = min(e.minSize, want)
	e.endSize = want
	e.table.setMaxSize(want)
}

// SetMaxTableSize records the peer's SETTINGS_HEADER_TABLE_SIZE. The
// Encoder uses min(n, MaxTableSize) and announces a change with a size
// update at the start of the next block.
func (e *Encoder) SetMaxTableSize(n uint32) {
	e.start()
	e.peerLimit = n
	e.resize()
}

// Empty empties the dynamic table and lets go of its memory, for a
// connection about to idle for long: the next block starts with a size
// update to 0 and back (RFC 7541 §4.2), so that the peer's copy of the
// table empties too. Its entries are inserted again as they recur.
func (e *Encoder) Empty() {
	if !e.started {
		return
	}
	if e.table.len() > 0 {
		if !e.pending {
			e.pending, e.endSize = true, e.table.maxSize
		}
		e.minSize = 0
	}
	max := e.table.maxSize
	e.table = dynTable{maxSize: max}
}

// StartBlock begins a field block: it appends the dynamic table size
// updates a table size change calls for (RFC 7541 §4.2), if any. Call it
// before the first AppendField of every block.
func (e *Encoder) StartBlock(dst []byte) []byte {
	e.start()
	if !e.pending {
		return dst
	}
	e.pending = false
	if e.minSize < e.endSize {
		dst = appendInt(dst, 0x20, 5, uint64(e.minSize))
	}
	return appendInt(dst, 0x20, 5, uint64(e.endSize))
}

// AppendField appends one field to the block being built in dst. name
// must be lowercase (RFC 9113 §8.2.1); the Encoder sends it as given.
func (e *Encoder) AppendField(dst []byte, name, value string) []byte {
	return appendField(e, dst, name, value)
}

// AppendFieldBytes is AppendField for byte slices.
func (e *Encoder) AppendFieldBytes(dst []byte, name, value []byte) []byte {
	return appendField(e, dst, name, value)
}

func appendField[S string | []byte](e *Encoder, dst []byte, name, value S) []byte {
	if e.pending || !e.started {
		panic("h2: Encoder.AppendField before StartBlock")
	}
	sens := sensitive(name, value)
	sidx, sfull := staticSearch(name, value)
	if sfull && !sens {
		return appendInt(dst, 0x80, 7, uint64(sidx))
	}
	didx, dfull := tableSearch(&e.table, name, value)
	if dfull && !sens {
		return appendInt(dst, 0x80, 7, uint64(len(staticTable)+didx))
	}
	nameIdx := sidx
	if nameIdx == 0 && didx != 0 {
		nameIdx = len(staticTable) + didx
	}
	switch {
	case sens:
		// Sent as a literal even when a table holds it, so that the peer
		// and every intermediary see the never-indexed flag.
		dst = appendInt(dst, 0x10, 4, uint64(nameIdx)) // never indexed (§6.2.3)
	case noIndex(name) || uint64(len(name)+len(value))+entryOverhead > uint64(e.table.maxSize):
		dst = appendInt(dst, 0x00, 4, uint64(nameIdx)) // without indexing (§6.2.2)
	default:
		dst = appendInt(dst, 0x40, 6, uint64(nameIdx)) // incremental indexing (§6.2.1)
		tableAdd(&e.table, name, value)
	}
	if nameIdx == 0 {
		dst = appendString(dst, name)
	}
	return appendString(dst, value)
}

// sensitive reports fields sent never indexed (RFC 7541 §7.1.3).
func sensitive[S string | []byte](name, value S) bool {
	switch string(name) {
	case "authorization", "proxy-authorization":
		return true
	case "cookie":
		return len(value) < 20
	}
	return false
}

// noIndex reports fields whose values rarely repeat: indexing them would
// only push useful entries out of the table.
func noIndex[S string | []byte](name S) bool {
	switch string(name) {
	case "content-length", "etag", "if-modified-since", "if-none-match", "last-modified", "age", "content-range", "range":
		return true
	}
	return false
}

// staticByName maps a static table name to its first index and the number
// of entries with that name (they are consecutive).
var staticByName = func() map[string]struct{ first, n uint8 } {
	m := make(map[string]struct{ first, n uint8 })
	for i, e := range staticTable {
		r := m[e.name]
		if r.n == 0 {
			r.first = uint8(i + 1)
		}
		r.n++
		m[e.name] = r
	}
	return m
}()

// staticSearch returns the static index of an entry with name and value
// (full), or of the first one with the name; 0 if none.
func staticSearch[S string | []byte](name, value S) (idx int, full bool) {
	r, ok := staticByName[string(name)]
	if !ok {
		return 0, false
	}
	for i := int(r.first); i < int(r.first)+int(r.n); i++ {
		if staticTable[i-1].value == string(value) {
			return i, true
		}
	}
	return int(r.first), false
}

// appendInt appends v as an integer with an n-bit prefix (§5.1); flags are
// the bits above the prefix in the first byte.
func appendInt(dst []byte, flags byte, n uint, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(dst, flags|byte(v))
	}
	dst = append(dst, flags|byte(max))
	v -= max
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendString appends a string literal (§5.2), Huffman-coded when that
// is shorter.
func appendString[S string | []byte](dst []byte, s S) []byte {
	if h := huffmanLen(s); h < len(s) {
		dst = appendInt(dst, 0x80, 7, uint64(h))
		return huffmanAppend(dst, s)
	}
	dst = appendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}
