package server

// A response's head: header and trailer slots (set once, checked once)
// and the status line and fields as they go out on HTTP/1.1.

import (
	"net/http"
	"strconv"

	"github.com/hotpathhq/hotpath/wire"
)

// respHeader is a reusable header slot; value keeps its capacity from
// request to request, so setting a header does not allocate.
type respHeader struct {
	name  string
	value []byte
}

// clearHeaders drops every header and the collected body: the response
// starts over (for an error that replaces it).
func (r *response) clearHeaders() {
	r.sent = 0
	r.contentType = r.contentType[:0]
	r.typeSet = false
	r.nhdrs = 0
	r.buf = r.buf[:0]
	r.declaredLen = -1
	r.forceChunked = false
}

// setHeader sets (replace) or adds a header field before the head is
// sent. The value is s followed by b (one of them is empty). Names that
// are not tokens are dropped and control bytes in values become spaces,
// so nothing a handler sets can split the response. Content-Type,
// Content-Length, Connection: close and Date are understood;
// Transfer-Encoding is the server's to decide.
func (r *response) setHeader(name, s string, b []byte, replace bool) {
	if r.committed() || !wire.ValidHeaderName(name) {
		return
	}
	switch len(name) {
	case 4:
		if equalFoldString(name, "Date") {
			r.hasDate = true
		}
	case 10:
		if equalFoldString(name, "Connection") {
			if b != nil {
				s = string(b)
			}
			if hasTokenString(s, "close") {
				r.wantClose = true // written by appendHead
				return
			}
			// Other tokens ("Upgrade" on a 101) are sent as given.
		}
	case 12:
		if equalFoldString(name, "Content-Type") {
			r.contentType = appendSanitized(r.contentType[:0], s)
			r.contentType = appendSanitized(r.contentType, b)
			r.typeSet = true
			return
		}
	case 14:
		if equalFoldString(name, "Content-Length") {
			var n int64
			var err error
			if b != nil {
				n, err = wire.ParseContentLength(b)
			} else {
				n, err = wire.ParseContentLength(s)
			}
			if err == nil {
				r.declaredLen = n
			}
			return
		}
	case 17:
		if equalFoldString(name, "Transfer-Encoding") {
			return
		}
	}
	setSlot(&r.hdrs, &r.nhdrs, name, s, b, replace)
}

// setTrailer sets a trailer field, sent after a chunked body. Before the
// head is sent it also announces trailers, so the body is chunked.
func (r *response) setTrailer(name, value string) {
	if !wire.ValidHeaderName(name) || r.state == respDone || r.state == respAborted {
		return
	}
	if !r.committed() && r.st == nil {
		r.forceChunked = true // HTTP/1.1: a body trailers can follow
	}
	setSlot(&r.trailers, &r.ntrailers, name, value, nil, false)
}

// setSlot stores name: s+b in (*slots)[:*n], replacing the first field
// of that name if replace is set.
func setSlot(slots *[]respHeader, n *int, name, s string, b []byte, replace bool) {
	var h *respHeader
	if replace {
		for i := 0; i < *n; i++ {
			if equalFoldString((*slots)[i].name, name) {
				h = &(*slots)[i]
				break
			}
		}
	}
	if h == nil {
		if *n == len(*slots) {
			*slots = append(*slots, respHeader{})
		}
		h = &(*slots)[*n]
		*n++
		h.name = name
	}
	h.value = appendSanitized(h.value[:0], s)
	if len(b) > 0 {
		h.value = appendSanitized(h.value, b)
	}
}

// delHeader removes a header set earlier.
func (r *response) delHeader(name string) {
	switch {
	case equalFoldString(name, "Content-Type"):
		r.contentType = r.contentType[:0]
		r.typeSet = false
		return
	case equalFoldString(name, "Content-Length"):
		r.declaredLen = -1
		return
	}
	j := 0
	for i := 0; i < r.nhdrs; i++ {
		if !equalFoldString(r.hdrs[i].name, name) {
			r.hdrs[i], r.hdrs[j] = r.hdrs[j], r.hdrs[i]
			j++
		}
	}
	r.nhdrs = j
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
	if r.status >= 200 && r.status/100 != 2 && string(x.req.Method) == http.MethodConnect {
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
	case r.status/100 == 2 && string(x.req.Method) == http.MethodConnect:
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
	case minor == 1 && c.closing:
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
