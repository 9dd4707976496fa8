package middleware

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
)

// BodyLimit caps request bodies at MaxBytes with http.MaxBytesReader, and
// answers 413 Request Entity Too Large with a reason the client can act on
// ("request body exceeds the limit of 1048576 bytes"):
//
//   - a declared Content-Length over the limit is rejected before the
//     handler runs;
//   - a body that turns out longer (chunked, or a lying client) makes the
//     handler's Read fail with *http.MaxBytesError; if the handler then
//     answers before anything was written, whatever it answers (often
//     http.Error(w, err.Error(), 400)) is replaced by the 413, and if it
//     answers nothing, the 413 is sent when it returns. A handler that had
//     already written keeps its response.
//
// The 413 asks the client to close the connection: the rest of the body
// is not worth reading. The zero value caps bodies at 4 MiB and answers
// in plain text; a JSON API sets its limit and its error's shape:
//
//	h := middleware.BodyLimit{MaxBytes: 1 << 20, Reply: jsonhttp.Error}.Wrap(mux)
//
// hotpath's own server enforces Server.MaxRequestBodyBytes (default
// 4 MiB) the same way; BodyLimit gives net/http servers the same defense
// and lets a route set a tighter one.
type BodyLimit struct {
	// MaxBytes caps a request body; 0 means 4 MiB, as hotpath's server,
	// and a negative MaxBytes disables the limit.
	MaxBytes int64
	// Reply writes the 413, given the status and the reason, after
	// Connection: close is set and Content-Encoding removed; nil means
	// http.Error's plain text. A JSON API passes jsonhttp.Error, so that
	// this error has the same shape as its others.
	Reply func(w http.ResponseWriter, status int, reason string)
}

// textError is http.Error with BodyLimit.Reply's argument order.
func textError(w http.ResponseWriter, status int, reason string) { http.Error(w, reason, status) }

// Wrap returns next with its request bodies capped.
func (bl BodyLimit) Wrap(next http.Handler) http.Handler {
	n, reply := bl.MaxBytes, bl.Reply
	switch {
	case n < 0:
		return next
	case n == 0:
		n = 4 << 20
	}
	if reply == nil {
		reply = textError
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
