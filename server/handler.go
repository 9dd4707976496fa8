package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// The http.Handler adapter.
//
// A handler runs inline on the connection's goroutine: no goroutine and no
// channel hand-off per request. What a handler may keep after it returns
// (the *http.Request, its URL, Header and Body, every string in them) is
// its own: those are allocated per request, as handlers routinely hand r
// to goroutines (http.TimeoutHandler's inner handler keeps running after a
// timeout). Strings are copies, never views of the reused read buffer, and
// identical strings are reused from the previous request on the same
// connection (a client sends the same Host and headers again and again).
// What is reused is what net/http also forbids using after the handler
// returns: the ResponseWriter, and the buffers under it.

// netHTTPBufferSize is how much body net/http collects before it stops
// computing a Content-Length and starts chunking (bufferBeforeChunkingSize
// in net/http's server.go); the adapter does the same so responses are
// framed alike on both engines.
const netHTTPBufferSize = 2048

// adapter is the per-connection state of the http.Handler adapter.
type adapter struct {
	c    *conn
	h    http.Handler
	req  *http.Request // the current request
	body *requestBody  // the current request's body, if it has one
	rw   responseWriter
	base context.Context // carries ServerContextKey and LocalAddrContextKey

	remoteAddr string
	tlsState   *tls.ConnectionState // after the handshake, for Request.TLS
	ctx        *requestContext      // the current request's
	watchFn    func()               // a.watchRequested, bound once

	// The disconnect watcher's state, shared with whichever goroutine
	// first waits on the request context.
	watchMu   sync.Mutex
	wantWatch bool          // someone waits for cancellation
	bodyDone  bool          // the request body is consumed: the socket may be watched
	watchOff  bool          // the handler returned: start no watcher
	watchDone chan struct{} // non-nil while a watcher runs
	// Strings kept from the previous request, reused when the bytes match.
	lastTarget, lastHost, lastValues string
	keys                             []string // sorted response header keys, reused
}

func newAdapter(c *conn, h http.Handler) *adapter {
	a := &adapter{c: c, h: h}
	a.rw.a = a
	a.rw.hdr = make(http.Header, 8)
	a.watchFn = a.watchRequested
	c.ctx.body.dec.OnTrailer = a.onTrailer
	a.remoteAddr = c.nc.RemoteAddr().String()
	a.base = context.WithValue(context.WithValue(context.Background(),
		http.ServerContextKey, c.srv.httpServer), http.LocalAddrContextKey, c.nc.LocalAddr())
	return a
}

// serveHTTP builds the request, runs the handler and completes the
// response semantics net/http gives a handler (implicit 200, sniffed
// Content-Type, trailers).
func (a *adapter) serveHTTP() {
	x := &a.c.ctx
	ra := new(requestAlloc)
	ctx := &ra.ctx
	ctx.Context = a.base
	if err := a.buildRequest(ra); err != nil {
		ctx.cancel(context.Canceled)
		x.Error(http.StatusBadRequest, "Bad Request: "+err.Error()+"\n")
		x.closeConn = true
		return
	}
	a.rw.reset()
	if a.req.Method == http.MethodOptions && a.req.RequestURI == "*" {
		// net/http answers "OPTIONS *" itself, whatever the handler.
		x.SetContentLength(0)
		ctx.cancel(context.Canceled)
		return
	}
	a.ctx = ctx
	a.watchMu.Lock()
	a.wantWatch, a.watchOff, a.bodyDone = false, false, a.c.ctx.body.done
	a.watchMu.Unlock()
	ctx.watched = a.watchFn
	defer a.endRequest()
	a.h.ServeHTTP(&a.rw, a.req)
	if a.c.hijacked {
		return
	}
	a.rw.finish()
}

// endRequest cancels the request's context and stops the disconnect
// watcher, if one runs, before the connection reads again.
func (a *adapter) endRequest() {
	a.ctx.cancel(context.Canceled)
	a.req = nil // trailers read while draining the body go nowhere
	if a.body != nil {
		a.body.closed.Store(true) // a late reader must not read the next request's body
		a.body = nil
	}
	a.watchMu.Lock()
	a.watchOff = true
	done := a.watchDone
	a.watchDone = nil
	a.watchMu.Unlock()
	if done != nil {
		a.c.nc.SetReadDeadline(aLongTimeAgo)
		<-done
		if !a.c.hijacked {
			a.c.nc.SetReadDeadline(a.c.readDL)
		}
	}
}

// watchRequested runs when the handler first waits on its context (Done,
// or a derived context): the client leaving must now cancel it, as in
// net/http. The socket can be watched only once the body is consumed,
// or the watch would race the handler for body bytes.
func (a *adapter) watchRequested() {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	a.wantWatch = true
	a.startWatchLocked()
}

// bodyConsumed is called on the connection's goroutine when the handler
// has read the whole body.
func (a *adapter) bodyConsumed() {
	a.watchMu.Lock()
	defer a.watchMu.Unlock()
	a.bodyDone = true
	a.startWatchLocked()
}

// startWatchLocked starts the disconnect watcher when it is wanted and
// allowed. Hold watchMu.
func (a *adapter) startWatchLocked() {
	if !a.wantWatch || !a.bodyDone || a.watchOff || a.watchDone != nil || a.c.raw == nil {
		return
	}
	a.watchDone = make(chan struct{})
	go a.c.watchDisconnect(a.ctx, a.watchDone)
}

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
	r.Method = methodString(w.Method)
	r.RequestURI = a.cachedString(&a.lastTarget, w.Target)
	u, err := parseURL(&ra.url, r.Method, r.RequestURI)
	if err != nil {
		return err
	}
	r.URL = u
	r.Proto = "HTTP/1.1"
	r.ProtoMajor, r.ProtoMinor = 1, w.ProtoMinor
	if w.ProtoMinor == 0 {
		r.Proto = "HTTP/1.0"
	}
	r.Header = a.header(w, ra.vals[:])
	r.Host = a.cachedString(&a.lastHost, w.Host)
	if u.Host != "" { // absolute-form: the target's authority wins, as in net/http
		r.Host = u.Host
	}
	r.ContentLength = w.ContentLength
	if w.Chunked {
		r.TransferEncoding = []string{"chunked"}
		// As net/http: the framing headers leave the map, declared
		// trailers become the Trailer map's keys.
		delete(r.Header, "Transfer-Encoding")
		if names, ok := r.Header["Trailer"]; ok {
			delete(r.Header, "Trailer")
			r.Trailer = make(http.Header)
			for _, v := range names {
				for _, name := range splitList(v) {
					r.Trailer[http.CanonicalHeaderKey(name)] = nil
				}
			}
		}
	}
	r.Close = w.Close
	r.RemoteAddr = a.remoteAddr
	r.TLS = a.tlsState
	if w.ContentLength == 0 && !w.Chunked {
		r.Body = http.NoBody
	} else {
		a.body = &requestBody{a: a}
		r.Body = a.body
	}
	a.req = r.WithContext(&ra.ctx) // the one allocation of the Request
	return nil
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

// header builds the request's Header map. All values are copied into one
// string (reused when the client sends the same bytes again) and sliced
// from it. As net/http does: Host goes to Request.Host, repeated identical
// Content-Length values are folded into one, and "Pragma: no-cache" on a
// request without Cache-Control adds "Cache-Control: no-cache".
func (a *adapter) header(w *wire.Request, vals []string) http.Header {
	n, size := 0, 0
	for _, h := range w.Headers {
		n++
		size += len(h.Value)
	}
	hdr := make(http.Header, n-1) // Host is not in it
	if n == 0 {
		return hdr
	}
	// One string with every value, back to back.
	var scratch [512]byte
	joined := scratch[:0]
	if size > len(scratch) {
		joined = make([]byte, 0, size)
	}
	for _, h := range w.Headers {
		joined = append(joined, h.Value...)
	}
	all := a.cachedString(&a.lastValues, joined)
	if n > len(vals) {
		vals = make([]string, n)
	}
	off := 0
	for i, h := range w.Headers {
		v := all[off : off+len(h.Value)]
		off += len(h.Value)
		if wire.EqualFold(h.Name, "Host") {
			continue
		}
		key := canonicalKey(h.Name)
		if prev, ok := hdr[key]; ok {
			if key == "Content-Length" { // wire checked the repeats are identical
				continue
			}
			hdr[key] = append(prev, v)
			continue
		}
		vals[i] = v
		hdr[key] = vals[i : i+1 : i+1]
	}
	if p := hdr["Pragma"]; len(p) > 0 && p[0] == "no-cache" {
		if _, ok := hdr["Cache-Control"]; !ok {
			hdr["Cache-Control"] = []string{"no-cache"}
		}
	}
	return hdr
}

// cachedString returns b as a string, reusing *last when it holds the
// same bytes.
func (a *adapter) cachedString(last *string, b []byte) string {
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
// this request only.
type requestBody struct {
	a      *adapter
	closed atomic.Bool // the handler returned
}

var errBodyAfterHandler = errors.New("http: invalid Read on closed Body (the handler returned)")

func (b *requestBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errBodyAfterHandler
	}
	n, err := b.a.c.ctx.body.Read(p)
	if err == io.EOF {
		b.a.bodyConsumed()
	}
	if err != nil && err != io.EOF {
		var we *wire.Error
		if errors.As(err, &we) && we.Status == http.StatusRequestEntityTooLarge {
			return n, &http.MaxBytesError{Limit: b.a.c.cfg.limits.MaxBodyBytes}
		}
	}
	return n, err
}

// Close ends the body; what is unread is discarded after the handler
// returns (or the connection closes, past 256 KiB).
func (b *requestBody) Close() error { return nil }

// requestContext is the Request's context: canceled when the handler
// returns. Its Done channel is made only if someone asks for it, and it
// offers AfterFunc, so contexts derived from it (WithCancel, WithTimeout in
// middleware) hook into it without a goroutine each.
type requestContext struct {
	context.Context
	mu     sync.Mutex
	done   chan struct{}
	err    error
	afters map[*afterFunc]struct{}
	// watched is called once, when someone first waits for cancellation:
	// only then does the adapter watch the socket for the client leaving.
	watched func()
}

type afterFunc struct{ f func() }

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (c *requestContext) Done() <-chan struct{} {
	c.mu.Lock()
	if c.done == nil {
		if c.err != nil {
			c.mu.Unlock()
			return closedChan
		}
		c.done = make(chan struct{})
		if f := c.watched; f != nil {
			c.watched = nil
			c.mu.Unlock()
			f()
			return c.done
		}
	}
	c.mu.Unlock()
	return c.done
}

func (c *requestContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *requestContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	for af := range c.afters {
		go af.f()
	}
	c.afters = nil
}

// AfterFunc arranges for f to run in its own goroutine once c is canceled
// (at once if it already is), like context.AfterFunc.
func (c *requestContext) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	af := &afterFunc{f: f}
	if c.afters == nil {
		c.afters = make(map[*afterFunc]struct{})
	}
	c.afters[af] = struct{}{}
	watched := c.watched // a derived context waits on us: watch the client too
	c.watched = nil
	c.mu.Unlock()
	if watched != nil {
		watched()
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.afters[af]
		delete(c.afters, af)
		return pending
	}
}

// responseWriter is the http.ResponseWriter handed to handlers. It is also
// an http.Flusher and an http.Hijacker, and answers http.ResponseController
// (FlushError, SetReadDeadline, SetWriteDeadline, EnableFullDuplex).
type responseWriter struct {
	a           *adapter
	hdr         http.Header
	wroteHeader bool
	status      int
	trailers    []string // declared with the Trailer header
}

func (w *responseWriter) reset() {
	clear(w.hdr)
	w.wroteHeader = false
	w.status = 0
	w.trailers = w.trailers[:0]
}

// Header returns the response header map.
func (w *responseWriter) Header() http.Header { return w.hdr }

// WriteHeader sends the status; the header map is taken as it is now.
func (w *responseWriter) WriteHeader(code int) {
	if w.a.c.hijacked {
		w.a.c.srv.logf("server: response.WriteHeader on hijacked connection")
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if w.wroteHeader {
		w.a.c.srv.logf("server: superfluous response.WriteHeader call (status %d after %d)", code, w.status)
		return
	}
	x := &w.a.c.ctx
	if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
		w.writeInformational(code)
		return
	}
	w.wroteHeader = true
	w.status = code
	x.SetStatus(code)
	w.copyHeader()
}

// writeInformational sends a 1xx response (103 Early Hints) at once.
func (w *responseWriter) writeInformational(code int) {
	c := w.a.c
	b := wire.AppendStatusLine(c.wbuf, code)
	for _, k := range w.sortedKeys() {
		for _, v := range w.hdr[k] {
			b = wire.AppendHeader(b, k, appendSanitized(nil, v))
		}
	}
	c.wbuf = append(b, '\r', '\n')
	c.flush()
}

// sortedKeys returns the header keys in order, as net/http writes them.
func (w *responseWriter) sortedKeys() []string {
	keys := w.a.keys[:0]
	for k := range w.hdr {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.a.keys = keys
	return keys
}

// copyHeader moves the header map into the Ctx's response slots.
func (w *responseWriter) copyHeader() {
	x := &w.a.c.ctx
	for _, k := range w.sortedKeys() {
		vv := w.hdr[k]
		switch k {
		case "Date":
			x.hasDate = true
		case "Trailer":
			for _, v := range vv {
				for _, name := range splitList(v) {
					w.trailers = append(w.trailers, http.CanonicalHeaderKey(name))
				}
			}
			x.forceChunked = len(w.trailers) > 0 // chunked, or close-delimited on HTTP/1.0
		case "Transfer-Encoding":
			// The handler asks for chunked framing: stream even a small body.
			x.forceChunked = x.forceChunked || slices.Contains(vv, "chunked")
		}
		if len(k) > len(http.TrailerPrefix) && k[:len(http.TrailerPrefix)] == http.TrailerPrefix {
			continue
		}
		for i, v := range vv {
			x.setHeader(k, v, nil, i == 0)
		}
	}
	if x.forceChunked {
		x.appendTrailer = w.appendTrailer
	}
}

func splitList(v string) []string {
	var out []string
	for len(v) > 0 {
		part, rest, _ := cut(v, ',')
		v = rest
		if p := textproto.TrimString(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// appendTrailer ends the chunked body with the trailer fields: the ones
// declared in Trailer and any set under http.TrailerPrefix.
func (w *responseWriter) appendTrailer(b []byte) []byte {
	b = append(b, "0\r\n"...)
	for _, k := range w.trailers {
		for _, v := range w.hdr[k] {
			b = wire.AppendHeader(b, k, appendSanitized(nil, v))
		}
	}
	for k, vv := range w.hdr {
		if len(k) > len(http.TrailerPrefix) && k[:len(http.TrailerPrefix)] == http.TrailerPrefix {
			for _, v := range vv {
				b = wire.AppendHeader(b, k[len(http.TrailerPrefix):], appendSanitized(nil, v))
			}
		}
	}
	return append(b, '\r', '\n')
}

// Write writes body bytes, sending an implicit 200 first.
func (w *responseWriter) Write(p []byte) (int, error) {
	if err := w.beforeWrite(len(p)); err != nil {
		return 0, err
	}
	if !w.a.c.ctx.committed && len(w.a.c.ctx.bodyBuf)+len(p) > w.a.c.ctx.collectLimit {
		w.sniff(p)
	}
	return w.a.c.ctx.Write(p)
}

// WriteString is Write without a conversion.
func (w *responseWriter) WriteString(s string) (int, error) {
	if err := w.beforeWrite(len(s)); err != nil {
		return 0, err
	}
	x := &w.a.c.ctx
	if !x.committed && len(x.bodyBuf)+len(s) > x.collectLimit {
		w.sniff([]byte(s))
	}
	return x.WriteString(s)
}

func (w *responseWriter) beforeWrite(n int) error {
	if w.a.c.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if n > 0 && !wire.BodyAllowed(w.status) {
		return http.ErrBodyNotAllowed
	}
	return nil
}

// sniff sets Content-Type from the body when the handler set none and
// the head is about to be sent (net/http's rule).
func (w *responseWriter) sniff(p []byte) {
	x := &w.a.c.ctx
	if x.committed || !wire.BodyAllowed(w.status) {
		return
	}
	if _, ok := w.hdr["Content-Type"]; ok {
		return
	}
	if w.hdr.Get("Content-Encoding") != "" || len(w.hdr["Transfer-Encoding"]) > 0 {
		return
	}
	data := x.bodyBuf
	if len(data) == 0 {
		data = p
	}
	if len(data) > 0 {
		x.SetContentType(http.DetectContentType(data))
	}
}

// finish completes the response after the handler returned.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sniff(nil)
}

// Flush sends what was written so far.
func (w *responseWriter) Flush() { w.FlushError() }

// FlushError is Flush with the error, for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if w.a.c.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.sniff(nil)
	return w.a.c.ctx.Flush()
}

// SetWriteDeadline is for http.ResponseController.
func (w *responseWriter) SetWriteDeadline(t time.Time) error {
	return w.a.c.ctx.SetWriteDeadline(t)
}

// SetReadDeadline is for http.ResponseController: it bounds the reads of
// the request body that follow.
func (w *responseWriter) SetReadDeadline(t time.Time) error {
	c := w.a.c
	c.readDL = t
	return c.nc.SetReadDeadline(t)
}

// EnableFullDuplex is for http.ResponseController. The engine already
// lets a handler read the body after it started the response.
func (w *responseWriter) EnableFullDuplex() error { return nil }

// Hijack hands the connection to the handler, with a reader holding any
// bytes already received after the request head.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c := w.a.c
	if c.hijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.wroteHeader && !c.ctx.committed {
		// As net/http: a status written before Hijack (a 101 for a
		// WebSocket upgrade) goes out first.
		c.ctx.commitStreaming()
	}
	if err := c.flush(); err != nil { // with earlier pipelined responses
		return nil, nil, err
	}
	c.hijacked = true
	c.nc.SetDeadline(time.Time{})
	pending := bytes.Clone(c.rbuf[c.r:c.w])
	c.r = c.w
	br := bufio.NewReader(io.MultiReader(bytes.NewReader(pending), c.nc))
	bw := bufio.NewWriter(c.nc)
	c.setState(StateHijacked)
	c.srv.trackConn(c, false)
	c.untracked = true
	return c.nc, bufio.NewReadWriter(br, bw), nil
}
