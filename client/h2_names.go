package client

// HTTP/2 header field names: lowercase on the wire, canonical in
// http.Header. Both conversions go through tables of common names and
// per-connection caches, so that steady traffic costs no allocation for
// names; and the rules a response's names must follow.

import (
	"net/textproto"
	"strings"
)

// lowerName returns a header name in lowercase, as HTTP/2 sends it:
// common names from a table, others from a per-connection cache, so that
// a request's names cost no allocation once seen.
func (cc *h2Conn) lowerName(k string) string {
	if l, ok := h2LowerNames[k]; ok {
		return l
	}
	if !hasUpper(k) {
		return k
	}
	if l, ok := cc.lowered[k]; ok {
		return l
	}
	l := strings.ToLower(k)
	if len(cc.lowered) < h2NameCacheMax {
		if cc.lowered == nil {
			cc.lowered = make(map[string]string)
		}
		cc.lowered[k] = l
	}
	return l
}

// h2NameCacheMax bounds each per-connection name cache: names seen once
// (a server's or a caller's unique ones) cannot grow it without end.
const h2NameCacheMax = 256

// hasUpper reports an uppercase ASCII letter: a name without one is sent
// as it is.
func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// h2CommonNames are the header names interned both ways: a request's
// canonical name to its lowercase wire form, and a response's wire form
// back to the canonical key, without allocating.
var h2CommonNames = []string{
	"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Accept-Ranges",
	"Access-Control-Allow-Credentials", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Origin", "Access-Control-Expose-Headers", "Access-Control-Max-Age",
	"Age", "Allow", "Alt-Svc", "Authorization", "Cache-Control", "Connection", "Content-Disposition",
	"Content-Encoding", "Content-Language", "Content-Length", "Content-Location", "Content-Range",
	"Content-Security-Policy", "Content-Type", "Cookie", "Date", "Etag", "Expect", "Expires",
	"From", "Host", "If-Match", "If-Modified-Since", "If-None-Match", "If-Range", "If-Unmodified-Since",
	"Keep-Alive", "Last-Modified", "Link", "Location", "Max-Forwards", "Origin", "Pragma",
	"Proxy-Authenticate", "Proxy-Authorization", "Range", "Referer", "Refresh", "Retry-After",
	"Server", "Set-Cookie", "Strict-Transport-Security", "Te", "Trailer", "Transfer-Encoding",
	"Upgrade", "User-Agent", "Vary", "Via", "Www-Authenticate", "X-Content-Type-Options",
	"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Frame-Options", "X-Request-Id",
	"X-Xss-Protection", "Idempotency-Key", "Traceparent", "Tracestate", "Grpc-Status", "Grpc-Message",
}

var h2LowerNames, h2CanonNames = func() (lower, canon map[string]string) {
	lower = make(map[string]string, len(h2CommonNames))
	canon = make(map[string]string, len(h2CommonNames))
	for _, k := range h2CommonNames {
		l := strings.ToLower(k)
		lower[k] = l
		canon[l] = k
	}
	return lower, canon
}()

// validResponseName reports a field name HTTP/2 allows: lowercase token
// characters (§8.2.1).
func validResponseName(name []byte) bool {
	for _, c := range name {
		if !h2NameByte[c] {
			return false
		}
	}
	return len(name) > 0
}

// h2NameByte marks the bytes of a valid HTTP/2 field name: the token
// characters of RFC 9110 §5.6.2, less uppercase letters.
var h2NameByte = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// canonicalName returns the canonical key of a response field name:
// interned for common names, cached per connection for others.
func (cc *h2Conn) canonicalName(name []byte) string {
	if k, ok := h2CanonNames[string(name)]; ok {
		return k
	}
	if k, ok := cc.canon[string(name)]; ok {
		return k
	}
	k := textproto.CanonicalMIMEHeaderKey(string(name))
	if len(cc.canon) < h2NameCacheMax {
		if cc.canon == nil {
			cc.canon = make(map[string]string)
		}
		cc.canon[string(name)] = k
	}
	return k
}
