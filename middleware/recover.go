package middleware

import (
	"log/slog"
	"net/http"
	"runtime/debug"
)

// Recover turns a handler's panic into a logged error and, when the
// response has not started, a 500, leaving the connection usable for the
// next request. It logs with Logger at slog.LevelError: the panic value,
// method, path, request_id when [RequestID] runs before it, and the
// goroutine's stack. The zero value logs to slog.Default():
//
//	h := middleware.Recover{Logger: logger}.Wrap(mux)
//
// When the panic comes after the handler wrote the head, a 500 can no
// longer be sent and finishing the response would pass a truncated body
// off as complete; Recover logs, then panics with http.ErrAbortHandler,
// which makes the server (net/http's or hotpath's) abort the response and
// close the connection without logging it again. A panic with
// http.ErrAbortHandler itself is passed on untouched. After a Hijack the
// connection belongs to the handler: Recover logs and returns.
//
// Put it inside [AccessLog], so the 500 is what gets logged.
type Recover struct {
	// Logger receives the panics; nil means slog.Default().
	Logger *slog.Logger
}

// Wrap returns next with its panics recovered.
func (rc Recover) Wrap(next http.Handler) http.Handler {
	logger := rc.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw, _ := wrap(w)
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			attrs := []slog.Attr{
				slog.Any("panic", v),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
			}
			if id := RequestIDFrom(r.Context()); id != "" {
				attrs = append(attrs, slog.String("request_id", id))
			}
			attrs = append(attrs, slog.String("stack", string(debug.Stack())))
			logger.LogAttrs(r.Context(), slog.LevelError, "http: panic serving request", attrs...)
			switch {
			case rw.hijacked:
			case !rw.wroteHeader:
				h := rw.Header()
				h.Del("Content-Encoding")
				h.Del("Content-Length")
				h.Del("Etag")
				h.Del("Last-Modified")
				http.Error(rw, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
			default:
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(rw, r)
	})
}
