package client

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// body streams a response body off its connection. When it is read to
// its end the connection goes back to the pool; Close before the end
// drains what is left within the Transport's caps (on a goroutine when
// the rest is still to come: Close returns at once), so the connection is
// kept, or closes it. Read and Close may be called concurrently: a Read
// blocked when Close comes returns what the connection gives it within
// the drain's wait (its end keeps the connection), and is woken after.
type body struct {
	mu      sync.Mutex
	c       *conn // nil once released
	resp    *http.Response
	framing wire.Framing
	pending []byte      // decoded body bytes a short Read left
	stop    func() bool // the context watch, if any
	keep    bool        // the connection may be reused
	reading bool
	closed  bool
	err     error // sticky: io.EOF or the error that broke the body
	// closeWait wakes a Read that Close found blocked, once the drain's
	// wait is over (interrupted then says it did).
	closeWait    *time.Timer
	interrupted  bool
	drainedBytes int64 // what the drain has read so far
}

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errClosedBody
	}
	if b.err != nil {
		b.mu.Unlock()
		return 0, b.err
	}
	if b.reading {
		b.mu.Unlock()
		return 0, errors.New("client: concurrent Read on a response body")
	}
	b.reading = true
	c := b.c
	b.mu.Unlock()

	n, err := b.read(c, p)

	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	if b.closed {
		// Close came during this Read, which returns what it read, as
		// net/http's (Go 1.27). At the body's end the connection is
		// kept; with more to come the drain goes on; on an error, or
		// when Close's wait interrupted the socket, it is spent.
		if b.closeWait != nil {
			b.closeWait.Stop()
		}
		switch {
		case b.interrupted:
			// The socket has a past deadline: spent, whatever came.
			b.finish(false)
			if err != nil && err != io.EOF {
				err = errClosedBody
			}
		case err == io.EOF:
			b.err = err
			b.finish(true)
		case err == nil:
			b.drainLater()
		default:
			b.finish(false)
		}
		return n, err
	}
	if err != nil {
		if err != io.EOF {
			if b.stop != nil && !b.stop() || b.closed {
				// The context was canceled, or Close interrupted us.
				if cerr := b.resp.Request.Context().Err(); cerr != nil {
					err = cerr
				} else if b.closed {
					err = errClosedBody
				}
			} else if c != nil && errors.Is(err, os.ErrDeadlineExceeded) && c.pastDeadline() {
				err = errRequestTimeout
			}
			b.stop = nil
		}
		b.err = err
		b.finish(err == io.EOF)
	}
	return n, err
}

// read reads body bytes from c per the framing (c.body decodes it). Body
// bytes due next with nothing buffered go straight from the socket into
// p. It runs without b.mu.
func (b *body) read(c *conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	d := &c.body
	for {
		if len(b.pending) > 0 {
			n := copy(p, b.pending)
			b.pending = b.pending[n:]
			if len(b.pending) == 0 && d.Done() {
				return n, io.EOF
			}
			return n, nil
		}
		if c.r == c.w {
			if left := d.DataLeft(); left > 0 {
				if int64(len(p)) > left {
					p = p[:left]
				}
				n, err := c.nc.Read(p)
				c.full = n == len(p)
				d.SkipData(int64(n))
				switch {
				case n > 0 && d.Done():
					return n, io.EOF
				case n > 0:
					return n, nil
				case err == io.EOF:
					if err := d.EOF(); err != nil {
						return 0, err
					}
				}
				return 0, err
			}
		}
		data, used, err := d.Decode(c.rbuf[c.r:c.w])
		c.r += used
		if len(data) > 0 {
			n := copy(p, data)
			b.pending = data[n:]
			if err == io.EOF && len(b.pending) == 0 {
				return n, io.EOF
			}
			return n, nil
		}
		switch err {
		case nil:
			continue
		case io.EOF:
			return 0, io.EOF
		case wire.ErrNeedMore:
			if ferr := c.fill(); ferr != nil {
				return 0, ferr // an end of input here cuts the body short
			}
		default:
			return 0, err
		}
	}
}

func (b *body) onTrailer(name, value []byte) {
	if b.resp.Trailer == nil {
		b.resp.Trailer = make(http.Header)
	}
	b.resp.Trailer.Add(string(name), string(value))
}

// finish releases the connection: back to the pool when the body ended
// cleanly (ok) and the connection may be reused, else closed. Called with
// b.mu held, or before b is shared.
func (b *body) finish(ok bool) {
	c := b.c
	if c == nil {
		return
	}
	b.c = nil
	c.body.Chunked.OnTrailer = nil
	if up := c.upload; up != nil {
		c.upload = nil
		if !up.settle(c) {
			ok = false // the request's body was not written whole
		}
	}
	if b.stop != nil && !b.stop() {
		ok = false // the context fired: the socket has a past deadline
	}
	b.stop = nil
	if ok && b.keep && c.r == c.w && b.framing != wire.CloseBody && c.settled() {
		trace := c.trace
		err := c.t.putIdle(c)
		if trace != nil && trace.PutIdleConn != nil && err != errKeepAlivesOff {
			trace.PutIdleConn(err) // as net/http's: not when keep-alives are off
		}
		return
	}
	c.trace = nil
	c.close()
}

// Close implements io.Closer.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.c == nil {
		return nil
	}
	c := b.c
	c.body.Chunked.OnTrailer = nil // a drained body's trailers are dropped, as net/http's
	if b.reading {
		// A Read is blocked on the socket: it ends on its own (see Read),
		// or after the drain's wait, woken.
		b.closeWait = time.AfterFunc(drainWait(c.t), func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.reading && b.c == c {
				b.interrupted = true
				c.interrupt()
			}
		})
		return nil
	}
	b.drainLater()
	return nil
}

// drainLater drains what is left of a closed body within the Transport's
// caps: at once when it is all buffered, else on a goroutine of its own,
// so that Close returns at once (net/http's, from Go 1.27, drains on its
// read loop). The connection is kept if the end comes. b.mu is held.
func (b *body) drainLater() {
	if !b.drainable() {
		b.finish(false)
		return
	}
	if b.restBuffered() {
		b.finish(b.drain()) // never waits
		return
	}
	// The rest is usually on its way: wait a little here, so that the
	// caller's next request finds the connection in the pool.
	wait := drainWait(b.c.t)
	patience := min(wait, drainPatience)
	switch b.drainFor(patience) {
	case drained:
		b.finish(true)
		return
	case drainFailed:
		b.finish(false)
		return
	}
	b.reading = true // the drain owns the connection
	go func() {
		ok := b.drainFor(wait-patience) == drained
		b.mu.Lock()
		b.reading = false
		b.finish(ok)
		b.mu.Unlock()
	}()
}

// drainPatience is how long Close waits for the rest of a body before it
// leaves the drain to a goroutine.
const drainPatience = 5 * time.Millisecond

// restBuffered reports whether the rest of the body is in the buffer
// already: a length body's rest, or a chunked body whose last chunk ends
// the buffer.
func (b *body) restBuffered() bool {
	c := b.c
	switch b.framing {
	case wire.LengthBody:
		return c.body.DataLeft() <= int64(c.w-c.r)
	case wire.ChunkedBody:
		return bytes.HasSuffix(c.rbuf[c.r:c.w], []byte("\r\n0\r\n\r\n")) || c.r < c.w && bytes.Equal(c.rbuf[c.r:c.w], []byte("0\r\n\r\n"))
	}
	return false
}

// drainable reports whether what is left of the body may be drained.
func (b *body) drainable() bool {
	c := b.c
	max := c.t.DrainMaxBytes
	if max == 0 {
		max = DefaultDrainMaxBytes
	}
	if max < 0 || !b.keep || b.framing == wire.CloseBody {
		return false
	}
	return b.framing != wire.LengthBody || c.body.DataLeft() <= max
}

// drainWait is how long a drain may wait for the rest of a body.
func drainWait(t *Transport) time.Duration {
	if t.DrainTimeout > 0 {
		return t.DrainTimeout
	}
	return DefaultDrainTimeout
}

// drain reads the rest of the body within the Transport's caps and reports
// whether it reached the end.
func (b *body) drain() bool {
	return b.drainFor(drainWait(b.c.t)) == drained
}

// The outcomes of drainFor.
const (
	drainFailed  = iota // the body broke, or is longer than the caps
	drained             // its end came
	drainWaiting        // the wait ran out first
)

// drainFor reads the rest of the body for up to wait, within
// DrainMaxBytes in all (drainedBytes counts across calls).
func (b *body) drainFor(wait time.Duration) int {
	c := b.c
	max := c.t.DrainMaxBytes
	if max == 0 {
		max = DefaultDrainMaxBytes
	}
	ctx := b.resp.Request.Context()
	if c.setReadDeadline(ctx, time.Now().Add(wait)) != nil {
		return drainFailed
	}
	var buf [512]byte
	for b.drainedBytes <= max {
		n, err := b.read(c, buf[:])
		b.drainedBytes += int64(n)
		switch {
		case err == io.EOF:
			if c.setReadDeadline(ctx, time.Time{}) != nil {
				return drainFailed
			}
			return drained
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil:
			return drainWaiting
		case err != nil:
			return drainFailed
		}
	}
	return drainFailed
}
