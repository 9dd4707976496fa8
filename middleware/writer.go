package middleware

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// responseWriter records what a handler wrote (status, bytes, whether the
// head is out) for AccessLog and Recover, and passes everything through to
// the server's writer. It implements http.Flusher, http.Hijacker,
// io.ReaderFrom and io.StringWriter whatever the writer it wraps supports,
// delegating to http.ResponseController when the wrapped writer lacks a
// method, so an unsupported call reports http.ErrNotSupported instead of
// panicking or silently doing nothing; Unwrap gives
// http.ResponseController the wrapped writer for everything else
// (SetReadDeadline, SetWriteDeadline, EnableFullDuplex).
//
// A status writer that only embeds http.ResponseWriter hides Flusher and
// Hijacker: an SSE handler behind it buffers until it returns, and a
// WebSocket upgrade fails.
type responseWriter struct {
	w           http.ResponseWriter
	status      int   // the final status, 0 until the head is out
	bytes       int64 // body bytes the handler wrote
	wroteHeader bool
	hijacked    bool
}

// wrap returns w as a *responseWriter, reusing w itself when it already is
// one (AccessLog outside Recover: one wrapper, not two).
func wrap(w http.ResponseWriter) (rw *responseWriter, fresh bool) {
	if rw, ok := w.(*responseWriter); ok {
		return rw, false
	}
	return &responseWriter{w: w}, true
}

func (rw *responseWriter) Header() http.Header { return rw.w.Header() }

func (rw *responseWriter) WriteHeader(code int) {
	if !rw.wroteHeader && code >= 200 {
		rw.status = code
		rw.wroteHeader = true
	}
	rw.w.WriteHeader(code)
}

func (rw *responseWriter) implicitHeader() {
	if !rw.wroteHeader {
		rw.status = http.StatusOK
		rw.wroteHeader = true
	}
}

func (rw *responseWriter) Write(p []byte) (int, error) {
	rw.implicitHeader()
	n, err := rw.w.Write(p)
	rw.bytes += int64(n)
	return n, err
}

// WriteString lets io.WriteString reach the server writer's WriteString
// (both net/http's and hotpath's avoid the []byte conversion).
func (rw *responseWriter) WriteString(s string) (int, error) {
	rw.implicitHeader()
	n, err := io.WriteString(rw.w, s)
	rw.bytes += int64(n)
	return n, err
}

// ReadFrom keeps net/http's sendfile path for io.Copy(w, file).
func (rw *responseWriter) ReadFrom(src io.Reader) (int64, error) {
	rw.implicitHeader()
	var n int64
	var err error
	if rf, ok := rw.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(src)
	} else {
		n, err = io.Copy(writerOnly{rw.w}, src)
	}
	rw.bytes += n
	return n, err
}

// writerOnly hides a writer's ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// Flush implements http.Flusher.
func (rw *responseWriter) Flush() { _ = rw.FlushError() }

// FlushError is what http.ResponseController.Flush calls: it reports the
// error that Flush has to drop.
func (rw *responseWriter) FlushError() error {
	rw.implicitHeader()
	switch f := rw.w.(type) {
	case interface{ FlushError() error }:
		return f.FlushError()
	case http.Flusher:
		f.Flush()
		return nil
	}
	return http.NewResponseController(rw.w).Flush()
}

// Hijack implements http.Hijacker.
func (rw *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	var c net.Conn
	var brw *bufio.ReadWriter
	var err error
	if h, ok := rw.w.(http.Hijacker); ok {
		c, brw, err = h.Hijack()
	} else {
		c, brw, err = http.NewResponseController(rw.w).Hijack()
	}
	if err == nil {
		rw.hijacked = true
	}
	return c, brw, err
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.w }
