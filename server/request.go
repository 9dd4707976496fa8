package server

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"

	"github.com/hotpathhq/hotpath/wire"
)

// Building the *http.Request a handler sees from the parsed head.

// requestAlloc gathers what a request needs that the handler may keep, so
// that it costs one allocation instead of three.
type requestAlloc struct {
	ctx  requestContext
	url  url.URL
	vals [16]string // backing for up to 16 header values
}

// buildRequest makes the handler's *http.Request from the parsed head.
func (a *adapter) buildRequest(ra *requestAlloc) error {
	w := &a.c.ctx.req
	var r http.Request
	if err := a.strs.requestTarget(&r, &ra.url, w.Method, w.Target, w.Host, false); err != nil {
		return err
	}
	r.Proto = "HTTP/1.1"
	r.ProtoMajor, r.ProtoMinor = 1, w.ProtoMinor
	switch {
	case len(w.Proto) == 8 && w.Proto[5] == '2': // "PRI *" (conn.priHandOver)
		r.Proto, r.ProtoMajor = "HTTP/2.0", 2
	case w.ProtoMinor == 0:
		r.Proto = "HTTP/1.0"
	}
	r.Header = a.strs.requestHeader(w.Headers, nil, ra.vals[:], false)
	r.ContentLength = w.ContentLength
	if w.Chunked {
		r.TransferEncoding = []string{"chunked"}
		// As net/http: the framing headers leave the map, declared
		// trailers become the Trailer map's keys.
		delete(r.Header, "Transfer-Encoding")
		r.Trailer = declaredTrailers(r.Header)
	}
	r.Close = w.Close
	r.RemoteAddr = a.c.hc.remoteAddr
	r.TLS = a.c.hc.tlsState
	if r.TLS == nil && a.stater != nil {
		// A connection that is TLS without being a *tls.Conn (a
		// wrapper's): its state, as net/http reports it.
		st := a.stater.ConnectionState()
		r.TLS = &st
	}
	if w.ContentLength == 0 && !w.Chunked {
		r.Body = http.NoBody
	} else {
		a.body = &requestBody{a: a}
		r.Body = a.body
	}
	a.req = r.WithContext(&ra.ctx) // the one allocation of the Request
	return nil
}

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
	if http2 && r.Method == http.MethodConnect {
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

// onTrailer puts a request trailer field into Request.Trailer, as
// net/http does once the body is read (undeclared fields included).
func (a *adapter) onTrailer(name, value []byte) {
	r := a.req
	if r == nil {
		return
	}
	if r.Trailer == nil {
		r.Trailer = make(http.Header)
	}
	key := canonicalKey(name)
	r.Trailer[key] = append(r.Trailer[key], string(value))
}

// requestBody is the Request.Body: the connection's body stream, for
// this request only. Its lock is held across each Read and taken when the
// handler returns, as net/http's body.mu is, so a goroutine the handler
// left reading (http.TimeoutHandler's inner handler) never reads at the
// same time as the connection, nor into the next request.
type requestBody struct {
	a      *adapter
	mu     sync.Mutex
	closed bool // the handler returned
}

// discardBeforeHead runs as an http.Handler's response head is about to
// stream: what is left of a small Content-Length body the handler did not
// read is read and discarded now, and the body is closed (a later Read
// gets http.ErrBodyReadAfterClose), as net/http does unless the handler
// enabled full duplex. Clients that send the whole request before they
// read the response then never deadlock with a handler that answers
// without reading. A body still awaiting its 100 Continue, a chunked one
// and one past 256 KiB are left alone (past 256 KiB the connection
// closes after the response, decideClose).
func (a *adapter) discardBeforeHead() {
	x := &a.c.ctx
	b := a.body
	if b == nil || x.fullDuplex || x.body.chunked || x.body.done.Load() ||
		x.body.left.Load() > maxDrainBytes || x.req.Expect100 && !x.body.continueSent.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if !x.body.finish() {
		a.c.closing = true
	}
	b.closed = true
}

// errBodyAfterHandler is what a Read after the handler returned gets, as
// on net/http.
var errBodyAfterHandler = http.ErrBodyReadAfterClose

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyAfterHandler
	}
	body := &b.a.c.ctx.body
	n, err := body.readLarge(p)
	if err == io.EOF || body.done.Load() {
		// The last byte of a Content-Length body counts as its end, EOF
		// read or not, as net/http's: a handler that reads exactly the
		// declared length, then waits on its context, learns that the
		// client left.
		b.a.bodyConsumed()
	}
	if err != nil && err != io.EOF {
		var we *wire.Error
		if errors.As(err, &we) && we.Status == http.StatusRequestEntityTooLarge {
			return n, &http.MaxBytesError{Limit: b.a.c.cfg.limits.MaxBodyBytes}
		}
		if we == nil || err == wire.ErrUnexpectedEOF {
			// The connection failed under the body (the client left, a
			// reset, a stall): the request's context ends, as net/http's
			// does on a read error, so a handler that then waits on it
			// is not left waiting for a watcher that needs the whole
			// body read to start.
			b.a.ctx.cancel(context.Canceled)
		}
	}
	return n, err
}

// WriteTo copies the body to w in 32 KiB pieces (io.Copy finds it): a
// big upload is read straight from the socket in large reads, where
// io.Copy(io.Discard, r.Body) alone would read 8 KiB at a time.
func (b *requestBody) WriteTo(w io.Writer) (int64, error) { return copyOut(w, b) }

// Close ends the body; what is unread is discarded after the handler
// returns (or the connection closes, past 256 KiB).
func (b *requestBody) Close() error { return nil }
