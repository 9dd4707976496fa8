package pool

import (
	"bufio"
	"io"
	"sync"
)

// DefaultBufioSize is the buffer size of Readers and Writers when their
// constructor is given 0: bufio's own default, 4 KiB.
const DefaultBufioSize = 4096

// Readers is a pool of *bufio.Reader of one buffer size. The zero value is
// not usable; call NewReaders. It is safe for concurrent use.
type Readers struct {
	p    sync.Pool
	size int
}

// NewReaders returns a pool of readers with size-byte buffers
// (DefaultBufioSize if size <= 0).
func NewReaders(size int) *Readers {
	if size <= 0 {
		size = DefaultBufioSize
	}
	return &Readers{size: size}
}

// Get returns a reader that reads from src, with an empty buffer.
func (p *Readers) Get(src io.Reader) *bufio.Reader {
	if br, _ := p.p.Get().(*bufio.Reader); br != nil {
		br.Reset(src)
		return br
	}
	return bufio.NewReaderSize(src, p.size)
}

// Put resets br to read from nothing and returns it to the pool: unread
// bytes are discarded (the next borrower never sees them) and br no
// longer holds its source alive. A reader whose
// buffer size is not the pool's is dropped. br must not be used after Put;
// a nil br is ignored.
func (p *Readers) Put(br *bufio.Reader) {
	if br == nil || br.Size() != p.size {
		return
	}
	br.Reset(nil)
	p.p.Put(br)
}

// Writers is a pool of *bufio.Writer of one buffer size. The zero value is
// not usable; call NewWriters. It is safe for concurrent use.
type Writers struct {
	p    sync.Pool
	size int
}

// NewWriters returns a pool of writers with size-byte buffers
// (DefaultBufioSize if size <= 0).
func NewWriters(size int) *Writers {
	if size <= 0 {
		size = DefaultBufioSize
	}
	return &Writers{size: size}
}

// Get returns a writer that writes to dst, with an empty buffer.
func (p *Writers) Get(dst io.Writer) *bufio.Writer {
	if bw, _ := p.p.Get().(*bufio.Writer); bw != nil {
		bw.Reset(dst)
		return bw
	}
	return bufio.NewWriterSize(dst, p.size)
}

// Put resets bw and returns it to the pool. Bytes not yet flushed are
// discarded, not written: call Flush first and check its error. A writer
// whose buffer size is not the pool's is dropped. bw must not be used
// after Put; a nil bw is ignored.
func (p *Writers) Put(bw *bufio.Writer) {
	if bw == nil || bw.Size() != p.size {
		return
	}
	bw.Reset(nil)
	p.p.Put(bw)
}
