package bufferperrequest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"sync"
)

// ---- must flag ----

func handler(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, r.Body); err != nil { // want `a new bytes.Buffer is allocated per request`
		http.Error(w, err.Error(), 400)
		return
	}
	_ = sha256.Sum256(buf.Bytes())
}

func limited(w http.ResponseWriter, r *http.Request) {
	buf := new(bytes.Buffer)
	buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<20)) // want `a new bytes.Buffer is allocated per request`
}

// ---- must not flag ----

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func goodPooled(w http.ResponseWriter, r *http.Request) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	io.Copy(buf, r.Body)
}

func goodParam(buf *bytes.Buffer, r *http.Request) {
	buf.ReadFrom(r.Body)
}

// A response body is not a request body.
func goodResponse(resp *http.Response) {
	var buf bytes.Buffer
	io.Copy(&buf, resp.Body)
}

type server struct{ scratch bytes.Buffer }

func (s *server) goodField(r *http.Request) {
	s.scratch.ReadFrom(r.Body)
}
