package websocket

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// Reader waits for the next data message and returns its type and a
// reader of its payload, assembled from its frames; control frames that
// come first or between them are handled on the way (a ping answered, a
// pong delivered, a close frame answered and reported). The payload
// reader returns io.EOF at the message's end. A message not read to its
// end is discarded by the next Reader or Read call.
//
// ctx covers the wait and every read of the returned reader. When ctx
// ends in the middle of a socket read, the read side is unusable: this
// and every later read returns an error wrapping ctx's, as part of a
// frame may have been consumed. Writes still work, so the application
// can Close the connection (Close then waits no further for the peer's
// close frame than its CloseTimeout).
//
// Once the peer's close frame arrived (it is answered, and the socket
// closed), Reader returns a [*CloseError] with its code and reason; an
// end without one is a *CloseError with 1006; a rule broken by the peer
// fails the connection with the rule's close code (1002, 1007, 1009),
// which [CloseStatus] returns.
//
// A compressed message (permessage-deflate) is read and inflated whole
// before Reader returns, and the reader returned reads it from memory.
func (c *Conn) Reader(ctx context.Context) (MessageType, io.Reader, error) {
	typ, mr, inflated, err := c.reader(ctx)
	switch {
	case err != nil:
		return 0, nil, err
	case mr == nil:
		return typ, bytes.NewReader(inflated), nil
	}
	return typ, mr, nil
}

// reader is Reader: a compressed message comes back inflated, with a nil
// messageReader.
func (c *Conn) reader(ctx context.Context) (MessageType, *messageReader, []byte, error) {
	if c.ev.Load() != nil {
		return 0, nil, nil, errEventMode
	}
	if err := c.lock(ctx, &c.readLock); err != nil {
		return 0, nil, nil, c.lockErr(err)
	}
	defer c.readLock.unlock(&c.syncMu)
	rd := &c.rd
	if rd.err != nil {
		return 0, nil, nil, rd.err
	}
	c.rdl.disarm(c)
	if !c.rdl.arm(c, ctx) {
		return 0, nil, nil, ctx.Err()
	}
	if rd.inMsg { // discard the rest of the last message
		var scratch [512]byte
		for {
			_, err := rd.data(scratch[:])
			if err == io.EOF {
				break
			}
			if err != nil {
				c.rdl.disarm(c)
				return 0, nil, nil, err
			}
		}
	}
	rd.release()
	if err := rd.next(); err != nil {
		c.rdl.disarm(c)
		return 0, nil, nil, err
	}
	rd.gen++
	if rd.compressed {
		b, err := rd.compressedMessage(nil)
		c.rdl.disarm(c)
		if err != nil {
			return 0, nil, nil, err
		}
		return MessageType(rd.op), nil, b, nil
	}
	return MessageType(rd.op), &messageReader{c: c, ctx: ctx, gen: rd.gen, hint: rd.left}, nil, nil
}

// lockErr is what a read that could not take the read lock returns.
func (c *Conn) lockErr(err error) error {
	if errors.Is(err, errClosed) {
		return c.closedErr()
	}
	return err
}

// messageReader reads one message's payload, under the read lock for
// each call.
type messageReader struct {
	c    *Conn
	ctx  context.Context
	gen  uint64
	hint int64 // the first frame's length
	eof  bool
}

var errStaleReader = errors.New("websocket: read from a message reader after the next Reader or Read call")

func (m *messageReader) Read(p []byte) (int, error) {
	if m.eof {
		return 0, io.EOF
	}
	c := m.c
	if err := c.lock(m.ctx, &c.readLock); err != nil {
		return 0, c.lockErr(err)
	}
	defer c.readLock.unlock(&c.syncMu)
	rd := &c.rd
	if rd.gen != m.gen {
		return 0, errStaleReader
	}
	if rd.err != nil {
		return 0, rd.err
	}
	n, err := rd.data(p)
	if err != nil {
		m.eof = err == io.EOF
		c.rdl.disarm(c)
	}
	return n, err
}

// Read waits for the next data message and returns it whole: its type
// and its payload, in a new slice the caller owns. It is [Conn.Reader]
// read to the end, with the same errors and ctx rules; the message may
// be up to Options.ReadLimit bytes (the connection fails with 1009 past
// it), and is held as it arrives, never allocated ahead from a length a
// frame header announces.
func (c *Conn) Read(ctx context.Context) (MessageType, []byte, error) {
	typ, r, inflated, err := c.reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	if r == nil {
		return typ, inflated, nil
	}
	b, err := appendMessage(make([]byte, 0, min(r.hint, 64<<10)), r.Read)
	if err != nil {
		return 0, nil, err
	}
	return typ, b, nil
}

// appendMessage appends what read returns to b up to io.EOF, the
// message's end, growing b as append does: a message's memory follows
// the bytes that arrive.
func appendMessage(b []byte, read func([]byte) (int, error)) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			// Full: a read with no room says whether the message
			// ended (a message exactly as long as its first frame
			// said, the common case, then costs no second slice).
			if _, err := read(b[len(b):]); err == io.EOF {
				return b, nil
			} else if err != nil {
				return nil, err
			}
			b = append(b, 0)[:len(b)]
		}
		n, err := read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
