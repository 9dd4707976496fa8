package lab

import (
	"bytes"
	"io"
	"net/http"
)

// sinkWriter is an http.ResponseWriter for calling handlers directly in
// micro-benchmarks, without a network. Its header map lives across calls
// (cleared by reset), so a handler's own allocations are what is counted;
// net/http's real writer allocates a fresh map per request on top.
type sinkWriter struct {
	header http.Header
	status int
	n      int
	keep   bool // keep the body in buf (for same-work checks)
	buf    bytes.Buffer
}

func newSinkWriter(keep bool) *sinkWriter {
	return &sinkWriter{header: make(http.Header, 8), keep: keep}
}

func (w *sinkWriter) Header() http.Header { return w.header }

func (w *sinkWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *sinkWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += len(p)
	if w.keep {
		w.buf.Write(p)
	}
	return len(p), nil
}

// reset prepares the writer for the next request.
func (w *sinkWriter) reset() {
	clear(w.header)
	w.status, w.n = 0, 0
	w.buf.Reset()
}

// response renders what the handler produced, for same-work checks.
func (w *sinkWriter) response() string {
	var b bytes.Buffer
	b.WriteString(http.StatusText(w.status))
	b.WriteByte('\n')
	w.header.Write(&b)
	b.WriteByte('\n')
	b.Write(w.buf.Bytes())
	return b.String()
}

// replayBody is a request body that can be rewound, so one *http.Request
// serves many calls of a handler. It offers Read only, as net/http's
// request bodies do: a bytes.Reader's WriteTo would let io.Copy fill a
// bytes.Buffer in one exact allocation, which no real body allows.
type replayBody struct {
	r    bytes.Reader
	data []byte
}

func newReplayBody(data []byte) *replayBody {
	b := &replayBody{data: data}
	b.r.Reset(data)
	return b
}

func (b *replayBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *replayBody) Close() error { return nil }

func (b *replayBody) rewind() { b.r.Reset(b.data) }

// patternReader yields n bytes of a repeating pattern without holding
// them in memory: an upstream body of any size.
type patternReader struct {
	n, off int64
}

var pattern = bytes.Repeat([]byte("0123456789abcdef"), 256) // 4 KiB

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.n-r.off)]
	k := 0
	for k < len(p) {
		k += copy(p[k:], pattern[(r.off+int64(k))%int64(len(pattern)):])
	}
	r.off += int64(k)
	return k, nil
}

func (r *patternReader) Close() error { return nil }
