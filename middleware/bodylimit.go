package middleware

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
)

// BodyLimit caps request bodies at n bytes with http.MaxBytesReader, and
// answers 413 Request Entity Too Large with a reason the client can act on
// ("request body exceeds the limit of 1048576 bytes"):
//
//   - a declared Content-Length over n is rejected before the handler runs;
//   - a body that turns out longer (chunked, or a lying client) makes the
//     handler's Read fail with *http.MaxBytesError; if the handler then
//     answers before anything was written, whatever it answers (often
//     http.Error(w, err.Error(), 400)) is replaced by the 413, and if it
//     answers nothing, the 413 is sent when it returns. A handler that had
//     already written keeps its response.
//
// The 413 asks the client to close the connection: the rest of the body
// is not worth reading. A negative n disables the limit.
//
// hotpath's own server enforces Server.MaxRequestBodyBytes (default
// 4 MiB) the same way; BodyLimit gives net/http servers the same defense
// and lets a route set a tighter one.
func BodyLimit(n int64) func(http.Handler) http.Handler {
	return BodyLimitFunc(n, textError)
}

// textError is http.Error with BodyLimitFunc's argument order.
func textError(w http.ResponseWriter, status int, reason string) { http.Error(w, reason, status) }

// BodyLimitFunc is BodyLimit with the 413 written by reply, given the
// status and the reason: a JSON API passes jsonhttp.Error so that this
// error has the same shape as its others. Connection: close is set, and
// Content-Encoding removed, before reply is called.
func BodyLimitFunc(n int64, reply func(w http.ResponseWriter, status int, reason string)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if n < 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > n {
				tooLarge(w, n, reply)
				return
			}
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			st := &limitState{w: w, limit: n, reply: reply}
			st.body = http.MaxBytesReader(w, r.Body, n) // w, not our wrapper: net/http then closes the connection after the reply
			orig := r.Body
			r.Body = (*limitBody)(st)
			defer func() { r.Body = orig }()
			next.ServeHTTP((*limitWriter)(st), r)
			if st.exceeded && !st.wrote {
				tooLarge(w, n, reply)
			}
		})
	}
}

func tooLarge(w http.ResponseWriter, n int64, reply func(http.ResponseWriter, int, string)) {
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Connection", "close")
	reply(w, http.StatusRequestEntityTooLarge, "request body exceeds the limit of "+strconv.FormatInt(n, 10)+" bytes")
}

// limitState is one allocation for both the body and the writer wrapper.
type limitState struct {
	w        http.ResponseWriter
	body     io.ReadCloser
	limit    int64
	reply    func(http.ResponseWriter, int, string)
	exceeded bool // a Read hit the limit
	wrote    bool // the head is out (ours or the handler's)
	swallow  bool // we sent the 413: the handler's writes go nowhere
}

type limitBody limitState

func (b *limitBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			b.exceeded = true
		}
	}
	return n, err
}

func (b *limitBody) Close() error { return b.body.Close() }

// limitWriter passes writes through until the body overflowed before the
// head went out; then the first write sends the 413 instead.
type limitWriter limitState

func (lw *limitWriter) commit() {
	if lw.wrote {
		return
	}
	lw.wrote = true
	if lw.exceeded {
		tooLarge(lw.w, lw.limit, lw.reply)
		lw.swallow = true
	}
}

func (lw *limitWriter) Header() http.Header { return lw.w.Header() }

func (lw *limitWriter) WriteHeader(code int) {
	if code < 200 && !lw.exceeded {
		lw.w.WriteHeader(code) // 1xx: informational, the head is still ours
		return
	}
	lw.commit()
	if !lw.swallow {
		lw.w.WriteHeader(code)
	}
}

func (lw *limitWriter) Write(p []byte) (int, error) {
	lw.commit()
	if lw.swallow {
		return len(p), nil
	}
	return lw.w.Write(p)
}

func (lw *limitWriter) WriteString(s string) (int, error) {
	lw.commit()
	if lw.swallow {
		return len(s), nil
	}
	return io.WriteString(lw.w, s)
}

func (lw *limitWriter) ReadFrom(src io.Reader) (int64, error) {
	lw.commit()
	if lw.swallow {
		return io.Copy(io.Discard, src)
	}
	if rf, ok := lw.w.(io.ReaderFrom); ok {
		return rf.ReadFrom(src)
	}
	return io.Copy(writerOnly{lw.w}, src)
}

func (lw *limitWriter) Flush() { _ = lw.FlushError() }

func (lw *limitWriter) FlushError() error {
	lw.commit()
	return http.NewResponseController(lw.w).Flush()
}

func (lw *limitWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	lw.wrote = true
	return http.NewResponseController(lw.w).Hijack()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (lw *limitWriter) Unwrap() http.ResponseWriter { return lw.w }
