package server

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// bodyReader streams a request body out of the connection's read buffer,
// reading more from the socket as it is consumed. It is reused per
// connection.
type bodyReader struct {
	c       *conn
	chunked bool
	dec     wire.ChunkedDecoder
	pending []byte // decoded chunk data not yet handed out (in rbuf)
	total   int64  // chunked bytes handed out, for the body limit
	// The body may be read on a goroutine of the handler's own while the
	// handler's response decides whether the connection stays open
	// (response.decideClose): what that decision reads is atomic.
	left         atomic.Int64 // Content-Length bytes still to read
	done         atomic.Bool
	continueSent atomic.Bool
	err          error // sticky error
	expect100    bool
	abandoned    bool        // finish gave up on the rest: the connection must close
	cut          atomic.Bool // the handler returned while another goroutine read (adapter.takeBody)
	streak       int         // full large reads in a row (noteBigRead)
	marks        int         // receive marks set during this body
	markMisses   int         // streaks that found no mark to set (noteBigRead)
}

// maxDrainBytes is how much unread body the server discards after the
// handler returns to keep the connection; past it, the connection closes
// (net/http uses the same 256 KiB).
const maxDrainBytes = 256 << 10

func (b *bodyReader) reset(req *wire.Request) {
	b.chunked = req.Chunked
	b.pending = nil
	b.total = 0
	b.err = nil
	b.expect100 = req.Expect100
	b.abandoned = false
	b.streak, b.marks, b.markMisses = 0, 0, 0
	if b.cut.Load() {
		b.cut.Store(false)
	}
	// Nobody else holds the body yet: an atomic store (a locked
	// instruction) only where the value changes, which a run of GETs
	// never does.
	if left := max(req.ContentLength, 0); b.left.Load() != left {
		b.left.Store(left)
	}
	if b.continueSent.Load() {
		b.continueSent.Store(false)
	}
	if b.c.canContinue.Load() != req.Expect100 {
		b.c.canContinue.Store(req.Expect100)
	}
	if done := !b.chunked && req.ContentLength <= 0; b.done.Load() != done {
		b.done.Store(done)
	}
	if b.chunked {
		b.dec.Reset()
		// One rule for trailers on both protocols (config.trailerBytes).
		b.dec.MaxTrailerBytes = b.c.cfg.trailerBytes()
		b.dec.MaxTrailers = b.c.cfg.limits.MaxHeaders
	}
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done.Load() {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.expect100 && !b.continueSent.Load() {
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

// WriteTo copies the body to w (io.Copy finds it): a big upload is read
// straight from the socket in 32 KiB reads, not through the 4 KiB read
// buffer. Measured, bench/bigbody.sh --api native --only upload (1 GB,
// hotpath / net/http): without it 0.66x the throughput at 1.68x the
// server's CPU (7 rounds), with it 1.09x at 0.66x (15).
func (b *bodyReader) WriteTo(w io.Writer) (int64, error) { return copyOut(w, (*largeReads)(b)) }

// largeReads reads a body with readLarge.
type largeReads bodyReader

func (l *largeReads) Read(p []byte) (int, error) { return (*bodyReader)(l).readLarge(p) }

// copyOut copies r to w through a pooled 32 KiB buffer, for the bodies'
// WriteTo.
func copyOut(w io.Writer, r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(buf)
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr == nil && m < n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// readLarge is Read for a caller whose buffer escapes anyway (the
// adapter's Request.Body, called through io.Reader): a large read with
// nothing buffered goes from the socket straight into p, instead of
// through the 4 KiB read buffer: up to the declared length, or, chunked,
// up to the end of the current chunk's data.
func (b *bodyReader) readLarge(p []byte) (int, error) {
	c := b.c
	if b.err != nil || b.done.Load() || c.r != c.w || len(p) < blockSize ||
		b.expect100 && !b.continueSent.Load() || c.hasPeeked {
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
	if left := b.left.Load(); int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.readDirect(p)
	b.consumed(n)
	b.noteBigRead(n, len(p))
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
		if isTimeout(err) && c.interrupted.Load() && !b.cut.Load() {
			// Shutdown woke what it took for an idle connection, an
			// instant before it turned active (readMore does the same).
			c.interrupted.Store(false)
			c.dlMu.Lock()
			c.nc.SetReadDeadline(c.readDL)
			c.dlMu.Unlock()
			continue
		}
		if !extended && isTimeout(err) && !b.cut.Load() && !c.ownDeadline() && c.cfg.readStall > 0 &&
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
// reads the body and the body has not started arriving yet, unless the
// response's head has gone out (a 100 never follows the final answer).
// The read may run on a goroutine of the handler's own while the
// handler writes its response: contMu orders the two (endResponse).
func (b *bodyReader) sendContinue() {
	c := b.c
	if !c.canContinue.Load() {
		return // the head went first: no 100, and continueSent stays false
	}
	c.contMu.Lock()
	defer c.contMu.Unlock()
	if !c.canContinue.Load() {
		return
	}
	// Cleared once the 100 is written: whoever sees it cleared may
	// use the write buffer.
	defer c.canContinue.Store(false)
	// The body comes: the client sent it without waiting, or is told to.
	b.continueSent.Store(true)
	if c.r < c.w {
		return // the client sent the body without waiting
	}
	c.wbuf = append(c.wbuf, "HTTP/1.1 100 Continue\r\n\r\n"...)
	c.flush()
}

// noMoreContinue is called before the response's head (or a 1xx, or a
// hijack) touches the write buffer: no 100 Continue goes out after it,
// and none is being written meanwhile.
func (c *conn) noMoreContinue() {
	if c.canContinue.Load() {
		c.contMu.Lock()
		c.canContinue.Store(false)
		c.contMu.Unlock()
	}
}

// consumed notes n more bytes of a Content-Length body read.
func (b *bodyReader) consumed(n int) {
	left := b.left.Load() - int64(n)
	b.left.Store(left)
	if left == 0 {
		b.done.Store(true)
	}
}

func (b *bodyReader) readLength(p []byte) (int, error) {
	c := b.c
	if left := b.left.Load(); int64(len(p)) > left {
		p = p[:left]
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
	b.consumed(n)
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
			b.done.Store(true)
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
	if b.done.Load() {
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
	if b.done.Load() {
		return true
	}
	if b.expect100 && !b.continueSent.Load() {
		// The client waits for 100 Continue before sending the body. A
		// small declared body, before the final head went out, is worth
		// asking for: 100, then read it, and the connection lives on
		// (RFC 9110 §10.1.1 lets a server send 100 and read the body in
		// any case). Otherwise the final answer goes without it, and the
		// connection closes; so too when it closes anyway (the client
		// said "Connection: close"), as net/http does.
		c := b.c
		if b.chunked || b.left.Load() > maxDrainBytes || c.ctx.resp.committed() || c.ctx.req.Close || c.closing {
			return false
		}
		b.sendContinue()
	}
	if !b.chunked && b.left.Load() > maxDrainBytes {
		b.abandoned = true
		return false
	}
	var scratch [512]byte
	var drained int64
	for !b.done.Load() {
		if !b.chunked { // skip buffered bytes without copying them
			c := b.c
			if c.r == c.w {
				if err := c.fillBody(); err != nil {
					b.err = err
					return false
				}
			}
			k := min(int64(c.w-c.r), b.left.Load())
			c.r += int(k)
			b.consumed(int(k))
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
