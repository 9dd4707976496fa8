package middleware

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// AccessLog logs one structured record per request, after the handler
// returns: method, path, status, bytes (the response body), dur, remote,
// and request_id when [RequestID] runs before it. A hijacked connection
// logs hijacked=true instead of a status. The zero value logs every
// request to slog.Default() at slog.LevelInfo:
//
//	h := middleware.AccessLog{Logger: logger}.Wrap(mux)
//
// It replaces logging middleware built on httputil.DumpRequest: no body
// buffering, no formatting of the whole request.
// The wrapper it puts around the ResponseWriter keeps http.Flusher,
// http.Hijacker and io.ReaderFrom, and unwraps for
// http.ResponseController, so SSE, WebSocket upgrades and sendfile work
// behind it.
//
// Per request it allocates a few small values where a DumpRequest logger
// copies the whole request, body included; BenchmarkAccessLog and
// BenchmarkDumpRequestLog (accesslog_test.go) compare the two.
type AccessLog struct {
	// Logger receives the records; nil means slog.Default().
	Logger *slog.Logger
	// Level is the records' level; the zero value is slog.LevelInfo.
	Level slog.Level
	// BodySampleEvery, if positive, captures the request body of one
	// request in BodySampleEvery (1: every request) and logs its first
	// BodySampleBytes as "body". The body is copied as the handler reads
	// it, never read ahead, so a handler that streams still streams and a
	// body the handler does not read is not captured. This is the
	// debugging aid that httputil.DumpRequest is used for, at a cost paid
	// only by the sampled requests.
	BodySampleEvery int
	// BodySampleBytes caps a captured body; 0 means 4 KiB.
	BodySampleBytes int
}

// Wrap returns next with the access log around it.
func (a AccessLog) Wrap(next http.Handler) http.Handler {
	logger := a.Logger
	if logger == nil {
		logger = slog.Default()
	}
	level := a.Level
	var sampleEvery uint64 // capture the body of 1 request in sampleEvery; 0: never
	maxBody := a.BodySampleBytes
	if a.BodySampleEvery > 0 {
		sampleEvery = uint64(a.BodySampleEvery)
		if maxBody <= 0 {
			maxBody = 4 << 10
		}
	}
	var seq atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if !logger.Enabled(ctx, level) {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		rw, _ := wrap(w)
		var capture *bodyCapture
		if sampleEvery > 0 && r.Body != nil && r.Body != http.NoBody && seq.Add(1)%sampleEvery == 0 {
			capture = &bodyCapture{rc: r.Body, max: maxBody}
			r2 := *r // shallow: only the sampled requests pay for it
			r2.Body = capture
			r = &r2
		}
		next.ServeHTTP(rw, r)
		logRequest(ctx, logger, level, r, rw, time.Since(start), capture)
	})
}

func logRequest(ctx context.Context, logger *slog.Logger, level slog.Level, r *http.Request, rw *responseWriter, dur time.Duration, capture *bodyCapture) {
	status := rw.status
	if status == 0 && !rw.hijacked {
		status = http.StatusOK // what the server sends for a handler that wrote nothing
	}
	attrs := [9]slog.Attr{
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Int64("bytes", rw.bytes),
		slog.Duration("dur", dur),
		slog.String("remote", r.RemoteAddr),
	}
	n := 6
	if id := RequestIDFrom(ctx); id != "" {
		attrs[n] = slog.String("request_id", id)
		n++
	}
	if rw.hijacked {
		attrs[n] = slog.Bool("hijacked", true)
		n++
	}
	if capture != nil {
		attrs[n] = slog.String("body", capture.buf.String())
		n++
	}
	logger.LogAttrs(ctx, level, "http", attrs[:n]...)
}

// bodyCapture copies up to max bytes of what the handler reads from the
// body.
type bodyCapture struct {
	rc  io.ReadCloser
	buf bytes.Buffer
	max int
}

func (b *bodyCapture) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if room := b.max - b.buf.Len(); room > 0 && n > 0 {
		b.buf.Write(p[:min(n, room)])
	}
	return n, err
}

func (b *bodyCapture) Close() error { return b.rc.Close() }
