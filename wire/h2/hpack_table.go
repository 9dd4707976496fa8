package h2

// The HPACK dynamic table (RFC 7541 §2.3.2, §4).
//
// Entries live back to back in one byte buffer, oldest first; ents holds
// their offsets and lengths, oldest first too. Insertion appends; eviction
// moves the start forward. When an insertion would not fit in the buffer,
// the live entries (at most maxSize bytes) move to its front, so the buffer
// never grows beyond about twice the table's maximum size and steady state
// allocates nothing. It starts small and doubles as the entries need.

// entryOverhead is the per-entry cost counted in the table size (§4.1).
const entryOverhead = 32

// minTableBuf is the first size of a table's buffer.
const minTableBuf = 256

type entry struct {
	off        uint32 // of the name in buf; the value follows it
	nlen, vlen uint32
}

type dynTable struct {
	buf     []byte
	bufLo   int     // buf[:bufLo] holds evicted entries
	ents    []entry // ents[entLo:] are live, oldest first
	entLo   int
	size    uint32 // sum of the live entries' sizes (§4.1)
	maxSize uint32 // current maximum size, as last set by a size update
}

func (t *dynTable) len() int { return len(t.ents) - t.entLo }

// at returns the i-th most recent entry, i ≥ 1, as dynamic index 61+i.
func (t *dynTable) at(i int) (name, value []byte) {
	e := t.ents[len(t.ents)-i]
	b := t.buf[e.off : e.off+e.nlen+e.vlen]
	return b[:e.nlen], b[e.nlen:]
}

func (t *dynTable) evictOldest() {
	e := t.ents[t.entLo]
	t.entLo++
	t.size -= e.nlen + e.vlen + entryOverhead
	t.bufLo = int(e.off + e.nlen + e.vlen)
	if t.entLo == len(t.ents) {
		t.ents, t.entLo, t.buf, t.bufLo = t.ents[:0], 0, t.buf[:0], 0
	}
}

// setMaxSize sets the maximum size and evicts what no longer fits (§4.3).
func (t *dynTable) setMaxSize(n uint32) {
	t.maxSize = n
	for t.size > n {
		t.evictOldest()
	}
}

// trim lets go of what the table holds beyond its live entries: for a
// connection about to idle for long.
func (t *dynTable) trim() {
	if t.len() == 0 {
		t.buf, t.bufLo, t.ents, t.entLo = nil, 0, nil, 0
		return
	}
	live := t.buf[t.bufLo:]
	nb := make([]byte, len(live))
	copy(nb, live)
	ents := make([]entry, t.len())
	copy(ents, t.ents[t.entLo:])
	shift := uint32(t.bufLo)
	for i := range ents {
		ents[i].off -= shift
	}
	t.buf, t.bufLo, t.ents, t.entLo = nb, 0, ents, 0
}

// tableAdd inserts a new entry, evicting as needed; an entry larger than
// the maximum size empties the table and is not added (§4.4). name and
// value must not point into t.buf.
func tableAdd[S string | []byte](t *dynTable, name, value S) {
	sz := uint64(len(name)) + uint64(len(value)) + entryOverhead
	if sz > uint64(t.maxSize) {
		for t.len() > 0 {
			t.evictOldest()
		}
		return
	}
	for uint64(t.size)+sz > uint64(t.maxSize) {
		t.evictOldest()
	}
	n := len(name) + len(value)
	if len(t.buf)+n > cap(t.buf) {
		t.compact(n)
	}
	if t.entLo > 0 && len(t.ents) == cap(t.ents) {
		k := copy(t.ents, t.ents[t.entLo:])
		t.ents, t.entLo = t.ents[:k], 0
	}
	off := uint32(len(t.buf))
	t.buf = append(t.buf, name...)
	t.buf = append(t.buf, value...)
	t.ents = append(t.ents, entry{off: off, nlen: uint32(len(name)), vlen: uint32(len(value))})
	t.size += uint32(sz)
}

// compact moves the live entries to the front of buf, growing it if need
// be so that n more bytes fit.
func (t *dynTable) compact(n int) {
	live := t.buf[t.bufLo:]
	if len(live)+n > cap(t.buf) {
		// Grow by doubling from a small start, up to about twice the
		// maximum size: a connection whose table holds a few fields
		// keeps a few hundred bytes, not 8 KiB, while it idles.
		c := max(2*cap(t.buf), minTableBuf)
		c = min(c, 2*int(t.maxSize)+64)
		if c < len(live)+n {
			c = len(live) + n
		}
		nb := make([]byte, len(live), c)
		copy(nb, live)
		t.buf = nb
	} else {
		t.buf = t.buf[:copy(t.buf, live)]
	}
	shift := uint32(t.bufLo)
	for i := t.entLo; i < len(t.ents); i++ {
		t.ents[i].off -= shift
	}
	t.bufLo = 0
}

// tableSearch looks for name and value among the entries, newest first,
// and returns the dynamic index (1-based, newest 1) of an entry with both
// (full) or failing that of one with the name; 0 if none.
func tableSearch[S string | []byte](t *dynTable, name, value S) (idx int, full bool) {
	for i := len(t.ents) - 1; i >= t.entLo; i-- {
		e := t.ents[i]
		if int(e.nlen) != len(name) || int(e.vlen) != len(value) && idx != 0 {
			continue
		}
		if string(t.buf[e.off:e.off+e.nlen]) != string(name) {
			continue
		}
		if int(e.vlen) == len(value) && string(t.buf[e.off+e.nlen:e.off+e.nlen+e.vlen]) == string(value) {
			return len(t.ents) - i, true
		}
		if idx == 0 {
			idx = len(t.ents) - i
		}
	}
	return idx, false
}
