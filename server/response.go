package server

import (
	"errors"
	"net/http"
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
// (appendHead, writeStreaming, chunks; h1_response.go) or HTTP/2 frames
// on the stream (h2Head, h2Send, trailers as HEADERS; h2_response.go).
// Each transition below picks its protocol's side by st, in dispatch.go.
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

// ErrContentLength is returned by Write (and ReadFrom) when a body
// exceeds the length declared with SetContentLength (or, on the
// http.Handler API, a Content-Length header). It is net/http's
// http.ErrContentLength, under its name, which handlers moved from
// net/http check for.
var ErrContentLength = http.ErrContentLength

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
		r.dropOwnWriteDeadline()
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
	return r.stream(p)
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
	return r.send()
}

// commit writes the head for a body that streams, moving to fixed,
// chunked or untilClose, and sends the collected body behind it.
func (r *response) commit() error {
	if r.state != respCollecting {
		return r.err
	}
	return r.commitHead()
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
		return false, ErrContentLength
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

// abort ends the response without completing it: nothing more is
// written, and the connection closes after what is already queued (the
// responses to earlier pipelined requests, and whatever of this one was
// already committed).
func (r *response) abort() {
	if r.state == respCollecting {
		r.buf = r.buf[:0]
	}
	r.state = respAborted
	r.closeAfter()
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
