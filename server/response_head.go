package server

// A response's head: header and trailer slots, set once and checked once,
// for both engines (HTTP/1.1 writes them as text, h1_response.go; HTTP/2
// encodes them, h2_response.go).

import (
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
