package jsonhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultMaxBytes is the body limit of Decode when DecodeOptions.MaxBytes
// is 0: 1 MiB.
const DefaultMaxBytes = 1 << 20

// DecodeOptions configures Decode. The zero value is strict about
// Content-Type and size, lenient about unknown fields (encoding/json's
// default).
type DecodeOptions struct {
	// MaxBytes caps the body; a longer one is a 413. Default
	// DefaultMaxBytes; negative means no limit.
	MaxBytes int64
	// DisallowUnknownFields makes an object field that v has no place for
	// a 400, instead of being ignored.
	DisallowUnknownFields bool
	// AllowAnyContentType accepts a body whatever its Content-Type says
	// (or without one); otherwise it must be application/json or a
	// +json type, else 415.
	AllowAnyContentType bool
}

// DecodeError is the error of Decode: Status is the response it calls for
// (400, 413 or 415), and Error() a message safe to send to the client.
type DecodeError struct {
	Status int
	Msg    string
	Err    error // the underlying error, if any
}

// Error returns Msg, the message for the client.
func (e *DecodeError) Error() string { return e.Msg }

// Unwrap returns the underlying error.
func (e *DecodeError) Unwrap() error { return e.Err }

// Decode reads one JSON value from r's body into v, which must be a
// pointer. It returns a *DecodeError whose Status says what to answer:
//
//   - 415 Unsupported Media Type when Content-Type is not JSON;
//
//   - 413 Content Too Large when Content-Length, or the body as read, is
//     over MaxBytes;
//
//   - 400 Bad Request for an empty body, malformed JSON (with the
//     offset), a value of the wrong type (with the field), an unknown
//     field when disallowed, or anything after the value.
//
// A handler answers the error as it says:
//
//	var in CreateItem
//	if err := jsonhttp.Decode(r, &in, jsonhttp.DecodeOptions{DisallowUnknownFields: true}); err != nil {
//		var de *jsonhttp.DecodeError
//		errors.As(err, &de)
//		jsonhttp.Error(w, de.Status, de.Error())
//		return
//	}
func Decode(r *http.Request, v any, o DecodeOptions) error {
	if !o.AllowAnyContentType && !isJSON(r.Header.Get("Content-Type")) {
		return &DecodeError{Status: http.StatusUnsupportedMediaType, Msg: "Content-Type must be application/json"}
	}
	max := o.MaxBytes
	if max == 0 {
		max = DefaultMaxBytes
	}
	if max > 0 && r.ContentLength > max {
		return tooLarge(max)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return &DecodeError{Status: http.StatusBadRequest, Msg: "request body is empty"}
	}
	var body io.Reader = r.Body
	var lr *io.LimitedReader
	if max > 0 {
		lr = &io.LimitedReader{R: r.Body, N: max + 1}
		body = lr
	}
	dec := json.NewDecoder(body)
	if o.DisallowUnknownFields {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if lr != nil && lr.N <= 0 {
		return tooLarge(max)
	}
	if err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return &DecodeError{Status: http.StatusBadRequest, Msg: "request body must hold a single JSON value"}
	}
	if _, err := dec.Token(); err != io.EOF {
		if lr != nil && lr.N <= 0 {
			return tooLarge(max)
		}
		return &DecodeError{Status: http.StatusBadRequest, Msg: "request body must hold a single JSON value", Err: err}
	}
	return nil
}

func tooLarge(max int64) error {
	return &DecodeError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body exceeds the limit of %d bytes", max)}
}

func decodeError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return &DecodeError{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body exceeds the limit of %d bytes", mbe.Limit), Err: err}
	case errors.Is(err, io.EOF):
		return &DecodeError{Status: http.StatusBadRequest, Msg: "request body is empty", Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &DecodeError{Status: http.StatusBadRequest, Msg: "request body holds truncated JSON", Err: err}
	case errors.As(err, &se):
		return &DecodeError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("malformed JSON at byte %d", se.Offset), Err: err}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(the value)"
		}
		return &DecodeError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("field %s: want %s, got JSON %s", field, te.Type, te.Value), Err: err}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return &DecodeError{Status: http.StatusBadRequest, Msg: "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field "), Err: err}
	}
	return &DecodeError{Status: http.StatusBadRequest, Msg: "invalid JSON request body", Err: err}
}

// isJSON reports whether a Content-Type is application/json or a +json
// type, ignoring parameters and case, without allocating.
func isJSON(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	if strings.EqualFold(ct, "application/json") {
		return true
	}
	return len(ct) > len("application/+json") && strings.EqualFold(ct[:len("application/")], "application/") &&
		strings.EqualFold(ct[len(ct)-len("+json"):], "+json")
}
