package server

import (
	"io"
	"sync"
)

// Body copying shared by both engines' writers (HTTP/1.1 and HTTP/2,
// both APIs): pooled copy buffers and the sniffing window.

// copyBufSize is the size of the buffers bodies are copied through:
// net/http's 32 KiB, a quarter of io.Discard's system calls on an
// upload. Not 64 KiB: a write of exactly 64 KiB to a loopback socket
// (MSS 65,483) leaves a 53-byte segment behind each write, and io.Copy
// of a 1 GB non-file body into a response cost 0.85-0.89 server CPU-s
// in 3 of 5 transfers (net/http 0.25-0.34) before this was 32 KiB.
const copyBufSize = 32 << 10

// copyBufs holds the buffers ReadFrom and the request body's WriteTo
// copy through.
var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// copyBody copies src to dst (a response's Write) through a pooled
// buffer.
func copyBody(dst io.Writer, src io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer(dst, src, buf[:])
}

// writerOnly hides ReadFrom, so io.CopyN into it calls Write.
type writerOnly struct{ io.Writer }

// sniffLen is how many bytes http.DetectContentType looks at.
const sniffLen = 512

// readFromCopy is Ctx.ReadFrom's copy (the engines' fallback when the
// kernel or a mapped file cannot send src): through Write, but up to a
// declared Content-Length only, then ErrContentLength if src has more, so
// the response is complete as declared; a copy through Write alone would
// stop at the last whole buffer before the length (the Write that
// crosses it sends nothing). As HTTP/1.1's sendfile does.
func (x *Ctx) readFromCopy(src io.Reader) (int64, error) {
	r := &x.resp
	if r.declaredLen < 0 {
		return copyBody(writerOnly{x}, src)
	}
	room := max(r.declaredLen-r.sent-int64(len(r.buf)), 0)
	n, err := copyBody(writerOnly{x}, io.LimitReader(src, room))
	if err == nil && n == room {
		var one [1]byte
		if k, _ := src.Read(one[:]); k > 0 {
			return n, ErrContentLength
		}
	}
	return n, err
}
