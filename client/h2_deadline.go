package client

// HTTP/2 request deadlines: one timer per connection, not one per
// request. The streams with a deadline are in a heap by deadline; the
// timer is set for the earliest only when a new deadline comes before
// the time it is set for. With a fixed Transport.Timeout each new
// deadline is the latest, so the timer is set once and, when it fires
// (the stream it was set for long done), finds nothing due and is set
// again for the earliest deadline still running: about once per Timeout,
// whatever the request rate. Pushing and removing a stream cost a few
// comparisons under cc.mu, already held.

import "time"

// deadlineHeap is a min-heap of streams by deadline; each stream knows
// its index, so that a finished one leaves in O(log n).
type deadlineHeap []*h2Stream

// addDeadlineLocked puts s, whose deadline is set, in the heap, and sets
// the timer earlier if s is due before the time it is set for.
func (cc *h2Conn) addDeadlineLocked(s *h2Stream) {
	h := &cc.deadlines
	s.dlIndex = len(*h)
	*h = append(*h, s)
	h.up(s.dlIndex)
	if cc.dlTimer == nil {
		cc.dlTimer = time.AfterFunc(time.Until(s.deadline), cc.onDeadlines)
		cc.dlAt = s.deadline
	} else if cc.dlAt.IsZero() || s.deadline.Before(cc.dlAt) {
		cc.dlTimer.Reset(time.Until(s.deadline))
		cc.dlAt = s.deadline
	}
}

// removeDeadlineLocked takes s out of the heap. The timer stays set: if it
// fires for nothing, it sets itself for what is due next.
func (cc *h2Conn) removeDeadlineLocked(s *h2Stream) {
	i := s.dlIndex
	if i < 0 {
		return
	}
	h := &cc.deadlines
	last := len(*h) - 1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	if i != last {
		h.down(i)
		h.up(i)
	}
	s.dlIndex = -1
}

// onDeadlines, the connection's timer, fails the requests past their
// deadline and sets the timer for the next one.
func (cc *h2Conn) onDeadlines() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.dlAt = time.Time{}
	now := time.Now()
	for len(cc.deadlines) > 0 {
		s := cc.deadlines[0]
		if s.deadline.After(now) {
			cc.dlTimer.Reset(s.deadline.Sub(now))
			cc.dlAt = s.deadline
			break
		}
		cc.removeDeadlineLocked(s)
		err := error(errRequestTimeout)
		if !s.gotHead && !s.headDL.IsZero() && !s.headDL.After(now) && (s.overall.IsZero() || s.headDL.Before(s.overall)) {
			err = errHeaderTimeout // ResponseHeaderTimeout, not the request's deadline
		} else {
			cc.interruptWriteLocked(s)
		}
		s.expireLocked(err)
	}
	cc.flushLocked(nil) // the resets
}

// less orders the heap: the earliest deadline first.
func (h deadlineHeap) less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }

// swap exchanges two entries and keeps their indexes right.
func (h deadlineHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].dlIndex = i
	h[j].dlIndex = j
}

// up moves entry i toward the root until its parent is due first.
func (h deadlineHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down moves entry i toward the leaves until its children are due later.
func (h deadlineHeap) down(i int) {
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h.less(c+1, c) {
			c++
		}
		if !h.less(c, i) {
			return
		}
		h.swap(i, c)
		i = c
	}
}
