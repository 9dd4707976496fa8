package server

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The HTTP/2 hand-off serves h2 (and h2c) connections with net/http's
// HTTP/2 server. That server knows MaxHeaderBytes, ReadHeaderTimeout,
// IdleTimeout and the absolute Read/WriteTimeout, which the hand-off
// passes on; h2Guard adds what it does not know, so a request gets the
// same answer over h2 as over HTTP/1.1 on the same Server: the header
// count limit (431), the body limit (413 for a declared length up front,
// else when the body passes it and nothing was written yet), and the
// stall timeouts, per stream (a stalled stream is reset, the connection
// and its other streams go on).

// h2Guard wraps the Server's Handler for the HTTP/2 hand-off.
type h2Guard struct {
	s *Server
}

func (g h2Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cfg := &g.s.cfg
	lim := &cfg.limits
	if n := fieldCount(r.Header); n > lim.MaxHeaders {
		http.Error(w, "Request Header Fields Too Large: more than Server.MaxHeaderCount ("+
			strconv.Itoa(lim.MaxHeaders)+") header fields", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	tooLarge := "Request Entity Too Large: request body exceeds Server.MaxRequestBodyBytes (" +
		strconv.FormatInt(lim.MaxBodyBytes, 10) + ")"
	if lim.MaxBodyBytes >= 0 && r.ContentLength > lim.MaxBodyBytes {
		http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
		return
	}
	gw := &h2Writer{ResponseWriter: w, rc: http.NewResponseController(w)}
	gw.stall.d = cfg.writeStall
	gw.stall.fire = func() { gw.rc.SetWriteDeadline(aLongTimeAgo) } // resets the stream
	defer gw.stall.end()
	var body *h2Body
	if r.Body != nil && r.Body != http.NoBody {
		body = &h2Body{ReadCloser: r.Body, limit: lim.MaxBodyBytes, left: lim.MaxBodyBytes}
		body.stall.d = cfg.readStall
		body.stall.fire = func() { gw.rc.SetReadDeadline(aLongTimeAgo) } // fails the read
		defer body.stall.end()
		r.Body = body
	}
	g.s.cfg.handler.ServeHTTP(gw, r)
	if body != nil && body.overLimit() && !gw.wrote {
		http.Error(w, tooLarge, http.StatusRequestEntityTooLarge)
	}
}

// fieldCount counts header fields as HTTP/1.1 would see them: one per
// value, plus Host (which net/http moves to Request.Host).
func fieldCount(h http.Header) int {
	n := 1
	for _, vv := range h {
		n += len(vv)
	}
	return n
}

// h2Body is a request body under the body limit and ReadStallTimeout.
type h2Body struct {
	io.ReadCloser
	limit int64 // negative: no limit
	left  int64 // bytes still allowed
	mu    sync.Mutex
	over  bool
	stall stallTimer
}

func (b *h2Body) Read(p []byte) (int, error) {
	if b.left >= 0 && int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	b.stall.start()
	n, err := b.ReadCloser.Read(p)
	b.stall.stop()
	if b.left >= 0 {
		if int64(n) > b.left {
			b.mu.Lock()
			b.over = true
			b.mu.Unlock()
			return int(b.left), &http.MaxBytesError{Limit: b.limit}
		}
		b.left -= int64(n)
	}
	return n, err
}

func (b *h2Body) overLimit() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// h2Writer is the ResponseWriter under WriteStallTimeout. It keeps the
// interfaces net/http's HTTP/2 writer has, and Unwrap for
// http.ResponseController.
type h2Writer struct {
	http.ResponseWriter
	rc    *http.ResponseController
	wrote bool
	stall stallTimer
}

func (w *h2Writer) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *h2Writer) Write(p []byte) (int, error) {
	w.wrote = true
	w.stall.start()
	defer w.stall.stop()
	return w.ResponseWriter.Write(p)
}

func (w *h2Writer) WriteString(s string) (int, error) {
	w.wrote = true
	w.stall.start()
	defer w.stall.stop()
	return io.WriteString(w.ResponseWriter, s)
}

func (w *h2Writer) Flush() { w.FlushError() }

func (w *h2Writer) FlushError() error {
	w.wrote = true
	w.stall.start()
	defer w.stall.stop()
	return w.rc.Flush()
}

// CloseNotify is for the deprecated http.CloseNotifier.
func (w *h2Writer) CloseNotify() <-chan bool {
	//lint:ignore SA1019 gin and others still call it; net/http's HTTP/2 writer has it
	if cn, ok := w.ResponseWriter.(http.CloseNotifier); ok {
		return cn.CloseNotify()
	}
	return nil
}

// Push is http.Pusher, where the HTTP/2 writer offers it.
func (w *h2Writer) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// SetWriteDeadline replaces WriteStallTimeout for the rest of the
// response, as on HTTP/1.1.
func (w *h2Writer) SetWriteDeadline(t time.Time) error {
	w.stall.end()
	return w.rc.SetWriteDeadline(t)
}

// Unwrap is for http.ResponseController.
func (w *h2Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// stallTimer fires when one I/O operation (a body Read, a Write) takes
// longer than d: it runs only between start and stop, so time spent
// between operations (a handler computing, an event stream waiting for
// its next event) never counts. A zero d disables it.
type stallTimer struct {
	d    time.Duration
	fire func()

	mu   sync.Mutex
	t    *time.Timer
	busy bool // an operation is in progress
	done bool // ended: never fire again
}

func (s *stallTimer) start() {
	if s.d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.busy = true
	if s.t == nil {
		s.t = time.AfterFunc(s.d, s.onFire)
	} else {
		s.t.Reset(s.d)
	}
}

func (s *stallTimer) stop() {
	if s.d <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
	if s.t != nil {
		s.t.Stop()
	}
}

// end stops the timer for good; once it returns, fire is not running
// and will not run.
func (s *stallTimer) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.t != nil {
		s.t.Stop()
	}
}

func (s *stallTimer) onFire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy && !s.done {
		s.fire()
	}
}
