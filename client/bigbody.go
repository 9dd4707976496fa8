package client

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Big request bodies leave as net/http's transport sends them: a body
// with a declared length of bigBodyMin or more is written right after the
// head in 32 KiB pieces, and a chunked body in chunks of up to 32 KiB,
// rather than through the connection's 4 KiB write buffer. Measured here
// on a 1 GB upload from memory, before this: 0.2x net/http's throughput
// at 4.9x its CPU.
//
// A file is copied too, not sent with sendfile, as net/http's transport
// does: on loopback (a local proxy, a sidecar) sendfile was slower.
// `bash bench/client.sh --bench Upload/file --count 10`, 3 MiB from a
// file: 1.47 ms per upload by sendfile against net/http's 1.01, at 0.86x
// its CPU per upload; copied, 1.14 against 1.12 ms.

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
// length of req.Body through a pooled 32 KiB buffer, and checks that the
// body has exactly that length.
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
	buf := chunkBufs.Get().(*[chunkBufSize]byte)
	_, err := io.CopyBuffer(writerOnly{c.nc}, lr, buf[:])
	chunkBufs.Put(buf)
	sent := want - lr.N
	if src.err != nil {
		return fmt.Errorf("%w: %w", errRequestBody, src.err)
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
	return nil
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

// writerOnly hides a writer's ReadFrom from io.CopyBuffer.
type writerOnly struct{ io.Writer }
