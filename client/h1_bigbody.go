package client

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"unsafe"

	"github.com/hotpathhq/hotpath/wire"
)

// Big request bodies leave as net/http's transport sends them: a body
// with a declared length of bigBodyMin or more is written right after the
// head, by sendfile for a file and in 32 KiB pieces otherwise, and a
// chunked body in chunks of up to 32 KiB, rather than through the
// connection's 4 KiB write buffer. Measured here on a 1 GB upload from
// memory, before this: 0.2x net/http's throughput at 4.9x its CPU.
//
// A body that is an *os.File itself goes through the socket's ReadFrom
// (sendfile), and any other body, a file behind io.NopCloser included, is
// copied: the same choice as net/http's transport, so that the two make
// the same system calls. (Loopback sendfile is slow on a 2-core VM:
// `bash bench/client.sh --bench Upload/file --count 10`, 3 MiB, took
// 1.47 ms per upload when the file behind io.NopCloser went by sendfile,
// against net/http's 1.01 copying it; 1.20 against 1.11 copied.)

// bigBodyMin is the declared length from which a body is written
// straight to the socket.
const bigBodyMin = 64 << 10

// writeBodyDirect writes what wbuf holds (the head), then the declared
// length of req.Body, by sendfile for a file and through a pooled 32 KiB
// buffer otherwise, and checks that the body has exactly that length. A
// streamed body (written while the response is read) keeps its last byte
// until its end is confirmed, so that a body failing there fails the
// request before the server has all of it.
func (c *conn) writeBodyDirect(req *http.Request, stream bool) error {
	if len(c.wbuf) > 0 {
		if _, err := c.write(c.wbuf); err != nil {
			return err
		}
		c.wbuf = c.wbuf[:0]
	}
	want := req.ContentLength
	f, isFile := unwrapBody(req.Body).(*os.File)
	if !isFile {
		if wt, ok := req.Body.(io.WriterTo); ok {
			return c.writeLengthFrom(wt, want)
		}
	}
	// The body's own errors are noted, to tell them from the socket's.
	src := &bodySource{r: req.Body}
	lr := &io.LimitedReader{R: src, N: want}
	var err error
	rf, hasRF := c.nc.(io.ReaderFrom)
	if isFile && hasRF {
		lr.R = f // for sendfile, which looks for the file under one LimitedReader
		_, err = rf.ReadFrom(lr)
		if _, ok := errors.AsType[*fs.PathError](err); ok {
			// The file's own error (sendfile's are the socket's).
			src.err, err = err, nil
		}
	} else {
		held := stream && want > 0
		if held {
			lr.N--
		}
		buf := chunkBufs.Get().(*[chunkBufSize]byte)
		_, err = io.CopyBuffer(writerOnly{c.nc}, lr, buf[:])
		chunkBufs.Put(buf)
		if held && err == nil && src.failure() == nil && lr.N == 0 {
			return c.writeLastByte(src, want)
		}
		if held {
			lr.N++ // the held byte was never read
		}
	}
	sent := want - lr.N
	if err := src.failure(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if sent < want {
		return bodyShorter(want, sent)
	}
	var one [1]byte
	if n, _ := io.ReadFull(src, one[:]); n > 0 {
		return bodyLonger(want)
	}
	return src.failure() // nil, or the body failed where it should have ended
}

// writeLastByte reads a streamed body's last byte, confirms its end, and
// only then writes the byte.
func (c *conn) writeLastByte(src *bodySource, want int64) error {
	var last [1]byte
	if n, _ := io.ReadFull(src, last[:]); n == 0 {
		if err := src.failure(); err != nil {
			return err
		}
		return bodyShorter(want, want-1)
	}
	var one [1]byte
	if n, _ := io.ReadFull(src, one[:]); n > 0 {
		return bodyLonger(want)
	}
	if err := src.failure(); err != nil {
		return err // the body failed where it should have ended
	}
	_, err := c.write(last[:])
	return err
}

// writeLengthFrom sends a body of declared length want that writes
// itself (a bytes.Reader, an io.MultiReader of them...): each of its
// writes goes to the socket as it is, so a body in memory leaves in one
// write, uncopied (net/http's transport copies it 32 KiB at a time).
func (c *conn) writeLengthFrom(wt io.WriterTo, want int64) error {
	w := &lengthWriter{c: c, left: want}
	_, err := wt.WriteTo(w)
	switch {
	case w.err != nil:
		return w.err // the socket's
	case w.over:
		return bodyLonger(want)
	case err != nil:
		return bodyError(err)
	case w.left > 0:
		return bodyShorter(want, want-w.left)
	}
	return nil
}

// lengthWriter writes to the socket up to left bytes, and refuses more
// (over).
type lengthWriter struct {
	c    *conn
	left int64
	over bool
	err  error // the socket's
}

func (w *lengthWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if int64(len(p)) > w.left {
		w.over = true
		return 0, errBodyTooLong
	}
	n, err := w.c.write(p)
	w.left -= int64(n)
	if err != nil {
		w.err = err
	}
	return n, err
}

// WriteString is Write without copying s (strings.Reader's WriteTo
// calls it): the socket only reads it.
func (w *lengthWriter) WriteString(s string) (int, error) {
	return w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// errBodyTooLong stops a body that writes past its declared length.
var errBodyTooLong = errors.New("client: body longer than its ContentLength")

// bodySource is a request body that keeps its first error other than EOF.
type bodySource struct {
	r   io.Reader
	err error
}

func (s *bodySource) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// failure is the body's own error as the request's, or nil.
func (s *bodySource) failure() error {
	if s.err == nil {
		return nil
	}
	return bodyError(s.err)
}

// writerOnly hides a writer's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }

// writeChunkedFrom sends a chunked body that writes itself (a
// bytes.Reader, a strings.Reader, an io.MultiReader of them, a file): each
// of its writes is a chunk, and one of chunkDirectMin bytes or more goes
// to the socket as it is, after its size line, in one writev where the
// socket takes one (so a body in memory leaves in one chunk, uncopied, as
// net/http's transport sends it); smaller ones gather in wbuf, after the
// head it holds.
func (c *conn) writeChunkedFrom(wt io.WriterTo, trailer http.Header) error {
	w := &chunkWriter{c: c, buf: c.wbuf}
	_, err := wt.WriteTo(w)
	if w.err != nil {
		return w.err // the socket's
	}
	if err != nil {
		return bodyError(err)
	}
	buf := append(w.buf, "0\r\n"...)
	for k, vv := range trailer {
		for _, v := range vv {
			buf = wire.AppendHeader(buf, k, []byte(v))
		}
	}
	buf = append(buf, "\r\n"...)
	_, err = c.write(buf)
	c.wbuf = buf[:0]
	return err
}

// chunkDirectMin is the size from which a chunk goes to the socket
// without a copy.
const chunkDirectMin = 4 << 10

// chunkWriter frames what it is given as chunks (writeChunkedFrom). buf
// holds what is still to be written: the head, small chunks, and the CRLF
// that ends the last chunk written directly.
type chunkWriter struct {
	c   *conn
	buf []byte
	err error // the socket's
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) < chunkDirectMin {
		if len(w.buf)+len(p)+32 > cap(w.buf) && len(w.buf) > 0 {
			if _, err := w.c.write(w.buf); err != nil {
				w.err = err
				return 0, err
			}
			w.buf = w.buf[:0]
		}
		w.buf = wire.AppendChunk(w.buf, p)
		return len(p), nil
	}
	w.buf = wire.AppendChunkHeader(w.buf, len(p))
	bufs := net.Buffers{w.buf, p}
	n, err := bufs.WriteTo(w.c.nc) // writev on a TCP or Unix socket; else a write each
	if n > 0 {
		w.c.wrote = true
	}
	if err != nil {
		w.err = err
		return 0, err
	}
	w.buf = wire.AppendChunkEnd(w.buf[:0])
	return len(p), nil
}

// WriteString is Write without copying s (strings.Reader's WriteTo
// calls it): it is only read, into the buffer or by the socket.
func (w *chunkWriter) WriteString(s string) (int, error) {
	return w.Write(unsafe.Slice(unsafe.StringData(s), len(s)))
}
