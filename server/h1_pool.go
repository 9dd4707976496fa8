package server

import "sync"

// blockSize is the size of each pooled connection buffer. 4 KiB holds a
// typical request head and a small response; larger needs grow a private
// buffer that is dropped, not pooled, when the connection goes idle.
const blockSize = 4 << 10

type block [blockSize]byte

// bufSetPool shares buffer sets between connections. A connection takes a
// set when bytes arrive and gives it back when it goes idle, so idle
// connections hold none. (Seed 001 blamed sync.Pool for lock contention;
// sync.Pool is per-P and lock-free on the fast path, and one Get and Put
// per request burst costs tens of nanoseconds: hotpath lab measures it.)
type bufSetPool struct{ p sync.Pool }

func newBufPool() *bufSetPool {
	return &bufSetPool{p: sync.Pool{New: func() any { return new(bufs) }}}
}

func (p *bufSetPool) get() *bufs  { return p.p.Get().(*bufs) }
func (p *bufSetPool) put(b *bufs) { p.p.Put(b) }
