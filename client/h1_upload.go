package client

// HTTP/1.1 request bodies that stream: written on a goroutine of their own
// while the response is read, as net/http's transport does.
//
// A body in memory (what http.NewRequest gives a GetBody: a bytes.Reader,
// a bytes.Buffer, a strings.Reader) is written with the head in as few
// writes as it takes, and the response read after. Any other body may
// wait on the server: a pipe fed by what the response brings (a relay, a
// bidirectional protocol over HTTP/1.1), a proxy copying as it reads. For
// those the head leaves at once, each piece the body yields leaves as it
// is read, and the response is read meanwhile: a server that answers
// before the body ends (a 401, a 413, the first bytes of a duplex
// exchange) is seen at once. Such a connection goes back to the pool only
// if its body was written whole by the time its response ended.
// A body held for "Expect: 100-continue" that a final answer releases
// (h1_exchange.go) is written the same way, as the response is read.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// upload is a request body being written on its own goroutine.
type upload struct {
	done chan struct{} // closed when the writing is over
	err  error         // how it ended, once done
	body *onceCloser   // the request's body, closed once whoever asks

	// headIn is set by the reader when the response head has come, under
	// mu: from then on the writer leaves the socket's read deadline alone
	// (ResponseHeaderTimeout would cut the response's body).
	mu     sync.Mutex
	headIn bool
}

// startUpload writes req's body, its head already sent, on a goroutine of
// its own, each piece as it is read. Once written, the response head's
// deadline starts (ResponseHeaderTimeout, as net/http counts it from the
// request's end). A failure of the body itself interrupts the reader, so
// that the request fails with it.
func (c *conn) startUpload(ctx context.Context, req *http.Request, chunked bool) *upload {
	u := &upload{done: make(chan struct{}), body: &onceCloser{ReadCloser: req.Body}}
	r := *req // the writer's copy, with the body closed once
	r.Body = u.body
	if _, ok := req.Body.(io.WriterTo); ok {
		r.Body = onceCloserWriterTo{u.body}
	}
	trace := c.trace
	go func() {
		err := c.writeBody(&r, chunked, true)
		u.err = err
		traceWroteRequest(trace, err)
		close(u.done)
		switch {
		case errors.Is(err, errRequestBody):
			c.interrupt()
		case err == nil && c.t.ResponseHeaderTimeout > 0:
			u.mu.Lock()
			if !u.headIn {
				dl := time.Now().Add(c.t.ResponseHeaderTimeout)
				if !c.deadline.IsZero() && c.deadline.Before(dl) {
					dl = c.deadline
				}
				c.nc.SetReadDeadline(dl)
				if ctx.Err() != nil {
					c.interrupt() // a cancel this deadline would have undone
				}
			}
			u.mu.Unlock()
		}
	}()
	return u
}

// headArrived tells the writer that the response head has come, and
// reports whether the body is written (and how that ended) yet.
func (u *upload) headArrived() (done bool, err error) {
	u.mu.Lock()
	u.headIn = true
	u.mu.Unlock()
	select {
	case <-u.done:
		return true, u.err
	default:
		return false, nil
	}
}

// failed is the error to report when reading the response failed: the
// body's own, if that is why (the writer interrupted the read), else nil.
// It stops the writer: the connection is done for.
func (u *upload) failed(c *conn) error {
	c.interrupt()
	u.body.Close() // a Read blocked in the body wakes
	select {
	case <-u.done:
		if errors.Is(u.err, errRequestBody) {
			return u.err
		}
	default:
	}
	return nil
}

// uploadGrace is how long a response's end waits for its request's body
// to be written before the connection is closed rather than reused (as
// net/http's transport waits for its write loop).
const uploadGrace = 50 * time.Millisecond

// settle is called when the response is done with the connection: it
// reports whether the body was written whole, waiting uploadGrace at
// most; if not, it stops the writer.
func (u *upload) settle(c *conn) bool {
	t := time.NewTimer(uploadGrace)
	defer t.Stop()
	select {
	case <-u.done:
		return u.err == nil
	case <-t.C:
	}
	c.interrupt()
	u.body.Close()
	return false
}
