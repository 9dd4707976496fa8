package client

// Writing an HTTP/1.1 request body through the connection's write
// buffer (big ones: h1_bigbody.go; streamed ones: h1_upload.go).

import (
	"io"
	"net/http"
	"os"

	"github.com/hotpathhq/hotpath/wire"
)

// writeBody appends the request body to what wbuf holds and writes it all,
// flushing whenever the buffer fills, or (stream) after each piece the
// body yields, so that a body fed by the far end never waits in the
// buffer. It closes req.Body. A big body takes the direct path
// (writeBodyDirect), a chunked one that writes itself (io.WriterTo) is
// framed as it writes (writeChunkedFrom), and any other chunked one that
// outgrows wbuf is framed in a pooled 32 KiB buffer.
func (c *conn) writeBody(req *http.Request, chunked, stream bool) error {
	defer req.Body.Close()
	if _, isFile := unwrapBody(req.Body).(*os.File); !chunked && (req.ContentLength >= bigBodyMin || isFile && req.ContentLength > 0) {
		// A file of any size goes by sendfile, as net/http's does.
		return c.writeBodyDirect(req, stream)
	}
	if wt, ok := req.Body.(io.WriterTo); ok && chunked {
		return c.writeChunkedFrom(wt, req.Trailer)
	}
	buf := c.wbuf
	var big *[chunkBufSize]byte
	defer func() {
		if big != nil {
			chunkBufs.Put(big)
		}
	}()
	var written int64
	for {
		if cap(buf)-len(buf) < 512 {
			if _, err := c.write(buf); err != nil {
				return err
			}
			if chunked && big == nil {
				big = chunkBufs.Get().(*[chunkBufSize]byte)
			}
			buf = buf[:0]
			if big != nil {
				buf = big[:0]
			}
		}
		room := buf[len(buf):cap(buf)]
		if chunked {
			room = room[10 : len(room)-2] // space for the size line and CRLF
		} else if left := req.ContentLength - written; int64(len(room)) > left {
			room = room[:left]
		}
		var n int
		var err error
		if len(room) > 0 {
			n, err = req.Body.Read(room)
		} else {
			// Content-Length reached: the body must end here.
			var one [1]byte
			n, err = req.Body.Read(one[:])
			if n > 0 {
				return bodyLonger(req.ContentLength)
			}
		}
		if n > 0 {
			if chunked {
				buf = wire.AppendChunk(buf, room[:n])
			} else {
				buf = buf[:len(buf)+n]
			}
			written += int64(n)
			// A streamed piece leaves now, but for the one that completes
			// a declared length: it waits for the body's end to be
			// confirmed, so that a body failing there fails the request
			// before the server has all of it (and can answer).
			if stream && err == nil && (chunked || written < req.ContentLength) {
				if _, err := c.write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return bodyError(err)
		}
	}
	if !chunked && written != req.ContentLength {
		return bodyShorter(req.ContentLength, written)
	}
	if chunked {
		buf = append(buf, "0\r\n"...)
		for k, vv := range req.Trailer {
			for _, v := range vv {
				buf = wire.AppendHeader(buf, k, []byte(v))
			}
		}
		buf = append(buf, "\r\n"...)
	}
	_, err := c.write(buf)
	if big == nil {
		c.wbuf = buf[:0] // kept if it grew
	}
	return err
}

// write writes b, noting that the request has begun to leave.
func (c *conn) write(b []byte) (int, error) {
	n, err := c.nc.Write(b)
	if n > 0 && !c.wrote { // read-only once set: a streamed body's writer calls this too
		c.wrote = true
	}
	return n, err
}
