package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// The HTTP/2 hand-off serves h2 (and h2c) connections with net/http's
// HTTP/2 server. That server knows MaxHeaderBytes, ReadHeaderTimeout,
// IdleTimeout and the absolute Read/WriteTimeout, which the hand-off
// passes on; handoffHandler adds what it does not know, so a request gets the
// same answer over h2 as over HTTP/1.1 on the same Server: the header
// count limit (431), the body limit (413 for a declared length up front,
// else when the body passes it and nothing was written yet), and the
// stall timeouts, per stream (a stalled stream is reset, the connection
// and its other streams go on).

// handoffHandler wraps the Server's Handler for the HTTP/2 hand-off.
type handoffHandler struct {
	s *Server
}

func (g handoffHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	gw := &handoffWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
	gw.stall.d = cfg.writeStall
	gw.stall.fire = func() { gw.rc.SetWriteDeadline(aLongTimeAgo) } // resets the stream
	defer gw.stall.end()
	var body *handoffBody
	if r.Body != nil && r.Body != http.NoBody {
		body = &handoffBody{ReadCloser: r.Body, limit: lim.MaxBodyBytes, left: lim.MaxBodyBytes}
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

// handoffBody is a request body under the body limit and ReadStallTimeout.
type handoffBody struct {
	io.ReadCloser
	limit int64 // negative: no limit
	left  int64 // bytes still allowed
	mu    sync.Mutex
	over  bool
	stall handoffStall
}

func (b *handoffBody) Read(p []byte) (int, error) {
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

func (b *handoffBody) overLimit() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.over
}

// handoffWriter is the ResponseWriter under WriteStallTimeout. It keeps the
// interfaces net/http's HTTP/2 writer has, and Unwrap for
// http.ResponseController. It also refuses a write past a declared
// Content-Length with http.ErrContentLength, sending nothing of it, as
// net/http's HTTP/1.1 server and hotpath's engines do: net/http's HTTP/2
// server would send the excess and leave the client a malformed stream.
type handoffWriter struct {
	http.ResponseWriter
	rc       *http.ResponseController
	wrote    bool  // a final status or body bytes went to the handler's writer
	declared int64 // the Content-Length in force once wrote, else -1
	written  int64 // body bytes written
	stall    handoffStall
}

func (w *handoffWriter) WriteHeader(code int) {
	if code >= 200 && !w.wrote {
		w.commit()
	}
	w.ResponseWriter.WriteHeader(code)
}

// commit takes the declared length from the header as the response
// starts; later changes to the map are not sent, so they do not count.
func (w *handoffWriter) commit() {
	w.wrote = true
	w.declared = -1
	if v := w.Header()["Content-Length"]; len(v) == 1 {
		if n, err := wire.ParseContentLength(v[0]); err == nil {
			w.declared = n
		}
	}
}

// fits counts n more body bytes, or reports that they pass the declared
// length (and counts nothing).
func (w *handoffWriter) fits(n int) bool {
	if !w.wrote {
		w.commit()
	}
	if w.declared >= 0 && w.written+int64(n) > w.declared {
		return false
	}
	w.written += int64(n)
	return true
}

// Write sends p in pieces of stallPiece, each under WriteStallTimeout
// (handoffStall times one call): a big Write to a client that reads
// slowly but steadily is not cut because the whole call outlasts one
// period, as on hotpath's engines.
func (w *handoffWriter) Write(p []byte) (int, error) {
	if !w.fits(len(p)) {
		return 0, http.ErrContentLength
	}
	return writePieces(w, p, w.ResponseWriter.Write)
}

func (w *handoffWriter) WriteString(s string) (int, error) {
	if !w.fits(len(s)) {
		return 0, http.ErrContentLength
	}
	return writePieces(w, s, func(s string) (int, error) { return io.WriteString(w.ResponseWriter, s) })
}

// writePieces writes p with write, stallPiece bytes at a time, each
// under w's stall timeout.
func writePieces[T string | []byte](w *handoffWriter, p T, write func(T) (int, error)) (int, error) {
	n := 0
	for {
		k := min(len(p)-n, stallPiece)
		w.stall.start()
		m, err := write(p[n : n+k])
		w.stall.stop()
		n += m
		if err != nil || n == len(p) {
			return n, err
		}
	}
}

// stallPiece is how much of one Write the hand-off's stall timeout covers
// at a time.
const stallPiece = 16 << 10

func (w *handoffWriter) Flush() { w.FlushError() }

func (w *handoffWriter) FlushError() error {
	if !w.wrote {
		w.commit()
	}
	w.stall.start()
	defer w.stall.stop()
	return w.rc.Flush()
}

// CloseNotify is for the deprecated http.CloseNotifier.
func (w *handoffWriter) CloseNotify() <-chan bool {
	//lint:ignore SA1019 gin and others still call it; net/http's HTTP/2 writer has it
	if cn, ok := w.ResponseWriter.(http.CloseNotifier); ok {
		return cn.CloseNotify()
	}
	return nil
}

// Push is http.Pusher, where the HTTP/2 writer offers it.
func (w *handoffWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := w.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// SetWriteDeadline replaces WriteStallTimeout for the rest of the
// response, as on HTTP/1.1.
func (w *handoffWriter) SetWriteDeadline(t time.Time) error {
	w.stall.end()
	return w.rc.SetWriteDeadline(t)
}

// Unwrap is for http.ResponseController.
func (w *handoffWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// handoffStall is a stall timeout on the hand-off: it fires when one I/O
// operation (a body Read, a Write) takes longer than d. Operations bracket
// themselves with start and stop, so time spent between them (a handler
// computing, an event stream waiting for its next event) never counts. A
// zero d disables it.
type handoffStall struct {
	d    time.Duration
	fire func()

	mu sync.Mutex
	w  stallWatch
}

func (s *handoffStall) start() {
	if s.d <= 0 {
		return
	}
	s.mu.Lock()
	s.w.begin(s.d, s)
	s.mu.Unlock()
}

func (s *handoffStall) stop() {
	if s.d <= 0 {
		return
	}
	s.mu.Lock()
	s.w.end()
	s.mu.Unlock()
}

// end stops the timer for good; once it returns, fire is not running
// and will not run.
func (s *handoffStall) end() {
	s.mu.Lock()
	s.w.off = true
	s.w.end()
	s.mu.Unlock()
}

// stalled runs when the timer fires: fire, if the operation in progress
// has lasted d.
func (s *handoffStall) stalled(*stallWatch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.expired() {
		s.fire()
	}
}

// handoffListener feeds connections that negotiated h2 to a net/http server.
type handoffListener struct {
	srv    *http.Server
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	addr   net.Addr
}

// handoffTLS returns the server's HTTP/2 hand-off for TLS connections, started
// on first use.
func (s *Server) handoffTLS() *handoffListener { return s.startHandoff(&s.h2srv, false) }

// handoffCleartext returns the hand-off for cleartext HTTP/2 with prior knowledge.
func (s *Server) handoffCleartext() *handoffListener { return s.startHandoff(&s.h2csrv, true) }

func (s *Server) startHandoff(slot **handoffListener, cleartext bool) *handoffListener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *slot == nil && s.shutting.Load() {
		// Shutdown or Close began, and its pass over the hand-off saw
		// none: a server started now would outlive them. The connection
		// is refused, as one reaching a started hand-off after its
		// Shutdown is (net/http's server takes no connection then).
		h := &handoffListener{closed: make(chan struct{})}
		h.Close()
		return h
	}
	if *slot == nil {
		h := &handoffListener{conns: make(chan net.Conn), closed: make(chan struct{}), addr: handoffAddr{}}
		// The same limits and timeouts as on HTTP/1.1: net/http's
		// server takes the ones it knows, handoffHandler the others.
		h.srv = &http.Server{
			Handler:           handoffHandler{s},
			ErrorLog:          s.ErrorLog,
			ReadHeaderTimeout: s.cfg.readHeaderTimeout,
			ReadTimeout:       s.cfg.readTimeout,
			WriteTimeout:      s.cfg.writeTimeout,
			IdleTimeout:       s.cfg.idleTimeout,
			MaxHeaderBytes:    s.cfg.limits.MaxHeaderBytes,
			// net/http answers "OPTIONS *" itself unless told not to.
			DisableGeneralOptionsHandler: s.DisableGeneralOptionsHandler,
			HTTP2:                        s.handoffHTTP2(),
		}
		if cleartext {
			var p http.Protocols
			p.SetUnencryptedHTTP2(true)
			h.srv.Protocols = &p
		}
		go h.srv.Serve(h)
		*slot = h
	}
	return *slot
}

// handoffHTTP2 is the hand-off's HTTP/2 configuration: the Server's
// HTTP2 (its streams, windows, frame and header sizes apply with the
// hand-off as they do on hotpath's engine), and WriteStallTimeout as
// WriteByteTimeout unless HTTP2 sets one: a client that stops reading
// the socket blocks the whole connection's writes, which no stream's
// timer can undo, so the connection closes after that long without a
// byte written.
func (s *Server) handoffHTTP2() *http.HTTP2Config {
	var c http.HTTP2Config
	if s.HTTP2 != nil {
		c = *s.HTTP2
	}
	if c.WriteByteTimeout == 0 {
		c.WriteByteTimeout = s.cfg.writeStall
	}
	return &c
}

func (h *handoffListener) handoff(c net.Conn) error {
	select {
	case h.conns <- c:
		return nil
	case <-h.closed:
		return net.ErrClosed
	}
}

// Accept, Close and Addr make handoffListener the net.Listener of the HTTP/2 server.
func (h *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-h.conns:
		return c, nil
	case <-h.closed:
		return nil, net.ErrClosed
	}
}

func (h *handoffListener) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

func (h *handoffListener) Addr() net.Addr { return h.addr }

type handoffAddr struct{}

func (handoffAddr) Network() string { return "tcp" }

func (handoffAddr) String() string { return "hotpath-h2-handoff" }

// shutdownH2 shuts the HTTP/2 server down with ctx, or closes it at once
// when now is set.
func (s *Server) shutdownH2(ctx context.Context, now bool) (first error) {
	nerr := make(chan error, 1)
	go func() { nerr <- s.shutdownH2Engine(ctx, now) }()
	defer func() {
		if err := <-nerr; first == nil {
			first = err
		}
	}()
	s.mu.Lock()
	hs := []*handoffListener{s.h2srv, s.h2csrv}
	s.mu.Unlock()
	for _, h := range hs {
		if h == nil {
			continue
		}
		h.Close()
		var err error
		if now {
			err = h.srv.Close()
		} else {
			err = h.srv.Shutdown(ctx)
		}
		if first == nil {
			first = err
		}
	}
	return first
}
