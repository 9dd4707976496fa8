package server

// net/http's header-map semantics over a response record, for the
// http.ResponseWriter of both protocols (h1_responsewriter.go,
// h2_responsewriter.go).

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// handlerHeader is what an http.Handler's ResponseWriter adds to the
// response record (response.go): the header map, taken as it is at
// WriteHeader (implicit 200 on the first Write); Content-Type sniffed from
// the body's first bytes when the handler set none; trailers declared in
// the Trailer header or set under http.TrailerPrefix; 1xx responses from
// the map as it is when they are written. Both protocols' writers embed
// it, so a handler sees one set of rules whichever protocol the client
// speaks; only the bytes on the wire differ, and the response record
// writes those.
type handlerHeader struct {
	hdr         http.Header
	wroteHeader bool
	// sniffType: at WriteHeader the header had no Content-Type (nor an
	// encoding): the body decides it, whatever the handler sets later,
	// as net/http's snapshot of the header at WriteHeader does.
	sniffType bool
	status    int
	trailers  []string     // declared with the Trailer header
	info      []respHeader // fields of a 1xx response, reused
	keys      []string     // the map's keys, sorted, reused
	// http2: the fields HTTP/1.1 frames with (Transfer-Encoding,
	// trailers announced) do not change the framing, and a field whose
	// value HTTP/2 cannot carry is left out, as net/http's HTTP/2 server
	// does, rather than sanitized.
	http2 bool
}

func (h *handlerHeader) reset() {
	clear(h.hdr)
	h.wroteHeader = false
	h.sniffType = false
	h.status = 0
	h.trailers = h.trailers[:0]
}

// writeHeader takes the status and the header map into r, as WriteHeader
// does. It reports false when code is informational (1xx but 101): the
// caller sends that one at once with infoFields, and the final status is
// still to come. A second call is logged and ignored, as net/http does,
// before the code's check: a bad code after the head is only superfluous.
func (h *handlerHeader) writeHeader(r *response, srv *Server, code int) (final bool) {
	if h.wroteHeader {
		srv.logf("server: superfluous response.WriteHeader call (status %d after %d)", code, h.status)
		return true
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		return false
	}
	h.wroteHeader = true
	h.status = code
	r.status = code
	h.sniffType = h.needsSniff()
	h.copyHeader(r)
	return true
}

// sortedKeys returns the header keys in order, as net/http writes them.
func (h *handlerHeader) sortedKeys() []string {
	keys := h.keys[:0]
	for k := range h.hdr {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h.keys = keys
	return keys
}

// infoFields returns the fields of a 1xx response: the map's, as it is
// now, but those a response without a body does not carry (net/http
// leaves them out too).
func (h *handlerHeader) infoFields() []respHeader {
	n := 0
	for _, k := range h.sortedKeys() {
		if !wire.ValidHeaderName(k) || k == "Content-Length" || k == "Transfer-Encoding" {
			continue
		}
		if h.http2 && (k == "Date" || h2Hop(k)) {
			continue
		}
		for _, v := range h.hdr[k] {
			if h.http2 && !wire.ValidHeaderValue(v) {
				continue
			}
			setSlot(&h.info, &n, k, v, nil, false)
		}
	}
	return h.info[:n]
}

// copyHeader moves the header map into the response's slots: net/http
// takes the map as it is at WriteHeader. On HTTP/1.1, trailers (declared,
// or set under http.TrailerPrefix) make the body chunked so they can
// follow it.
func (h *handlerHeader) copyHeader(r *response) {
	for _, k := range h.sortedKeys() {
		vv := h.hdr[k]
		if strings.HasPrefix(k, http.TrailerPrefix) {
			r.forceChunked = r.forceChunked || !h.http2
			continue
		}
		switch k {
		case "Trailer":
			for name := range listItems(vv) {
				h.trailers = append(h.trailers, http.CanonicalHeaderKey(name))
			}
			// chunked, or close-delimited on HTTP/1.0
			r.forceChunked = r.forceChunked || (len(h.trailers) > 0 && !h.http2)
		case "Transfer-Encoding":
			if !h.http2 {
				h.transferEncoding(r, vv)
			}
			continue
		case "Date":
			// Set to nil, it suppresses the automatic Date (net/http's
			// documented way).
			r.hasDate = r.hasDate || len(vv) == 0
		case "Content-Length":
			// Set to nil, it suppresses the automatic length: the body
			// is framed otherwise (chunked on HTTP/1.1; on HTTP/2 by
			// its END_STREAM alone), as net/http does.
			r.forceChunked = r.forceChunked || len(vv) == 0
		}
		for i, v := range vv {
			if h.http2 && !wire.ValidHeaderValue(v) {
				continue
			}
			r.setHeader(k, v, nil, i == 0)
		}
	}
}

// transferEncoding applies a handler's Transfer-Encoding on HTTP/1.1: it
// chose the framing, as net/http lets it. The body goes chunked
// (close-delimited on HTTP/1.0) with no Content-Length, and codings other
// than chunked ("gzip") are sent as given, before the server's own
// "chunked". "identity" (no coding) leaves the framing to the server, and
// the connection closes after the response; an empty value is no
// Transfer-Encoding: both as on net/http.
func (h *handlerHeader) transferEncoding(r *response, vv []string) {
	var codings []string
	for c := range listItems(vv) {
		codings = append(codings, c)
	}
	switch {
	case len(codings) == 0:
	case len(codings) == 1 && strings.EqualFold(codings[0], "identity"):
		r.wantClose = true
	default:
		r.forceChunked = true
		r.declaredLen = -1
		for _, coding := range codings {
			if !strings.EqualFold(coding, "chunked") && wire.ValidHeaderValue(coding) {
				setSlot(&r.hdrs, &r.nhdrs, "Transfer-Encoding", coding, nil, false)
			}
		}
	}
}

// setTrailers hands the trailers to the response when the handler
// returns, from the map as it is then (net/http's finalTrailers): the
// fields declared in Trailer and any set under http.TrailerPrefix, in
// sorted order. On HTTP/1.1 a response that did not stream chunked sends
// none.
func (h *handlerHeader) setTrailers(r *response) {
	if !h.http2 && r.state != respChunked && !(r.state == respCollecting && r.forceChunked) {
		return
	}
	for _, k := range h.sortedKeys() {
		name, isPrefixed := strings.CutPrefix(k, http.TrailerPrefix)
		if !isPrefixed {
			if !slices.Contains(h.trailers, k) {
				continue
			}
			name = k
		}
		for _, v := range h.hdr[k] {
			if h.http2 && !wire.ValidHeaderValue(v) {
				continue
			}
			r.setTrailer(name, v)
		}
	}
}

// needsSniff reports whether the Content-Type is to be sniffed from the
// body (net/http's rule): none set, no Content-Encoding, and on HTTP/1.1
// no Transfer-Encoding.
func (h *handlerHeader) needsSniff() bool {
	if _, ok := h.hdr["Content-Type"]; ok {
		return false
	}
	return h.hdr.Get("Content-Encoding") == "" && (h.http2 || h.hdr.Get("Transfer-Encoding") == "")
}

// sniff sets Content-Type from the body's first bytes (what r collected,
// then next) when the handler set none and the head is about to be sent:
// net/http's rule, whatever the sizes of the writes.
func (h *handlerHeader) sniff(r *response, next []byte) {
	if r.committed() || !wire.BodyAllowed(h.status) || !h.sniffType {
		return
	}
	data := r.buf
	if len(data) < sniffLen && len(next) > 0 {
		var first [sniffLen]byte
		n := copy(first[:], data)
		n += copy(first[n:], next)
		data = first[:n]
	}
	if len(data) > 0 {
		r.contentType = append(r.contentType[:0], http.DetectContentType(data)...)
	}
}

// bodyRefused is the error of a body write of n bytes where the status
// allows no body (after the implicit 200).
func (h *handlerHeader) bodyRefused(n int) error {
	if n > 0 && !wire.BodyAllowed(h.status) {
		return http.ErrBodyNotAllowed
	}
	return nil
}

// h2HopFields are the connection-specific fields HTTP/2 does not carry
// (RFC 9113 §8.2.2), canonical: wire/h2's one list.
var h2HopFields = &h2.ConnectionSpecificKeys

// h2Hop reports whether the canonical name k stays out of an HTTP/2
// response: a connection-specific field, or a trailer set under
// http.TrailerPrefix.
func h2Hop(k string) bool {
	for _, h := range h2HopFields {
		if k == h {
			return true
		}
	}
	return strings.HasPrefix(k, http.TrailerPrefix)
}
