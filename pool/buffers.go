package pool

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// DefaultMaxBufferBytes is the capacity past which Buffers.Put drops a
// buffer when NewBuffers is given a max of 0: 64 KiB, a few typical
// request or response bodies, small enough that a pool of them costs
// nothing worth noticing.
const DefaultMaxBufferBytes = 64 << 10

// Buffers is a pool of *bytes.Buffer whose Put drops buffers that grew past
// a bound. The zero value is not usable; call NewBuffers. It is safe for
// concurrent use.
type Buffers struct {
	p       sync.Pool
	max     int
	dropped atomic.Uint64
}

// NewBuffers returns a pool that keeps buffers of capacity up to max
// bytes (DefaultMaxBufferBytes if max <= 0) and drops larger ones on Put.
func NewBuffers(max int) *Buffers {
	if max <= 0 {
		max = DefaultMaxBufferBytes
	}
	return &Buffers{max: max}
}

// Get returns an empty buffer, reused when the pool has one.
func (p *Buffers) Get() *bytes.Buffer {
	if b, _ := p.p.Get().(*bytes.Buffer); b != nil {
		return b
	}
	return new(bytes.Buffer)
}

// Put resets b and returns it to the pool, unless its capacity exceeds the
// pool's bound: then b is left to the garbage collector, so one 10 MB body
// does not make every later borrower carry 10 MB.
// b must not be used after Put; a nil b is ignored.
func (p *Buffers) Put(b *bytes.Buffer) {
	if b == nil {
		return
	}
	if b.Cap() > p.max {
		p.dropped.Add(1)
		return
	}
	b.Reset()
	p.p.Put(b)
}

// Max reports the largest capacity Put keeps.
func (p *Buffers) Max() int { return p.max }

// Dropped reports how many buffers Put has dropped for being oversized. A
// count that grows with traffic means bodies vary too much for the bound:
// raise it, or stop pooling (the churn defeats the win).
func (p *Buffers) Dropped() uint64 { return p.dropped.Load() }
