package wire

import "bytes"

// framingFields collects, field by field, what decides how a message is
// delimited and whether its connection persists: Content-Length,
// Transfer-Encoding and Connection. Requests and responses are held to the
// same rules, so neither side can read a message two ways.
type framingFields struct {
	length                 int64
	lengthText             []byte
	lengthSeen, chunked    bool
	closeTok, keepAliveTok bool
	upgradeTok             bool
}

// contentLength takes a Content-Length value. Repeats must be the same
// text, not merely the same number: net/http rejects "5" beside "05".
func (f *framingFields) contentLength(value []byte) error {
	n, err := ParseContentLength(value)
	if err != nil {
		return err
	}
	if f.lengthSeen && !bytes.Equal(value, f.lengthText) {
		return ErrConflictingLength
	}
	f.lengthSeen, f.lengthText, f.length = true, value, n
	return nil
}

// connection takes a Connection value's tokens.
func (f *framingFields) connection(value []byte) {
	f.closeTok = f.closeTok || HasToken(value, "close")
	f.keepAliveTok = f.keepAliveTok || HasToken(value, "keep-alive")
	f.upgradeTok = f.upgradeTok || HasToken(value, "upgrade")
}

// transferEncoding takes a Transfer-Encoding value: exactly one field,
// "chunked", and nothing else. Chunked anywhere but last, or twice, is
// a body whose length cannot be known (RFC 9112 §6.3: 400); any other
// coding is one we do not implement (501).
func (f *framingFields) transferEncoding(value []byte) error {
	if f.chunked || !EqualFold(value, "chunked") {
		if f.chunked || chunkedNotLast(value) {
			return ErrChunkedNotFinal
		}
		return ErrUnsupportedTE
	}
	f.chunked = true
	return nil
}

// chunkedNotLast reports whether the coding list v names chunked before
// its last coding, or more than once.
func chunkedNotLast(v []byte) bool {
	seen := 0
	last := false
	for len(v) > 0 {
		elem := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			elem, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		elem = TrimOWS(elem)
		if len(elem) == 0 {
			continue
		}
		last = EqualFold(elem, "chunked")
		if last {
			seen++
		}
	}
	return seen > 1 || seen == 1 && !last
}

// check applies the rules that span fields, once the head is read: no
// Content-Length beside chunked, no chunked on HTTP/1.0.
func (f *framingFields) check(protoMinor int) error {
	if f.chunked {
		if f.lengthSeen {
			return ErrLengthAndChunked
		}
		if protoMinor == 0 {
			return ErrTEOnHTTP10
		}
	}
	return nil
}

// closes reports whether the connection ends after this message:
// "Connection: close", or HTTP/1.0 without "keep-alive".
func (f *framingFields) closes(protoMinor int) bool {
	return f.closeTok || (protoMinor == 0 && !f.keepAliveTok)
}

// BodyAllowed reports whether a response with this status may carry a body
// (RFC 9110: 1xx, 204 and 304 may not).
func BodyAllowed(status int) bool {
	return !(status >= 100 && status < 200) && status != 204 && status != 304
}
