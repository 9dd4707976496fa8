// Package jsonhttp writes JSON responses and decodes JSON requests. A
// response is encoded into a pooled buffer before anything is sent, so
// the status and headers are decided after the value is encoded: an
// encoding error becomes a real 500 instead of a half-written 200.
package jsonhttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/hotpathhq/hotpath/pool"
)

// ContentType is the Content-Type Write sets.
const ContentType = "application/json"

// encoder is a pooled buffer with a json.Encoder bound to it: both are
// reused, so a Write allocates neither.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// maxPooled is the largest buffer kept for reuse: 64 KiB (pool's default);
// a larger response is encoded fine, its buffer is just not kept.
const maxPooled = pool.DefaultMaxBufferBytes

var encoders encoderPool

// Write encodes v as JSON and sends it with status, Content-Type
// application/json and a Content-Length. The value is encoded into a pooled
// buffer before anything is written, so:
//
//   - an encoding error (an unsupported type, a failing MarshalJSON) is
//     answered with a 500 and a JSON error body, and returned; the status
//     asked for is never sent with a broken body;
//   - a write error (the client went away) is returned; log it, there is
//     nobody to answer.
//
// Why buffer rather than json.NewEncoder(w).Encode(v): encoding/json's
// Encoder does not stream either. It encodes the whole value into an
// internal buffer and writes it in one call, so streaming gains no memory;
// it only loses the chance to answer a failed encode properly and to send
// Content-Length. Our buffer and Encoder are pooled, so the full-payload
// slice of json.Marshal is not allocated either; buffers over 64 KiB are
// dropped rather than kept. Like Encoder, Write ends the body with a
// newline. For tiny responses the Content-Length header makes Write a
// little slower than encoding straight into w; the benchmarks in
// write_test.go compare the three ways at 60 B and 5 KB.
func Write(w http.ResponseWriter, status int, v any) error {
	e := encoders.get()
	defer encoders.put(e)
	if err := e.enc.Encode(v); err != nil {
		Error(w, http.StatusInternalServerError, "response encoding failed")
		return err
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(e.buf.Len()))
	w.WriteHeader(status)
	_, err := w.Write(e.buf.Bytes())
	return err
}

// Error sends status with the JSON body {"error": msg}. It is what Write
// sends when encoding fails, and what a handler can send for a DecodeError
// (Error(w, de.Status, de.Error())).
func Error(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	b = append(b, '\n')
	h := w.Header()
	h.Del("Content-Encoding")
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
