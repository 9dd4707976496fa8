package server

import "sync"

// HTTP/1.1 engine: a connection's buffer sets, taken from a pool when
// bytes arrive and given back when it goes idle (acquire, release).

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

// bufs is the working memory of a connection with a request in hand: the
// read buffer the request head is parsed in place from, the write buffer
// responses are batched in, and the buffer a response body is collected in
// until its length is known. Sets come from a pool and go back to it when
// the connection goes idle.
type bufs struct {
	r, w, b block
}

var bufPool = newBufPool()

// acquire makes sure the connection holds a buffer set.
func (c *conn) acquire() {
	if c.set == nil {
		c.set = bufPool.get()
		c.setHeld.Store(true)
		c.rbuf = c.set.r[:]
		c.wbuf = c.set.w[:0]
		c.ctx.resp.buf = c.set.b[:0]
	}
}

// release gives the buffer set back to the pool. Only called with no
// unread input, no unwritten output and no request in hand.
func (c *conn) release() {
	if c.set != nil {
		bufPool.put(c.set)
		c.set = nil
		c.setHeld.Store(false)
		c.rbuf, c.wbuf, c.ctx.resp.buf = nil, nil, nil
		c.r, c.w = 0, 0
	}
}

// shrink drops buffers that grew past the pooled size, so a connection
// that once saw a big request does not keep the memory.
func (c *conn) shrink() {
	if c.set != nil {
		c.rbuf = c.set.r[:]
		c.wbuf = c.set.w[:0]
		c.ctx.resp.buf = c.set.b[:0]
	}
}
