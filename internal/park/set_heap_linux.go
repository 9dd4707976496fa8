package park

// The deadline heap: parked connections by their deadlines, each
// knowing its index (State.hidx).

func (ps *Set) heapPush(c Parker) {
	setHidx(c, len(ps.heap))
	ps.heap = append(ps.heap, c)
	ps.heapUp(len(ps.heap) - 1)
}

func (ps *Set) heapRemove(i int) {
	h := ps.heap
	last := len(h) - 1
	setHidx(h[i], -1)
	if i != last {
		h[i] = h[last]
		setHidx(h[i], i)
	}
	h[last] = nil
	ps.heap = h[:last]
	if i != last {
		ps.heapDown(i)
		ps.heapUp(i)
	}
}

func (ps *Set) heapUp(i int) {
	h := ps.heap
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].ParkDeadline().Before(h[p].ParkDeadline()) {
			break
		}
		ps.heapSwap(i, p)
		i = p
	}
}

func (ps *Set) heapDown(i int) {
	h := ps.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].ParkDeadline().Before(h[l].ParkDeadline()) {
			m = r
		}
		if !h[m].ParkDeadline().Before(h[i].ParkDeadline()) {
			return
		}
		ps.heapSwap(i, m)
		i = m
	}
}

func (ps *Set) heapSwap(i, j int) {
	h := ps.heap
	h[i], h[j] = h[j], h[i]
	setHidx(h[i], i)
	setHidx(h[j], j)
}

// setHidx records c's index in the deadline heap (-1: not in it).
func setHidx(c Parker, i int) {
	st, _ := c.Parking()
	st.hidx = int32(i)
}
