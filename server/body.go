package server

import (
	"errors"
	"io"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// bodyReader streams a request body out of the connection's read buffer,
// reading more from the socket as it is consumed. It is reused per
// connection.
type bodyReader struct {
	c            *conn
	chunked      bool
	left         int64 // Content-Length bytes still to read
	dec          wire.ChunkedDecoder
	pending      []byte // decoded chunk data not yet handed out (in rbuf)
	total        int64  // chunked bytes handed out, for the body limit
	done         bool
	err          error // sticky error
	expect100    bool
	continueSent bool
	abandoned    bool // finish gave up on the rest: the connection must close
}

// maxDrainBytes is how much unread body the server discards after the
// handler returns to keep the connection; past it, the connection closes
// (net/http uses the same 256 KiB).
const maxDrainBytes = 256 << 10

func (b *bodyReader) reset(req *wire.Request) {
	b.chunked = req.Chunked
	b.left = max(req.ContentLength, 0)
	b.pending = nil
	b.total = 0
	b.err = nil
	b.expect100 = req.Expect100
	b.continueSent = false
	b.abandoned = false
	b.done = !b.chunked && b.left == 0
	if b.chunked {
		b.dec.Reset()
		b.dec.MaxTrailerBytes = min(b.c.cfg.limits.MaxHeaderBytes, wire.DefaultMaxTrailerBytes)
	}
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.expect100 && !b.continueSent {
		b.sendContinue()
	}
	var n int
	var err error
	if b.chunked {
		n, err = b.readChunked(p)
	} else {
		n, err = b.readLength(p)
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readLarge is Read for a caller whose buffer escapes anyway (the
// adapter's Request.Body, called through io.Reader): a large read with
// nothing buffered goes from the socket straight into p, instead of
// through the 4 KiB read buffer: up to the declared length, or, chunked,
// up to the end of the current chunk's data.
func (b *bodyReader) readLarge(p []byte) (int, error) {
	c := b.c
	if b.err != nil || b.done || c.r != c.w || len(p) < blockSize ||
		b.expect100 && !b.continueSent || c.hasPeeked {
		return b.Read(p)
	}
	if b.chunked {
		left := b.dec.DataLeft()
		if len(b.pending) > 0 || left < blockSize {
			return b.Read(p)
		}
		if uint64(len(p)) > left {
			p = p[:left]
		}
		n, err := b.readDirect(p)
		if n > 0 {
			b.dec.SkipData(uint64(n))
			b.total += int64(n)
			if lim := c.cfg.limits.MaxBodyBytes; lim >= 0 && b.total > lim {
				b.err = wire.ErrBodyTooLarge
				return 0, b.err
			}
		}
		return n, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.readDirect(p)
	b.left -= int64(n)
	b.done = b.left == 0
	return n, err
}

// readDirect reads body bytes from the socket into p (at least one, or an
// error, which is sticky).
func (b *bodyReader) readDirect(p []byte) (int, error) {
	c := b.c
	// Armed lazily from the head's time, without a clock reading: a read
	// that times out gets one fresh ReadStallTimeout from now before it
	// counts as a stall.
	c.armBodyRead(c.now)
	extended := false
	for {
		n, err := c.nc.Read(p)
		if n > 0 {
			return n, nil
		}
		if !extended && isTimeout(err) && !c.ownReadDeadline && c.cfg.readStall > 0 &&
			(c.cfg.readTimeout <= 0 || time.Now().Before(c.headStart.Add(c.cfg.readTimeout))) {
			extended = true
			c.bodyDL = false
			c.armBodyRead(time.Now())
			continue
		}
		if err == io.EOF || err == nil {
			err = wire.ErrUnexpectedEOF
		}
		b.err = err
		return 0, err
	}
}

// sendContinue answers "Expect: 100-continue" when the handler first
// reads the body and the body has not started arriving yet.
func (b *bodyReader) sendContinue() {
	b.continueSent = true
	c := b.c
	if c.r < c.w {
		return // the client sent the body without waiting
	}
	c.wbuf = append(c.wbuf, "HTTP/1.1 100 Continue\r\n\r\n"...)
	c.flush()
}

func (b *bodyReader) readLength(p []byte) (int, error) {
	c := b.c
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	// Body bytes always pass through rbuf: reading straight into p would
	// hand p to the socket's Read (an interface call), making every
	// caller's buffer escape to the heap.
	if c.r == c.w {
		if err := c.fillBody(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.rbuf[c.r:c.w])
	c.r += n
	b.left -= int64(n)
	if b.left == 0 {
		b.done = true
	}
	return n, nil
}

func (b *bodyReader) readChunked(p []byte) (int, error) {
	c := b.c
	for len(b.pending) == 0 {
		data, n, err := b.dec.Decode(c.rbuf[c.r:c.w])
		c.r += n
		switch err {
		case nil:
			b.pending = data
		case io.EOF:
			b.done = true
			return 0, io.EOF
		case wire.ErrNeedMore:
			if err := c.fillBody(); err != nil {
				return 0, err
			}
		default:
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	b.total += int64(n)
	if lim := c.cfg.limits.MaxBodyBytes; lim >= 0 && b.total > lim {
		return 0, wire.ErrBodyTooLarge
	}
	return n, nil
}

// unfinished reports whether the client may still be sending this body
// (it was not read to its end, and did not fail with a timeout or a
// broken connection): closing now could reset the connection under our
// response, so the connection lingers.
func (b *bodyReader) unfinished() bool {
	if b.done {
		return false
	}
	var we *wire.Error
	return b.err == nil || errors.As(b.err, &we)
}

// finish discards what the handler left unread, so the next request
// starts where this body ends. It reports whether the connection can stay
// open.
func (b *bodyReader) finish() bool {
	if b.err != nil || b.abandoned {
		return false
	}
	if b.done {
		return true
	}
	if b.expect100 && !b.continueSent {
		// The client waits for 100 Continue before sending the body. A
		// small declared body, before the final head went out, is worth
		// asking for: 100, then read it, and the connection lives on
		// (RFC 9110 §10.1.1 lets a server send 100 and read the body in
		// any case). Otherwise the final answer goes without it, and the
		// connection closes.
		if b.chunked || b.left > maxDrainBytes || b.c.ctx.resp.committed() {
			return false
		}
		b.sendContinue()
	}
	if !b.chunked && b.left > maxDrainBytes {
		b.abandoned = true
		return false
	}
	var scratch [512]byte
	var drained int64
	for !b.done {
		if !b.chunked { // skip buffered bytes without copying them
			c := b.c
			if c.r == c.w {
				if err := c.fillBody(); err != nil {
					b.err = err
					return false
				}
			}
			k := min(int64(c.w-c.r), b.left)
			c.r += int(k)
			b.left -= k
			b.done = b.left == 0
			continue
		}
		n, err := b.Read(scratch[:])
		drained += int64(n)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if drained > maxDrainBytes {
			b.abandoned = true
			return false
		}
	}
	return true
}
