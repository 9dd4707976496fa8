package server

import (
	"iter"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/hotpathhq/hotpath/wire"
)

// What both engines' http.Handler adapters share to build the
// *http.Request a handler sees (h1_adapter_request.go, h2_request.go): the
// URL, interned strings, header maps and declared trailers.

// declaredTrailers moves the request's Trailer field out of h and
// returns the names it declares as the keys of Request.Trailer, as
// net/http does on both protocols; nil when there is none.
func declaredTrailers(h http.Header) http.Header {
	names, ok := h["Trailer"]
	if !ok {
		return nil
	}
	delete(h, "Trailer")
	var t http.Header
	for name := range listItems(names) {
		if t == nil {
			t = make(http.Header)
		}
		t[http.CanonicalHeaderKey(name)] = nil
	}
	return t
}

// listItems yields the items of comma-separated field values (a Trailer
// field's names, codings), trimmed, empty ones skipped.
func listItems(vv []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, v := range vv {
			for len(v) > 0 {
				part, rest, _ := cut(v, ',')
				v = rest
				if p := textproto.TrimString(part); p != "" && !yield(p) {
					return
				}
			}
		}
	}
}

// parseURL parses the request target like url.ParseRequestURI (with
// net/http's handling of CONNECT), without the parser for the common
// origin-form target whose path needs no escaping.
func parseURL(u *url.URL, method, target string) (*url.URL, error) {
	if target == "*" {
		*u = url.URL{Path: "*"}
		return u, nil
	}
	if len(target) > 0 && target[0] == '/' && plainPath(target) {
		path, query, hasQuery := cut(target, '?')
		*u = url.URL{Path: path, RawQuery: query, ForceQuery: hasQuery && query == ""}
		return u, nil
	}
	raw := target
	justAuthority := method == "CONNECT" && (len(target) == 0 || target[0] != '/')
	if justAuthority {
		raw = "http://" + target
	}
	u, err := url.ParseRequestURI(raw)
	if err != nil {
		return nil, err
	}
	if justAuthority {
		u.Scheme = ""
	}
	return u, nil
}

// pathSafe lists the bytes url.URL.EscapedPath leaves as they are, so a
// path made of them needs no RawPath: unreserved and the sub-delims and
// ':' and '@' that paths keep.
var pathSafe = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/:@&=+$,;" {
		t[c] = true
	}
	return t
}()

// plainPath reports whether the path part of t (before '?') is all
// pathSafe bytes, so that Path is the target's path as it is.
func plainPath(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '?' {
			return true // the query is kept raw
		}
		if !pathSafe[c] {
			return false
		}
	}
	return true
}

func cut(s string, sep byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// requestStrings is a connection's interning cache (intern): the strings
// of its last request, reused when the next one's bytes match. One per
// connection, on either engine.
type requestStrings struct{ target, host, values string }

// requestTarget fills r's Method, RequestURI, URL and Host from a parsed
// head, on either protocol: target is the request-target (HTTP/1.1) or
// :path (HTTP/2), host the Host field or :authority. On HTTP/2, CONNECT
// has no :path and names its authority, which becomes the URL's Host.
// The URL lives in u.
func (rs *requestStrings) requestTarget(r *http.Request, u *url.URL, method, target, host []byte, http2 bool) error {
	r.Method = methodString(method)
	r.RequestURI = intern(&rs.target, target)
	r.Host = intern(&rs.host, host)
	if http2 && r.Method == http.MethodConnect && len(target) == 0 { // not RFC 8441's, which has a :path
		*u = url.URL{Host: r.Host}
		r.URL = u
		return nil
	}
	pu, err := parseURL(u, r.Method, r.RequestURI)
	if err != nil {
		return err
	}
	r.URL = pu
	if pu.Host != "" && !http2 { // absolute-form: the target's authority wins, as in net/http
		r.Host = pu.Host
	}
	return nil
}

// requestHeader builds a request's Header map from its fields, on either
// protocol, as net/http does on each. The values are copied into one
// string, interned (joined, when given, holds them back to back already),
// and each value is a slice of it; one-value fields are backed by backing
// while it lasts. On HTTP/1.1, Host goes to Request.Host, repeated
// identical Content-Length values fold into one, and "Pragma: no-cache"
// without Cache-Control adds "Cache-Control: no-cache". On HTTP/2, names
// arrive in lower case and cookie fields are joined into one (RFC 9113
// §8.2.3).
func (rs *requestStrings) requestHeader(fields []wire.Header, joined []byte, backing []string, http2 bool) http.Header {
	if joined == nil {
		size := 0
		for _, h := range fields {
			size += len(h.Value)
		}
		var scratch [512]byte
		joined = scratch[:0]
		if size > len(scratch) {
			joined = make([]byte, 0, size)
		}
		for _, h := range fields {
			joined = append(joined, h.Value...)
		}
	}
	return headerOf(fields, intern(&rs.values, joined), backing, http2)
}

// headerOf is requestHeader once the values are one string, all.
func headerOf(fields []wire.Header, all string, backing []string, http2 bool) http.Header {
	size, cookies := len(fields), 0
	if http2 {
		for _, h := range fields {
			if string(h.Name) == "cookie" {
				cookies++
			}
		}
		size += min(cookies, 1) - cookies
	} else if size > 0 {
		size-- // Host is not in it
	}
	hdr := make(http.Header, size)
	if len(fields) == 0 {
		return hdr
	}
	if len(fields) > len(backing) {
		backing = make([]string, len(fields))
	}
	var cookie []string
	off := 0
	for i, h := range fields {
		v := all[off : off+len(h.Value)]
		off += len(h.Value)
		if http2 && cookies > 1 && string(h.Name) == "cookie" {
			cookie = append(cookie, v)
			continue
		}
		if !http2 && wire.EqualFold(h.Name, "Host") {
			continue
		}
		key := canonicalKey(h.Name)
		if prev, ok := hdr[key]; ok {
			if key == "Content-Length" && !http2 { // wire checked the repeats are identical
				continue
			}
			hdr[key] = append(prev, v)
			continue
		}
		backing[i] = v
		hdr[key] = backing[i : i+1 : i+1]
	}
	if len(cookie) > 0 {
		hdr["Cookie"] = []string{strings.Join(cookie, "; ")}
	}
	if p := hdr["Pragma"]; !http2 && len(p) > 0 && p[0] == "no-cache" {
		if _, ok := hdr["Cache-Control"]; !ok {
			hdr["Cache-Control"] = []string{"no-cache"}
		}
	}
	return hdr
}

// intern returns b as a string, reusing *last when it holds the same
// bytes: a client sends the same target, host and fields again and again
// on a connection, and each is a string the handler may keep. Both
// engines keep their last strings per connection.
func intern(last *string, b []byte) string {
	if string(b) == *last { // compiled without allocating
		return *last
	}
	*last = string(b)
	return *last
}

// standardMethods are returned by methodString without allocating.
var standardMethods = [...]string{
	http.MethodGet, http.MethodPost, http.MethodHead, http.MethodPut, http.MethodDelete,
	http.MethodPatch, http.MethodOptions, http.MethodConnect, http.MethodTrace,
}

// methodString returns the method, without allocating for the standard ones.
func methodString(m []byte) string {
	for _, s := range standardMethods {
		if string(m) == s {
			return s
		}
	}
	return string(m)
}

// commonHeaders are canonical names returned without allocating.
var commonHeaders = []string{
	"Accept", "Accept-Charset", "Accept-Encoding", "Accept-Language", "Authorization",
	"Cache-Control", "Connection", "Content-Encoding", "Content-Length", "Content-Type",
	"Cookie", "Date", "Expect", "Forwarded", "Host", "If-Match", "If-Modified-Since",
	"If-None-Match", "If-Range", "If-Unmodified-Since", "Keep-Alive", "Origin", "Pragma",
	"Range", "Referer", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "User-Agent",
	"Via", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-Ip",
	"X-Request-Id", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Protocol",
	"Sec-Websocket-Extensions", "Traceparent", "Tracestate", "Baggage",
	"Sec-Fetch-Dest", "Sec-Fetch-Mode", "Sec-Fetch-Site", "Sec-Fetch-User", "Dnt",
	"Upgrade-Insecure-Requests", "Priority",
}

// canonicalKey returns the canonical form of a header name
// (textproto.CanonicalMIMEHeaderKey), from a table for common names.
func canonicalKey(name []byte) string {
	for _, k := range commonHeaders {
		if wire.EqualFold(name, k) {
			return k
		}
	}
	return textproto.CanonicalMIMEHeaderKey(string(name))
}
