package client

// The request's HTTP/2 header block: the pseudo-header fields and
// req.Header as net/http's HTTP/2 transport sends them, HPACK-encoded,
// and its size against the server's SETTINGS_MAX_HEADER_LIST_SIZE.

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// encodeHeadLocked encodes the request's header block as net/http's
// HTTP/2 transport does: the pseudo-header fields, then req.Header with
// lowercase names, less the connection-specific fields, with user-agent,
// accept-encoding, trailer and content-length as the request needs. The
// block is in cc.hbuf, valid until the next call.
func (cc *h2Conn) encodeHeadLocked(req *http.Request, method string, up *h2Upload, gzip bool) []byte {
	b := cc.enc.StartBlock(cc.hbuf[:0])
	b = cc.field(b, ":method", method)
	scheme := req.URL.Scheme
	if scheme == "" {
		scheme = "http"
	}
	b = cc.field(b, ":scheme", scheme)
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	b = cc.field(b, ":authority", host)
	cc.pbuf = appendRequestURI(cc.pbuf[:0], req.URL)
	b = cc.fieldBytes(b, h2PathName, cc.pbuf)

	for k, vv := range req.Header {
		name := cc.lowerName(k)
		if h2.ConnectionSpecific(name) {
			continue // forbidden in HTTP/2 (§8.2.2)
		}
		switch name {
		case "host", "content-length", "user-agent", "trailer":
			continue // written from the request's own fields
		case "te":
			// Only "trailers" may be sent (RFC 9113 §8.2.2).
			for _, v := range vv {
				if wire.HasToken([]byte(v), "trailers") {
					b = cc.field(b, "te", "trailers")
					break
				}
			}
			continue
		}
		for _, v := range vv {
			b = cc.field(b, name, trimOWS(v))
		}
	}
	if ua, ok := req.Header["User-Agent"]; !ok {
		b = cc.field(b, "user-agent", h2UserAgent)
	} else if len(ua) > 0 && ua[0] != "" {
		b = cc.field(b, "user-agent", trimOWS(ua[0]))
	}
	if gzip {
		b = cc.field(b, "accept-encoding", "gzip")
	}
	if up != nil && len(up.trailer) > 0 {
		b = cc.field(b, "trailer", trailerList(up.trailer))
	}
	switch {
	case up != nil && up.want > 0:
		cc.pbuf = strconv.AppendInt(cc.pbuf[:0], up.want, 10)
		b = cc.fieldBytes(b, h2ContentLengthName, cc.pbuf)
	case up == nil || up.body == nil:
		// No body: net/http sends a zero length for the methods that
		// usually carry one.
		if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
			b = cc.field(b, "content-length", "0")
		}
	}
	cc.hbuf = b
	return b
}

// field appends a field to the block being encoded, and keeps it for
// httptrace's WroteHeaderField while cc.traced is on (not nil).
func (cc *h2Conn) field(b []byte, name, value string) []byte {
	if cc.traced != nil {
		cc.traced = append(cc.traced, name, value)
	}
	return cc.enc.AppendField(b, name, value)
}

// fieldBytes is field for a value in bytes.
func (cc *h2Conn) fieldBytes(b, name, value []byte) []byte {
	if cc.traced != nil {
		cc.traced = append(cc.traced, string(name), string(value))
	}
	return cc.enc.AppendFieldBytes(b, name, value)
}

var (
	h2PathName          = []byte(":path")
	h2ContentLengthName = []byte("content-length")
)

// requestListSize is the size of the request's header list as RFC 9113
// §6.5.2 counts it (name, value and 32 bytes per field), a close upper
// bound of what encodeHeadLocked sends, to hold against the server's
// SETTINGS_MAX_HEADER_LIST_SIZE before the encoder's table changes.
func requestListSize(req *http.Request, method string) uint64 {
	n := uint64(len(method) + len(req.URL.Scheme) + len(req.Host) + len(req.URL.Host) +
		len(req.URL.Path) + len(req.URL.RawPath) + len(req.URL.RawQuery) + 4*32 + 64)
	for k, vv := range req.Header {
		for _, v := range vv {
			n += uint64(len(k) + len(v) + 32)
		}
	}
	return n
}

// trailerList is the "trailer" field announcing the request's trailers.
func trailerList(tr http.Header) string {
	keys := make([]string, 0, len(tr))
	for k := range tr {
		keys = append(keys, strings.ToLower(k))
	}
	return strings.Join(keys, ",")
}
