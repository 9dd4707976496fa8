package load

// h2Streams maps the IDs of a connection's streams in flight to them: an
// open-addressing table indexed by ID/2 (IDs are consecutive, so streams
// in flight rarely collide), probed linearly, deletions shifting back.
type h2Streams struct {
	slots []*h2Stream // a power of two long
	n     int
}

func (t *h2Streams) init(n int) {
	size := 16
	for size < 4*n {
		size <<= 1
	}
	t.slots = make([]*h2Stream, size)
}

func (t *h2Streams) home(id uint32) int { return int(id>>1) & (len(t.slots) - 1) }

func (t *h2Streams) get(id uint32) *h2Stream {
	m := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & m {
		if st := t.slots[i]; st == nil || st.id == id {
			return st
		}
	}
}

func (t *h2Streams) put(st *h2Stream) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots, t.n = make([]*h2Stream, 2*len(old)), 0
		for _, s := range old {
			if s != nil {
				t.put(s)
			}
		}
	}
	m := len(t.slots) - 1
	i := t.home(st.id)
	for t.slots[i] != nil {
		i = (i + 1) & m
	}
	t.slots[i] = st
	t.n++
}

func (t *h2Streams) del(id uint32) {
	m := len(t.slots) - 1
	i := t.home(id)
	for {
		st := t.slots[i]
		if st == nil {
			return
		}
		if st.id == id {
			break
		}
		i = (i + 1) & m
	}
	// Backward shift (Knuth's Algorithm R): an entry further along the
	// probe run moves into the hole unless its home lies cyclically in
	// (hole, entry].
	for j := i; ; {
		j = (j + 1) & m
		st := t.slots[j]
		if st == nil {
			break
		}
		k := t.home(st.id)
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			t.slots[i] = st
			i = j
		}
	}
	t.slots[i] = nil
	t.n--
}
