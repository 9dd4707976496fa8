package bufferperrequest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
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

func decodes(w http.ResponseWriter, r *http.Request) {
	buf := &bytes.Buffer{}
	io.Copy(buf, r.Body) // want `a new bytes.Buffer is allocated per request`
	var v map[string]any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil || len(buf.Bytes()) == 0 {
		http.Error(w, "bad body", http.StatusBadRequest)
	}
}

// ---- must not flag ----

// The bytes are kept after the request (go-containerregistry's in-memory
// registry stores uploads): a pooled buffer could not be handed back.
type store struct {
	uploads map[string][]byte
	blobs   []blob
}

type blob struct{ data []byte }

func (s *store) goodStoredInMap(w http.ResponseWriter, r *http.Request) {
	l := bytes.NewBuffer(s.uploads["x"])
	io.Copy(l, r.Body)
	s.uploads["x"] = l.Bytes()
}

func (s *store) goodStoredInLiteral(w http.ResponseWriter, r *http.Request) {
	b := &bytes.Buffer{}
	io.Copy(b, r.Body)
	s.blobs = append(s.blobs, blob{data: b.Bytes()})
}

func goodReturned(r *http.Request) *bytes.Buffer {
	var b bytes.Buffer
	b.ReadFrom(r.Body)
	return &b
}

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
