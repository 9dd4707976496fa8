package websocket

import (
	"context"
	"errors"
	"fmt"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// The send queue: Send and SendPrepared hand a message to the connection
// and return, and a goroutine of the connection's, started when the queue
// fills from empty and ending when it is empty again, writes the messages
// in order. An idle connection holds no queue and no goroutine. The queue
// is bounded in bytes (Options.SendQueue): when a message does not fit,
// Send waits for room or fails with ErrSendQueueFull, as
// Options.SendQueueFull says, so a peer that stops reading costs the
// bound and no more, and a broadcaster need not wait for its slowest
// reader.

// SendPolicy is what Send does with a message its connection's queue has
// no room for (Options.SendQueueFull).
type SendPolicy uint8

const (
	// SendBlock waits for room, until Send's ctx ends (back-pressure on
	// the sender). The default.
	SendBlock SendPolicy = iota
	// SendFail returns ErrSendQueueFull at once, the message not queued
	// (back-pressure as an error: a broadcaster skips or drops the slow
	// peer).
	SendFail
)

// DefaultSendQueue is the Options.SendQueue used when it is zero: 256 KiB
// of messages waiting to be written, per connection.
const DefaultSendQueue = 256 << 10

// ErrSendQueueFull is returned by Send and SendPrepared under SendFail
// when the message does not fit in the connection's queue: the peer reads
// slower than messages are sent to it. Nothing was queued; the connection
// is still open.
var ErrSendQueueFull = errors.New("websocket: send queue full: the peer reads slower than messages are sent to it")

// sendQueue holds the messages waiting for the connection's writer
// goroutine; it exists while that goroutine runs (Conn.sq, under
// closeMu).
type sendQueue struct {
	msgs    []queuedMessage
	bytes   int           // the queued messages' sizes, the one being written included
	room    chan struct{} // closed when bytes drop, for Senders waiting for room; nil when none waits
	drained chan struct{} // closed when the writer ends (the queue empty, or the connection gone)
}

type queuedMessage struct {
	typ MessageType
	p   []byte           // a copy of Send's message
	pm  *PreparedMessage // or SendPrepared's
}

func (m queuedMessage) size() int {
	if m.pm != nil {
		return len(m.pm.p)
	}
	return len(m.p)
}

// Send queues a copy of p as one message of type typ and returns: the
// connection's writer sends it, after the messages queued before it, as
// Write would (compressed under the same rule). Send is safe from any
// number of goroutines, and from an event handler (Conn.Start). When the
// queue (Options.SendQueue bytes) has no room for p, Send waits for room
// until ctx ends (SendBlock, the default) or returns ErrSendQueueFull
// (SendFail); a message longer than the whole bound is queued when the
// queue is empty. A Write, WritePrepared or Writer called after Send
// returned waits for the queued messages to be written first.
//
// A nil error means the message was queued, not delivered: if the
// connection fails before it is written, it is dropped (and the next
// Send or Write reports the failure, wrapping net.ErrClosed).
func (c *Conn) Send(ctx context.Context, typ MessageType, p []byte) error {
	if typ != MessageText && typ != MessageBinary {
		return fmt.Errorf("websocket: Send of message type %d: not MessageText or MessageBinary", int(typ))
	}
	return c.enqueue(ctx, queuedMessage{typ: typ, p: p}, true)
}

// SendPrepared is Send for a PreparedMessage: queued without a copy (pm
// is read-only), written as WritePrepared writes it. A broadcast that
// must not wait for its slowest reader sends with SendPrepared to
// connections whose SendQueueFull is SendFail.
func (c *Conn) SendPrepared(ctx context.Context, pm *PreparedMessage) error {
	return c.enqueue(ctx, queuedMessage{typ: pm.typ, pm: pm}, false)
}

// enqueue waits for room for m (or fails) and queues it, copying m.p if
// copyP, starting the writer goroutine if none runs. A ctx that has
// ended queues nothing.
func (c *Conn) enqueue(ctx context.Context, m queuedMessage, copyP bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := m.size()
	c.closeMu.Lock()
	for {
		if err := c.sendErr(); err != nil {
			c.closeMu.Unlock()
			return err
		}
		q := c.sq
		if q == nil || c.sendLimit < 0 || q.bytes+n <= int(c.sendLimit) {
			break
		}
		if c.sendFail {
			c.closeMu.Unlock()
			return ErrSendQueueFull
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		c.closeMu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.sockDone.wait(&c.syncMu):
			return errClosed
		}
		c.closeMu.Lock()
	}
	if copyP {
		// Under the lock, once there is room: a Send waiting for room
		// holds no copy (64 of them would hold 64 messages).
		m.p = append([]byte(nil), m.p...)
	}
	q := c.sq
	if q == nil {
		q = &sendQueue{drained: make(chan struct{})}
		c.sq = q
		go c.writeQueue(q)
	}
	q.msgs = append(q.msgs, m)
	q.bytes += n
	c.closeMu.Unlock()
	return nil
}

// sendErr is why nothing can be queued: the connection closed, or its
// close frame sent. The caller holds closeMu.
func (c *Conn) sendErr() error {
	if c.sockClosed {
		return errClosed
	}
	if c.closeSent {
		return errCloseSent
	}
	return nil
}

// writeQueue is the connection's writer goroutine: it takes the message
// writer (msgLock) and writes the queue's messages in order until it is
// empty, or until a write fails (the connection is then closed, and what
// remains dropped).
func (c *Conn) writeQueue(q *sendQueue) {
	err := c.lock(context.Background(), &c.msgLock) // fails only once the socket closed
	locked := err == nil
	for {
		c.closeMu.Lock()
		if err != nil || len(q.msgs) == 0 {
			c.sq = nil
			q.msgs = nil
			if q.room != nil {
				close(q.room)
			}
			c.closeMu.Unlock()
			break
		}
		m := q.msgs[0]
		q.msgs[0] = queuedMessage{}
		q.msgs = q.msgs[1:]
		c.closeMu.Unlock()

		if m.pm != nil {
			err = c.writeFramePre(context.Background(), ws.Opcode(m.pm.typ), true, false, m.pm.p, m.pm.frame)
		} else {
			err = c.writeMessage(context.Background(), m.typ, m.p)
		}

		c.closeMu.Lock()
		q.bytes -= m.size()
		if q.room != nil {
			close(q.room)
			q.room = nil
		}
		c.closeMu.Unlock()
	}
	if locked {
		c.msgLock.unlock(&c.syncMu)
	}
	close(q.drained)
}

// afterQueued waits until the messages queued before the call are
// written (so that a goroutine's Send then Write arrive in that order),
// unless ctx ends or the connection closes first.
func (c *Conn) afterQueued(ctx context.Context) error {
	c.closeMu.Lock()
	q := c.sq
	c.closeMu.Unlock()
	if q == nil {
		return nil
	}
	select {
	case <-q.drained:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.sockDone.wait(&c.syncMu):
		return errClosed
	}
}
