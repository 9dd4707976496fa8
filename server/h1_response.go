package server

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// HTTP/1.1 engine: the response record's HTTP/1.1 side (response.go): the
// head as text (status line, fields, framing, Connection), the body
// collected or streamed (fixed, chunked with small writes joined, or until
// close) into the connection's write buffer, the end with its last chunk
// and trailers. It mirrors h2_response.go.

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

// decideClose folds everything that ends the connection after this
// response into c.closing, before the head is written.
func (r *response) decideClose() {
	x := r.x
	c := x.c
	if r.wantClose || x.req.Close || c.srv.shutting.Load() || c.srv.noKeepAlives.Load() ||
		(c.cfg.maxRequests > 0 && int64(c.requests) >= int64(c.cfg.maxRequests)) ||
		(x.req.Expect100 && !x.body.continueSent.Load() && !x.body.done.Load()) {
		c.closing = true
	}
	// An answer to CONNECT that opens no tunnel ends the connection, as
	// net/http's does from Go 1.27: the client may already be sending the
	// tunnel's bytes, which must not be read as a request.
	if string(x.req.Method) == http.MethodConnect && r.status >= 200 && r.status/100 != 2 {
		c.closing = true
	}
	// As net/http: an unread body past what the server will discard ends
	// the connection.
	if !x.body.done.Load() && !x.fullDuplex && !x.body.chunked && x.body.left.Load() > maxDrainBytes {
		c.closing = true
	}
}

// appendHead appends the status line and header fields, deciding the
// framing and moving the state on. bodyLen is the Content-Length to send,
// or -1 when it is unknown; final says the whole body is known.
func (r *response) appendHead(b []byte, bodyLen int64, final bool) []byte {
	x := r.x
	c := x.c
	minor := int(x.req.ProtoMinor)
	b = wire.AppendStatusLineProto(b, minor, r.status)
	if !r.hasDate {
		b = append(b, "Date: "...)
		b = appendDate(b, c.now)
		b = append(b, '\r', '\n')
	}
	if len(r.contentType) > 0 || r.typeSet {
		b = append(b, "Content-Type: "...)
		b = append(b, r.contentType...)
		b = append(b, '\r', '\n')
	}
	b = r.appendFields(b, r.hdrs[:r.nhdrs])
	r.discard = x.isHead() || !wire.BodyAllowed(r.status)
	r.state = respFixed
	if final {
		r.state = respDone
	}
	switch {
	case r.status < 200 || r.status == 204:
		// No body and no Content-Length (RFC 9110 §8.6).
	case r.status == 304:
		// No Content-Length either, as net/http: a handler's length
		// (of the representation it did not send) is dropped.
	case bodyLen < 0 && x.isHead():
		// A HEAD response whose length is unknown says nothing about
		// framing; there is no body to frame (net/http does the same).
	case string(x.req.Method) == http.MethodConnect && r.status/100 == 2:
		// A 2xx answer to CONNECT opens a tunnel: no Content-Length or
		// Transfer-Encoding (RFC 9110 §9.3.6), and what follows the head
		// is the tunnel's, until the connection closes (net/http does
		// the same from Go 1.27).
		r.state = respUntilClose
		c.closing = true
	case bodyLen >= 0:
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, bodyLen, 10)
		b = append(b, '\r', '\n')
	case minor == 1:
		r.state = respChunked
		b = append(b, "Transfer-Encoding: chunked\r\n"...)
	default:
		r.state = respUntilClose
		c.closing = true
	}
	switch { // an HTTP/1.0 connection closes unless told otherwise (net/http says nothing then)
	case minor == 0 && !c.closing:
		b = append(b, "Connection: keep-alive\r\n"...)
	case minor == 1 && c.closing && r.status != http.StatusSwitchingProtocols:
		// A 101 says "Connection: Upgrade" (RFC 9110 §7.8); a "close"
		// beside it would make the client refuse the switch (net/http
		// leaves a protocol switch's Connection alone too). The
		// connection is the new protocol's after it either way.
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, '\r', '\n')
}

// appendInformational appends a 1xx response (100 Continue, 103 Early
// Hints) with the given fields; the final response follows later.
func (r *response) appendInformational(b []byte, code int, fields []respHeader) []byte {
	b = wire.AppendStatusLineProto(b, 1, code)
	b = r.appendFields(b, fields)
	return append(b, '\r', '\n')
}

// appendFields appends header or trailer fields. Their names were
// checked when they were set (setHeader, setTrailer, writeInformational)
// and their values sanitized by setSlot.
func (r *response) appendFields(b []byte, fields []respHeader) []byte {
	for i := range fields {
		b = wire.AppendHeader(b, fields[i].name, fields[i].value)
	}
	return b
}

// h1Write streams p after the head went out (response.write): a large
// write on TCP goes to the socket directly (h1_bigbody.go), others
// through the write buffer.
func (r *response) h1Write(p []byte) (int, error) {
	if len(p) >= directWriteMin && r.x.c.tcp != nil {
		return r.writeTCP(p)
	}
	return r.writeStreaming(p)
}

// h1Flush sends what the write buffer holds (response.flush).
func (r *response) h1Flush() error {
	if err := r.x.c.flush(); err != nil {
		r.err = err
	}
	return r.err
}

// h1Commit writes the head for a body that streams and the collected
// body behind it (response.commit): an http.Handler's unread small body
// is discarded first, no 100 Continue goes out after it, and the
// connection's fate is decided before the head says it.
func (r *response) h1Commit() error {
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

// h1DropWriteDeadline ends a handler's own write deadline with its
// response (response.reset): the next flush arms the server's timeouts
// again.
func (r *response) h1DropWriteDeadline() {
	r.x.c.writeDL, r.x.c.writeRenewFor = time.Time{}, 0
	r.x.c.nc.SetWriteDeadline(time.Time{})
}

// h1CloseAfter ends the connection after what is already queued
// (response.abort).
func (r *response) h1CloseAfter() { r.x.c.closing = true }

// h1Finish ends the response after the handler returned (response.finish):
// a collected response is written whole with its exact length; a
// streamed one gets its end (last chunk and trailers, or a close when the
// length is not met or the body ends with the connection).
func (r *response) h1Finish() {
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
			r.h1Finish()
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
