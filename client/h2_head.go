package client

// The request's HTTP/2 header block: the pseudo-header fields and
// req.Header as net/http's HTTP/2 transport sends them, HPACK-encoded,
// and its size against the server's SETTINGS_MAX_HEADER_LIST_SIZE.

import (
	"net/http"
	"strings"
)

// encodeHeadLocked encodes the request's header block as net/http's
// HTTP/2 transport does, with wire/h2's request encoder: the
// pseudo-header fields, then req.Header with lowercase names by the rules
// of RFC 9113 §8.2.2 (no connection-specific fields, host or
// content-length; te only as "trailers"), then user-agent,
// accept-encoding and trailer as the request needs, then the length of
// the body sent. The block is in cc.hbuf, valid until the next call.
func (cc *h2Conn) encodeHeadLocked(req *http.Request, method string, up *h2Upload, gzip bool) []byte {
	var trace func(name, value string)
	if cc.traced != nil {
		trace = cc.traceField
	}
	e := &cc.enc
	b := e.StartBlock(cc.hbuf[:0])
	scheme := req.URL.Scheme
	if scheme == "" {
		scheme = "http"
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	cc.pbuf = appendRequestURI(cc.pbuf[:0], req.URL)
	b = e.AppendRequestPseudo(b, method, scheme, host, cc.pbuf, trace)
	for k, vv := range req.Header {
		name := cc.lowerName(k)
		if name == "user-agent" || name == "trailer" {
			continue // written from the request's own fields, below
		}
		b = e.AppendRequestField(b, name, vv, trace)
	}
	if ua, ok := req.Header["User-Agent"]; !ok {
		b = e.AppendRequestField(b, "user-agent", h2UserAgentValue, trace)
	} else if len(ua) > 0 && ua[0] != "" {
		b = e.AppendRequestField(b, "user-agent", ua[:1], trace)
	}
	if gzip {
		b = e.AppendRequestField(b, "accept-encoding", h2GzipValue, trace)
	}
	if up != nil && len(up.trailer) > 0 {
		b = e.AppendRequestField(b, "trailer", []string{trailerList(up.trailer)}, trace)
	}
	n := int64(0) // no body
	if up != nil && up.body != nil {
		n = up.want // its length, or -1: unknown
	}
	b = e.AppendContentLength(b, method, n, trace)
	cc.hbuf = b
	return b
}

var (
	h2UserAgentValue = []string{h2UserAgent}
	h2GzipValue      = []string{"gzip"}
)

// traceField keeps a field for httptrace's WroteHeaderField while a
// traced head is encoded.
func (cc *h2Conn) traceField(name, value string) {
	cc.traced = append(cc.traced, name, value)
}

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
