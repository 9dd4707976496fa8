package server

import (
	"bytes"
	"errors"
	"net/http"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// response is the one state machine every response goes through, on
// either protocol, whether a native handler or an http.Handler writes it:
// the Ctx and both protocols' ResponseWriters are faces on it. It owns the
// status, the header slots, the collected body and the trailers, and it
// is the only writer of response heads (final, informational and error),
// so every field name that reaches the wire was checked once, in
// setHeader, and every body byte was counted against a declared length
// once, in checkStreamed.
//
// What differs between the protocols is only how the head, the body and
// the end go out: HTTP/1.1 text into the connection's write buffer
// (appendHead, writeStreaming, chunks; this file and response_head.go)
// or HTTP/2 frames on the stream (h2Head, h2Send, trailers as HEADERS;
// h2_response.go). Each transition below picks its protocol's side by st.
//
// Its states, in order (on HTTP/2 a streamed body is always "fixed",
// with or without a declared length: frames delimit it):
//
//   - collecting: nothing sent. Body bytes are collected in buf (up to
//     collectLimit: 32 KiB native, net/http's 2 KiB for http.Handlers) so
//     that a response finished by the handler's return gets an exact
//     Content-Length and leaves in one write with its pipelined
//     neighbours.
//   - fixed: the head went out with a Content-Length (declared by the
//     handler); the body streams and may not exceed it.
//   - chunked: the head went out with Transfer-Encoding: chunked (HTTP/1.1,
//     length unknown, or trailers announced); each write is one chunk.
//   - untilClose: the head went out without a length (HTTP/1.0, length
//     unknown); the body ends when the connection closes.
//   - done: complete. A chunked body got its last chunk and trailers.
//   - aborted: cut short (a panic after the head went out, or an
//     http.Handler's panic at any point, as net/http): nothing more is
//     written and the connection closes, so a client never reads a
//     truncated body as complete.
//
// Collecting moves to fixed, chunked or untilClose when the body outgrows
// the collection limit or the handler flushes (commit), or straight to
// done when the handler returns (finish). A response whose status or
// method allows no body (1xx, 204, 304, HEAD) discards body bytes in every
// state.
type response struct {
	x *Ctx // the native face; on HTTP/1.1 also the way to the connection
	// st is the HTTP/2 stream the response goes out on; nil on HTTP/1.1.
	st    *h2Stream
	state respState

	status      int
	contentType []byte
	// typeSet: the handler set Content-Type, to an empty value maybe;
	// an empty one is sent as such, as net/http does (it stops sniffing).
	typeSet     bool
	hdrs        []respHeader
	nhdrs       int
	trailers    []respHeader // sent after a chunked body
	ntrailers   int
	buf         []byte // the body collected while collecting
	declaredLen int64  // from Content-Length, -1 if not set
	wantClose   bool   // the handler asked for Connection: close
	hasDate     bool   // the handler set Date itself
	// openChunk is where the last small chunk written starts in the
	// connection's wbuf, -1 if none; openChunkEnd where it ends, and
	// openEpoch the conn's flush count then (joinChunk).
	openChunk, openChunkEnd int
	openEpoch               uint32
	// forceChunked streams even a small body chunked: trailers are coming,
	// or an http.Handler set Transfer-Encoding: chunked itself.
	forceChunked bool
	// collectLimit is how much body is collected before committing.
	collectLimit int

	discard bool  // the status or method carries no body
	sent    int64 // body bytes written after commit
	err     error // sticky write error
	// ownWriteDeadline: the handler set a write deadline itself, which
	// replaces the server's write timeouts until the response ends.
	ownWriteDeadline bool
}

// respState is a response's place in the state machine above.
type respState uint8

const (
	respCollecting respState = iota
	respFixed
	respChunked
	respUntilClose
	respDone
	respAborted
)

// ErrBodyTooLong is returned by Write when a body exceeds the length
// declared with SetContentLength (or, on the http.Handler API, a
// Content-Length header). It is net/http's http.ErrContentLength, which
// handlers moved from net/http check for.
var ErrBodyTooLong = http.ErrContentLength

// errAborted is returned by writes after a response was aborted.
var errAborted = errors.New("server: response aborted")

// reset prepares the response for the next request.
func (r *response) reset() {
	r.state = respCollecting
	r.status = 200
	r.contentType = r.contentType[:0]
	r.typeSet = false
	r.nhdrs = 0
	r.ntrailers = 0
	r.buf = r.buf[:0]
	r.declaredLen = -1
	r.wantClose = false
	r.hasDate = false
	r.forceChunked = false
	r.openChunk = -1
	r.discard = false
	r.sent = 0
	r.err = nil
	if r.ownWriteDeadline {
		// The handler's own deadline ends with its response: clear it,
		// and the next flush arms the server's timeouts again.
		r.ownWriteDeadline = false
		r.x.c.writeDL = time.Time{}
		r.x.c.nc.SetWriteDeadline(time.Time{})
	}
}

// committed reports whether the head was sent (or the response ended).
func (r *response) committed() bool { return r.state != respCollecting }

// write appends p to the body: collected while it fits, streamed after.
func (r *response) write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.state == respCollecting {
		if r.fits(len(p)) {
			r.buf = append(r.buf, p...)
			return len(p), nil
		}
		if err := r.commit(); err != nil {
			return 0, err
		}
	}
	if r.st != nil {
		return r.h2Stream(p)
	}
	if len(p) >= directWriteMin && r.x.c.tcp != nil {
		return r.writeTCP(p)
	}
	return r.writeStreaming(p)
}

// writeString is write for a string, without converting it while it is
// collected.
func (r *response) writeString(s string) (int, error) {
	if r.state == respCollecting && r.err == nil && r.fits(len(s)) {
		r.buf = append(r.buf, s...)
		return len(s), nil
	}
	return r.write([]byte(s))
}

// fits reports whether n more body bytes may still be collected.
func (r *response) fits(n int) bool {
	return len(r.buf)+n <= r.collectLimit && (r.declaredLen < 0 || int64(len(r.buf)+n) <= r.declaredLen)
}

// flush commits the head and sends what was written so far.
func (r *response) flush() error {
	if r.err != nil {
		return r.err
	}
	if r.state == respCollecting {
		if err := r.commit(); err != nil {
			return err
		}
	}
	if r.st != nil {
		return nil // the stream's frames are queued: its writer sends them
	}
	if err := r.x.c.flush(); err != nil {
		r.err = err
	}
	return r.err
}

// commit writes the head for a body that streams, moving to fixed,
// chunked or untilClose, and sends the collected body behind it.
func (r *response) commit() error {
	if r.state != respCollecting {
		return r.err
	}
	if r.st != nil {
		return r.h2Commit()
	}
	c := r.x.c
	if c.handler != nil {
		c.handler.discardBeforeHead()
	}
	c.noMoreContinue()
	r.decideClose()
	c.wbuf = r.appendHead(c.wbuf, r.declaredLen, false)
	pending := r.buf
	r.buf = r.buf[:0]
	if len(pending) > 0 {
		_, err := r.writeStreaming(pending)
		return err
	}
	return nil
}

// writeStreaming sends p as body after the head was committed.
func (r *response) writeStreaming(p []byte) (int, error) {
	if discard, err := r.checkStreamed(len(p)); err != nil || discard {
		return discardedLen(len(p), err)
	}
	if len(p) == 0 {
		return 0, nil
	}
	c := r.x.c
	chunkAt, epoch := -1, c.flushes
	if r.state == respChunked {
		if len(p) <= smallChunk && r.joinChunk(p) {
			r.sent += int64(len(p))
			return len(p), nil
		}
		chunkAt = len(c.wbuf)
		c.wbuf = wire.AppendChunkHeader(c.wbuf, len(p))
	}
	// Copy through the write buffer, flushing as it fills, rather than
	// handing p to the socket: p then never escapes, so handlers can write
	// from stack buffers without allocating.
	n := len(p)
	for len(p) > 0 {
		room := flushThreshold - len(c.wbuf)
		if room <= 0 {
			if err := c.flush(); err != nil {
				r.err = err
				return 0, err
			}
			continue
		}
		k := min(room, len(p))
		c.wbuf = append(c.wbuf, p[:k]...)
		p = p[k:]
	}
	if r.state == respChunked {
		c.wbuf = wire.AppendChunkEnd(c.wbuf)
		r.openChunk, r.openChunkEnd, r.openEpoch = -1, 0, 0
		if n <= smallChunk && c.flushes == epoch {
			// A small chunk still in wbuf: the next small write joins it.
			r.openChunk, r.openChunkEnd, r.openEpoch = chunkAt, len(c.wbuf), epoch
		}
	}
	r.sent += int64(n)
	return n, nil
}

// smallChunk is the most a chunk grows by joining small writes: net/http
// buffers 2 KiB before it frames a chunk.
const smallChunk = 2 << 10

// joinChunk appends p to the chunk the last write left in wbuf, when it
// is still there (no flush since) and both are small: a handler's small
// writes between flushes go out as one chunk, as on net/http, not one
// chunk (and one chunk header for the client to parse) each. It reports
// whether it did.
func (r *response) joinChunk(p []byte) bool {
	c := r.x.c
	if r.openChunk < 0 || r.openEpoch != c.flushes || r.openChunkEnd != len(c.wbuf) {
		return false
	}
	chunk := c.wbuf[r.openChunk:]
	head := bytes.IndexByte(chunk, '\n') + 1
	old := chunk[head : len(chunk)-2]
	total := len(old) + len(p)
	if total > smallChunk || len(c.wbuf)+len(p)+8 > flushThreshold {
		return false
	}
	var tmp [smallChunk]byte
	k := copy(tmp[:], old)
	k += copy(tmp[k:], p)
	c.wbuf = wire.AppendChunkHeader(c.wbuf[:r.openChunk], total)
	c.wbuf = append(c.wbuf, tmp[:k]...)
	c.wbuf = wire.AppendChunkEnd(c.wbuf)
	r.openChunkEnd = len(c.wbuf)
	return true
}

var errAfterFinish = errors.New("server: write after the response ended")

// checkStreamed checks a write of n body bytes after the head went out:
// an error after the end or past the declared length, or discard when the
// response carries no body.
func (r *response) checkStreamed(n int) (discard bool, err error) {
	switch r.state {
	case respAborted:
		return false, errAborted
	case respDone:
		return false, errAfterFinish
	}
	if r.discard {
		return true, nil
	}
	if r.declaredLen >= 0 && r.state != respUntilClose && r.sent+int64(n) > r.declaredLen {
		return false, ErrBodyTooLong
	}
	return false, nil
}

// discardedLen is what a write that checkStreamed stopped returns.
func discardedLen(n int, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return n, nil
}

// finish completes the response after the handler returned: a collected
// response is written whole with its exact length; a streamed one gets
// its end (last chunk and trailers, or a close when the length is not
// met or the body ends with the connection).
func (r *response) finish() {
	if r.st != nil {
		r.h2Finish()
		return
	}
	c := r.x.c
	switch r.state {
	case respCollecting:
		if !r.x.body.done.Load() && !r.x.body.finish() {
			// As net/http before it writes a head: what the handler left
			// unread is discarded now (up to 256 KiB), so the head can
			// say "Connection: close" when the rest cannot be.
			c.closing = true
		}
		if r.forceChunked {
			r.commit()
			r.finish()
			return
		}
		c.noMoreContinue()
		r.decideClose()
		n := int64(len(r.buf))
		if n == 0 && r.declaredLen < 0 && r.x.isHead() && c.handler != nil {
			n = -1 // net/http sends no length for a HEAD answered with no body
		}
		if r.declaredLen >= 0 {
			if n < r.declaredLen && !r.x.isHead() && wire.BodyAllowed(r.status) {
				// A short body keeps its declared length and ends with the
				// connection, as in net/http: the client must see the
				// truncation, not a smaller "complete" response.
				c.closing = true
			}
			n = r.declaredLen
		}
		c.wbuf = r.appendHead(c.wbuf, n, true)
		if !r.discard {
			c.wbuf = append(c.wbuf, r.buf...)
		}
	case respChunked:
		if r.err != nil {
			// A write failed (a stalled client was cut): no last chunk to
			// the socket that just stalled, the connection closes now.
			c.closing = true
			break
		}
		c.wbuf = append(c.wbuf, '0', '\r', '\n')
		c.wbuf = r.appendFields(c.wbuf, r.trailers[:r.ntrailers])
		c.wbuf = append(c.wbuf, '\r', '\n')
	case respFixed:
		if r.sent < r.declaredLen && !r.discard {
			c.closing = true
		}
	case respUntilClose:
		c.closing = true
	case respAborted, respDone:
		return
	}
	r.state = respDone
}

// abort ends the response without completing it: nothing more is
// written, and the connection closes after what is already queued (the
// responses to earlier pipelined requests, and whatever of this one was
// already committed).
func (r *response) abort() {
	if r.state == respCollecting {
		r.buf = r.buf[:0]
	}
	r.state = respAborted
	r.x.c.closing = true
}

// replaceWithError replaces an uncommitted response with status and a
// plain-text reason, closing the connection after it. It reports false
// when the head already went out.
func (r *response) replaceWithError(status int, reason string) bool {
	if r.committed() {
		return false
	}
	r.clearHeaders()
	r.errorBody(status, reason)
	return true
}

// errorBody completes the response as a plain-text error: the status, its
// text and the reason, and a closed connection.
func (r *response) errorBody(status int, reason string) {
	r.status = status
	r.contentType = append(r.contentType, "text/plain; charset=utf-8"...)
	r.wantClose = true
	text := http.StatusText(status)
	r.buf = append(r.buf, text...)
	r.buf = append(r.buf, ": "...)
	r.buf = append(r.buf, reason...)
	r.buf = append(r.buf, '\n')
	r.finish()
}
