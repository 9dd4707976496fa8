package client

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sync"
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

const (
	// bigBodyMin is the declared length from which a body is written
	// straight to the socket.
	bigBodyMin = 64 << 10
	// chunkBufSize is the buffer a big body is copied through, and a
	// chunked body framed in once it outgrows the connection's write
	// buffer.
	chunkBufSize = 32 << 10
)

var chunkBufs = sync.Pool{New: func() any { return new([chunkBufSize]byte) }}

// writeBodyDirect writes what wbuf holds (the head), then the declared
// length of req.Body, by sendfile for a file and through a pooled 32 KiB
// buffer otherwise, and checks that the body has exactly that length.
func (c *conn) writeBodyDirect(req *http.Request) error {
	if len(c.wbuf) > 0 {
		if _, err := c.write(c.wbuf); err != nil {
			return err
		}
		c.wbuf = c.wbuf[:0]
	}
	want := req.ContentLength
	// The body's own errors are noted, to tell them from the socket's.
	src := &bodySource{r: req.Body}
	lr := &io.LimitedReader{R: src, N: want}
	var err error
	f, isFile := req.Body.(*os.File)
	rf, hasRF := c.nc.(io.ReaderFrom)
	if isFile && hasRF {
		lr.R = f // for sendfile, which looks for the file under one LimitedReader
		_, err = rf.ReadFrom(lr)
		if _, ok := errors.AsType[*fs.PathError](err); ok {
			// The file's own error (sendfile's are the socket's).
			src.err, err = err, nil
		}
	} else {
		buf := chunkBufs.Get().(*[chunkBufSize]byte)
		_, err = io.CopyBuffer(writerOnly{c.nc}, lr, buf[:])
		chunkBufs.Put(buf)
	}
	sent := want - lr.N
	if err := src.failure(); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	if sent < want {
		return fmt.Errorf("%w: http: ContentLength=%d with Body length %d", errRequestBody, want, sent)
	}
	var one [1]byte
	if n, _ := io.ReadFull(src, one[:]); n > 0 {
		return fmt.Errorf("%w: http: ContentLength=%d with Body length > %d", errRequestBody, want, want)
	}
	return src.failure() // nil, or the body failed where it should have ended
}

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
	return fmt.Errorf("%w: %w", errRequestBody, s.err)
}

// writerOnly hides a writer's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }
