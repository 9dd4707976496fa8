package h2

import (
	"strconv"

	"github.com/hotpathhq/hotpath/wire"
)

// A request's header block, as a client encodes it (RFC 9113 §8.3.1,
// §8.2): its pseudo-header fields first, then its header fields by the
// rules of §8.2.2, then the body's content-length. The HTTP/2 client and
// the load generator both build their blocks with these, each with its
// own Encoder, order of fields and fields of its own (the client's
// user-agent, accept-encoding and trailer):
//
//	b := enc.StartBlock(buf)
//	b = enc.AppendRequestPseudo(b, method, scheme, authority, path, nil)
//	for name, values := range header { // names lowercased
//		b = enc.AppendRequestField(b, name, values, nil)
//	}
//	b = enc.AppendContentLength(b, method, bodyLen, nil)
//
// They do not check names and values: a caller checks them where its
// errors read best (wire.ValidHeaderName, wire.ValidHeaderValue), once.
// A trace function, when not nil, sees each field as it is encoded, for
// httptrace's WroteHeaderField; nil costs nothing.

// AppendRequestPseudo appends a request's pseudo-header fields (§8.3.1):
// :method, :scheme, :authority and :path, in that order.
func (e *Encoder) AppendRequestPseudo(dst []byte, method, scheme, authority string, path []byte, trace func(name, value string)) []byte {
	if trace != nil {
		trace(":method", method)
		trace(":scheme", scheme)
		trace(":authority", authority)
		trace(":path", string(path))
	}
	dst = e.AppendField(dst, ":method", method)
	dst = e.AppendField(dst, ":scheme", scheme)
	dst = e.AppendField(dst, ":authority", authority)
	return e.AppendFieldBytes(dst, pathName, path)
}

var pathName = []byte(":path")

// sentAsIs reports whether a request header field named name (lowercase)
// goes into the block as given by AppendRequestField: false for the
// fields it leaves out or rewrites (the connection-specific ones, host,
// content-length, te).
func sentAsIs(name string) bool {
	switch name {
	case "host", "content-length", "te":
		return false
	}
	return !ConnectionSpecific(name)
}

// AppendRequestField appends a request header field with each of its
// values, name lowercase (§8.2.1), by the rules of §8.2.2 and §8.3.1: a
// connection-specific field ([ConnectionSpecific]) is left out; so is
// host, which the request's :authority carries, and content-length,
// which AppendContentLength writes from the length of the body actually
// sent; te goes only as "trailers", once, when one of its values names
// that token (a list such as "trailers, deflate" does); a value loses the
// spaces and tabs around it (§8.2.1: a field value must not begin or end
// with whitespace).
func (e *Encoder) AppendRequestField(dst []byte, name string, values []string, trace func(name, value string)) []byte {
	if !sentAsIs(name) {
		if name != "te" {
			return dst
		}
		for _, v := range values {
			if wire.HasToken([]byte(v), "trailers") {
				if trace != nil {
					trace("te", "trailers")
				}
				return e.AppendField(dst, "te", "trailers")
			}
		}
		return dst
	}
	for _, v := range values {
		v = wire.TrimOWS(v)
		if trace != nil {
			trace(name, v)
		}
		dst = e.AppendField(dst, name, v)
	}
	return dst
}

// AppendContentLength appends the content-length of a request body of n
// bytes, as net/http's transports send it: n when it is above 0; "0" for
// an empty body only when the method usually carries one (POST, PUT,
// PATCH); nothing when n is negative, a body of unknown length (its DATA
// frames end with END_STREAM). A content-length the caller's header held
// is left out by AppendRequestField: this one, the length of what is
// sent, is the only one.
func (e *Encoder) AppendContentLength(dst []byte, method string, n int64, trace func(name, value string)) []byte {
	if n < 0 || n == 0 && method != "POST" && method != "PUT" && method != "PATCH" {
		return dst
	}
	var num [20]byte
	v := strconv.AppendInt(num[:0], n, 10)
	if trace != nil {
		trace("content-length", string(v))
	}
	return e.AppendFieldBytes(dst, contentLengthName, v)
}

var contentLengthName = []byte("content-length")
