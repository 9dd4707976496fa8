package h2

// HPACK decoding (RFC 7541 §3, §5, §6).

// Field is one decoded header field. Sensitive reports a field sent as
// "never indexed" (RFC 7541 §6.2.3): an intermediary must forward it the
// same way.
type Field struct {
	Name, Value []byte
	Sensitive   bool
}

// DefaultMaxTableSize is the dynamic table size every HPACK context starts
// with (SETTINGS_HEADER_TABLE_SIZE's initial value, RFC 9113 §6.5.2).
const DefaultMaxTableSize = 4096

// DefaultMaxHeaderListSize is the Decoder's default MaxHeaderListSize: 64
// KiB, wire.DefaultMaxHeaderBytes, HTTP/1.1's limit in hotpath.
const DefaultMaxHeaderListSize = 64 << 10

// HPACK errors. Every one but ErrHeaderListTooLarge is a connection error
// with COMPRESSION_ERROR (RFC 9113 §4.3): the block could not be decoded,
// so the dynamic tables of the two ends may disagree from here on.
var (
	ErrHPACKTruncated    = connError(ErrCodeCompression, "field block ends inside a representation (RFC 7541 §6)")
	ErrHPACKInteger      = connError(ErrCodeCompression, "HPACK integer overflows (RFC 7541 §5.1)")
	ErrHPACKIndex        = connError(ErrCodeCompression, "HPACK index 0 or past the end of the static and dynamic tables (RFC 7541 §2.3.3)")
	ErrTableSizeUpdate   = connError(ErrCodeCompression, "dynamic table size update above SETTINGS_HEADER_TABLE_SIZE (RFC 7541 §6.3)")
	ErrLateSizeUpdate    = connError(ErrCodeCompression, "dynamic table size update after a field in the block (RFC 7541 §4.2)")
	ErrMissingSizeUpdate = connError(ErrCodeCompression, "field block does not start with the dynamic table size update that a smaller SETTINGS_HEADER_TABLE_SIZE requires (RFC 7541 §4.2)")
	errStringTooLong     = connError(ErrCodeCompression, "HPACK string literal exceeds the decoder's MaxStringLength")
	// ErrStringTooLong is the error for a string literal longer than
	// Decoder.MaxStringLength.
	ErrStringTooLong = errStringTooLong
	// ErrHPACKBomb reports a block whose fields add up to more than four
	// times MaxHeaderListSize: past that, reading on to keep the table in
	// step costs more than the connection is worth, and the connection
	// ends (ENHANCE_YOUR_CALM, RFC 9113 §7). A block of one-byte references
	// to a 4 KiB entry, or of two-byte literals that copy one into the
	// table, lands here after 256 KiB of work at the default limit.
	ErrHPACKBomb = connError(ErrCodeEnhanceYourCalm, "field block decodes to more than 4 times MaxHeaderListSize (an HPACK bomb)")
	// ErrHeaderListTooLarge reports a block whose fields add up (name +
	// value + 32 each, RFC 9113 §6.5.2) to more than MaxHeaderListSize. The
	// decoder read the whole block, so its table is in step and the
	// connection can go on: this is a stream error, and a server may answer
	// 431 (Request Header Fields Too Large, RFC 9113 §10.5.1) instead of
	// RST_STREAM.
	ErrHeaderListTooLarge = streamError(ErrCodeProtocol, "header list exceeds MaxHeaderListSize (RFC 9113 §6.5.2, §10.5.1)")
)

// Decoder decodes HPACK field blocks. One Decoder serves one direction of
// one connection, for its whole life: the dynamic table carries state from
// block to block. The zero Decoder is ready, with a 4096-byte table and
// the default limits.
//
// A Decoder does not allocate once its buffers have grown to the largest
// block seen.
type Decoder struct {
	// MaxHeaderListSize caps a block's decoded size as RFC 9113 §6.5.2
	// counts it (the sum of name, value and 32 bytes per field): the limit
	// a server advertises in SETTINGS_MAX_HEADER_LIST_SIZE. Past it, the
	// decoder goes on reading the block, to keep its table in step, but
	// emits no more fields and copies only what the table needs, then
	// fails with ErrHeaderListTooLarge, a stream error. Past four times
	// it, it stops with ErrHPACKBomb, a connection error: a block that
	// refers a thousand times to one large table entry costs at most that
	// much work. 0 means DefaultMaxHeaderListSize.
	MaxHeaderListSize int
	// MaxStringLength caps one string literal, before and after Huffman
	// decoding; a longer one is ErrStringTooLong, a connection error. 0
	// means MaxHeaderListSize.
	MaxStringLength int

	table    dynTable
	started  bool
	limit    uint32 // SETTINGS_HEADER_TABLE_SIZE this endpoint advertised
	mustSize bool   // the limit fell below table.maxSize: next block must update
	arena    []byte // strings emitted by the current block
}

func (d *Decoder) start() {
	if !d.started {
		d.started = true
		d.limit = DefaultMaxTableSize
		d.table.maxSize = DefaultMaxTableSize
	}
}

// SetMaxTableSize sets the dynamic table size limit this endpoint
// advertises in SETTINGS_HEADER_TABLE_SIZE; call it once the peer has
// acknowledged the SETTINGS frame. Size updates in later blocks may not
// exceed it; if it is lower than the table's current maximum, the next
// block must begin with a size update that honours it (RFC 7541 §4.2).
func (d *Decoder) SetMaxTableSize(n uint32) {
	d.start()
	d.limit = n
	// Lowered and raised again before the next block, the limit may need
	// no update any more; an encoder may still send one.
	d.mustSize = n < d.table.maxSize
}

// TableSize returns the dynamic table's current size and maximum size
// (RFC 7541 §4.1), for tests and metrics.
func (d *Decoder) TableSize() (size, max uint32) { return d.table.size, d.table.maxSize }

// Trim lets go of the memory the dynamic table holds beyond its entries,
// for a connection about to idle for long. The entries stay: the peer's
// encoder refers to them.
func (d *Decoder) Trim() { d.table.trim() }

// Decode decodes one complete field block: the fragments of a HEADERS or
// PUSH_PROMISE frame and its CONTINUATION frames, joined. It calls emit
// for each field in order.
//
// The slices of a Field are valid until the next call of a Decoder method
// and must not be modified: they point into block (string literals sent
// as they are) or into a buffer the Decoder owns and reuses (Huffman-coded
// literals, and copies of table entries). A caller that keeps fields past
// that copies them.
//
// An error is an [*Error]: see the Err... variables. After a connection
// error the Decoder must not be used again. After ErrHeaderListTooLarge it
// may: emit saw the fields up to the limit.
func (d *Decoder) Decode(block []byte, emit func(Field)) error {
	if _, err := d.decode(block, emit, nil); err != nil {
		return err
	}
	return nil
}

// AppendFields decodes a block as Decode does and appends its fields to
// dst; with a dst of enough capacity it does not allocate.
func (d *Decoder) AppendFields(dst []Field, block []byte) ([]Field, error) {
	dst, err := d.decode(block, nil, dst)
	if err != nil {
		return dst, err
	}
	return dst, nil
}

// decode decodes block b, giving each field to emit, or if emit is nil
// appending it to dst.
func (d *Decoder) decode(b []byte, emit func(Field), dst []Field) ([]Field, *Error) {
	d.start()
	d.arena = d.arena[:0]
	maxList := d.MaxHeaderListSize
	if maxList <= 0 {
		maxList = DefaultMaxHeaderListSize
	}
	maxStr := d.MaxStringLength
	if maxStr <= 0 {
		maxStr = maxList
	}
	listSize := 0
	tooLarge := false
	first := true // no field yet: size updates allowed
	for len(b) > 0 {
		c := b[0]
		if c&0xe0 == 0x20 { // 001xxxxx: dynamic table size update (§6.3)
			if !first {
				return dst, ErrLateSizeUpdate
			}
			v, rest, err := readInt(b, 5)
			if err != nil {
				return dst, err
			}
			if v > uint64(d.limit) {
				return dst, ErrTableSizeUpdate
			}
			d.table.setMaxSize(uint32(v))
			d.mustSize = false
			b = rest
			continue
		}
		if d.mustSize {
			return dst, ErrMissingSizeUpdate
		}
		first = false
		var f Field
		var index uint64
		var rest []byte
		var err *Error
		indexing := false
		switch {
		case c&0x80 != 0: // 1xxxxxxx: indexed field (§6.1)
			index, rest, err = readInt(b, 7)
			if err != nil {
				return dst, err
			}
			if index == 0 {
				return dst, ErrHPACKIndex
			}
		case c&0xc0 == 0x40: // 01xxxxxx: literal with incremental indexing (§6.2.1)
			indexing = true
			index, rest, err = readInt(b, 6)
		default: // 0000xxxx without indexing, 0001xxxx never indexed (§6.2.2, §6.2.3)
			f.Sensitive = c&0x10 != 0
			index, rest, err = readInt(b, 4)
		}
		if err != nil {
			return dst, err
		}
		b = rest
		// With the list over the limit, strings go to the arena only when
		// the table needs them, and the arena is cut back afterwards.
		mark := len(d.arena)
		if c&0x80 != 0 {
			name, value, err := d.lookup(index)
			if err != nil {
				return dst, err
			}
			listSize += len(name) + len(value) + entryOverhead
			if listSize > maxList {
				if listSize > bombFactor*maxList {
					return dst, ErrHPACKBomb
				}
				tooLarge = true
				continue
			}
			f.Name = d.keep(name)
			f.Value = d.keep(value)
		} else {
			if index != 0 {
				name, _, err := d.lookup(index)
				if err != nil {
					return dst, err
				}
				if !tooLarge || indexing {
					// A copy: adding to the table may move its entries.
					f.Name = d.keep(name)
				}
			} else {
				f.Name, b, err = d.readString(b, maxStr)
				if err != nil {
					return dst, err
				}
			}
			f.Value, b, err = d.readString(b, maxStr)
			if err != nil {
				return dst, err
			}
			if indexing {
				tableAdd(&d.table, f.Name, f.Value)
			}
			// Counted in full even when the name was not copied: the
			// work is the same.
			if f.Name == nil && index != 0 {
				name, _, _ := d.lookup(index)
				listSize += len(name)
			}
			listSize += len(f.Name) + len(f.Value) + entryOverhead
			if listSize > maxList {
				if listSize > bombFactor*maxList {
					return dst, ErrHPACKBomb
				}
				tooLarge = true
			}
		}
		if tooLarge {
			d.arena = d.arena[:mark]
			continue
		}
		if emit != nil {
			emit(f)
		} else {
			dst = append(dst, f)
		}
	}
	if tooLarge {
		return dst, ErrHeaderListTooLarge
	}
	return dst, nil
}

// bombFactor is how far past MaxHeaderListSize a block may decode before
// the decoder gives up on it (ErrHPACKBomb).
const bombFactor = 4

// keep copies s into the arena, so that it outlives table changes.
func (d *Decoder) keep(s []byte) []byte {
	n := len(d.arena)
	d.arena = append(d.arena, s...)
	return d.arena[n:len(d.arena):len(d.arena)]
}

// lookup returns the entry at index in the static and dynamic tables
// (§2.3.3), as slices the caller must not keep: dynamic entries move.
func (d *Decoder) lookup(index uint64) (name, value []byte, err *Error) {
	switch {
	case index == 0:
		return nil, nil, ErrHPACKIndex
	case index <= uint64(len(staticTable)):
		e := &staticBytes[index-1]
		return e.name, e.value, nil
	case index-uint64(len(staticTable)) <= uint64(d.table.len()):
		name, value = d.table.at(int(index) - len(staticTable))
		return name, value, nil
	}
	return nil, nil, ErrHPACKIndex
}

// staticBytes is staticTable as byte slices, never handed out: the decoder
// copies from it.
var staticBytes = func() (t [len(staticTable)]struct{ name, value []byte }) {
	for i, e := range staticTable {
		t[i].name, t[i].value = []byte(e.name), []byte(e.value)
	}
	return t
}()

// readString reads a string literal (§5.2) from the front of b. A plain
// literal is returned in place; a Huffman-coded one is decoded into the
// arena.
func (d *Decoder) readString(b []byte, max int) (s, rest []byte, err *Error) {
	if len(b) == 0 {
		return nil, nil, ErrHPACKTruncated
	}
	huff := b[0]&0x80 != 0
	n, b, err := readInt(b, 7)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(max) {
		return nil, nil, errStringTooLong
	}
	if n > uint64(len(b)) {
		return nil, nil, ErrHPACKTruncated
	}
	s, rest = b[:n:n], b[n:]
	if !huff {
		return s, rest, nil
	}
	mark := len(d.arena)
	d.arena, err = huffmanDecode(d.arena, s, max)
	if err != nil {
		return nil, nil, err
	}
	return d.arena[mark:len(d.arena):len(d.arena)], rest, nil
}

// readInt reads an integer with an n-bit prefix (§5.1) from the front of
// b, whose first byte holds the prefix. Values past 2^63 fail, as do
// encodings of more than 10 bytes after the prefix.
func readInt(b []byte, n uint) (v uint64, rest []byte, err *Error) {
	if len(b) == 0 {
		return 0, nil, ErrHPACKTruncated
	}
	max := uint64(1)<<n - 1
	v = uint64(b[0]) & max
	if v < max {
		return v, b[1:], nil
	}
	for i, shift := 1, uint(0); i < len(b); i, shift = i+1, shift+7 {
		c := b[i]
		if shift >= 63 {
			return 0, nil, ErrHPACKInteger
		}
		add := uint64(c&0x7f) << shift
		if add>>shift != uint64(c&0x7f) || v+add < v {
			return 0, nil, ErrHPACKInteger
		}
		v += add
		if c&0x80 == 0 {
			return v, b[i+1:], nil
		}
	}
	return 0, nil, ErrHPACKTruncated
}
