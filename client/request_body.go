package client

// Request bodies as both engines read them: whether one is in memory,
// what wraps it, the buffers it is copied through, and the errors of one
// that fails or does not have its declared length.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
)

// errRequestBody wraps an error reading the caller's request body: such a
// request is never retried.
var errRequestBody = errors.New("client: reading the request body")

// bodyError is the request body's own failure err, as the request's.
func bodyError(err error) error { return &requestBodyError{err} }

// requestBodyError is the request body's own Read failure: errRequestBody
// for the transport's decisions (never retried), and the body's error as
// is for the caller, as net/http returns it (see RoundTrip).
type requestBodyError struct{ err error }

func (e *requestBodyError) Error() string {
	return "client: reading the request body: " + e.err.Error()
}
func (e *requestBodyError) Unwrap() []error { return []error{errRequestBody, e.err} }

// bodyErrorAsIs returns the caller's body error as it came, where err is
// one, as net/http's transport does (callers compare it with ==).
func bodyErrorAsIs(resp *http.Response, err error) (*http.Response, error) {
	if be, ok := err.(*requestBodyError); ok {
		return nil, be.err
	}
	return resp, err
}

// bodyLonger and bodyShorter are a body that does not have its declared
// length, in net/http's words.
func bodyLonger(want int64) error {
	return fmt.Errorf("%w: http: ContentLength=%d with Body length > %d", errRequestBody, want, want)
}

func bodyShorter(want, got int64) error {
	return fmt.Errorf("%w: http: ContentLength=%d with Body length %d", errRequestBody, want, got)
}

// inMemoryBody reports whether req's body is known to be in memory: it
// cannot wait on anything, so it is written before the response is read.
func inMemoryBody(req *http.Request) bool {
	if req.GetBody != nil || req.Body == http.NoBody {
		return true
	}
	// io.NopCloser around a reader in memory, set as Body by hand (net/http
	// looks inside it the same way).
	if req.Body == nil {
		return true
	}
	switch unwrapBody(req.Body).(type) {
	case *bytes.Reader, *bytes.Buffer, *strings.Reader:
		return true
	}
	return false
}

// unwrapBody returns the reader inside body's wrappers: io.NopCloser's,
// the streamed upload's, and net/http's transport's own (when this Transport serves a protocol
// registered on an http.Transport, which wraps the body to track it), as
// net/http's transferWriter looks inside them.
func unwrapBody(body io.Reader) io.Reader {
	for body != nil {
		switch b := body.(type) {
		case *onceCloser: // the streamed upload's own
			body = b.ReadCloser
			continue
		case onceCloserWriterTo:
			body = b.ReadCloser
			continue
		}
		v := reflect.ValueOf(body)
		switch {
		case v.Type() == nopCloserType || v.Type() == nopCloserWriterToType:
			body, _ = v.Field(0).Interface().(io.Reader)
		case v.Type().String() == "*http.readTrackingBody" && v.Type().Elem().Kind() == reflect.Struct:
			f := v.Elem().FieldByName("ReadCloser")
			if !f.IsValid() || !f.CanInterface() {
				return body
			}
			body, _ = f.Interface().(io.Reader)
		default:
			return body
		}
	}
	return body
}

var (
	nopCloserType         = reflect.TypeOf(io.NopCloser(nil))
	nopCloserWriterToType = reflect.TypeOf(io.NopCloser(struct {
		io.Reader
		io.WriterTo
	}{}))
)

// onceCloser closes the body it wraps once: the upload's end and an
// abort (which wakes a Read blocked in it) may both ask.
type onceCloser struct {
	io.ReadCloser
	closed atomic.Bool
}

func (o *onceCloser) Close() error {
	if o.closed.CompareAndSwap(false, true) {
		return o.ReadCloser.Close()
	}
	return nil
}

// onceCloserWriterTo is onceCloser for a body that writes itself
// (io.WriterTo), which the writer uses.
type onceCloserWriterTo struct{ *onceCloser }

func (o onceCloserWriterTo) WriteTo(w io.Writer) (int64, error) {
	return o.ReadCloser.(io.WriterTo).WriteTo(w)
}

// chunkBufSize is the buffer a big HTTP/1.1 body is copied through, a
// chunked one framed in once it outgrows the connection's write buffer,
// and an HTTP/2 body read into.
const chunkBufSize = 32 << 10

var chunkBufs = sync.Pool{New: func() any { return new([chunkBufSize]byte) }}
