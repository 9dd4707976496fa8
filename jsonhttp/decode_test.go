package jsonhttp

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	type in struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	for _, tc := range []struct {
		name, ct, body string
		chunked        bool
		o              DecodeOptions
		status         int
		msg            string
	}{
		{"ok", "application/json", `{"name":"a","n":1}`, false, DecodeOptions{}, 0, ""},
		{"ok with charset", "application/json; charset=utf-8", `{"name":"a"}`, false, DecodeOptions{}, 0, ""},
		{"ok +json", "application/problem+json", `{"name":"a"}`, false, DecodeOptions{}, 0, ""},
		{"unknown field allowed", "application/json", `{"name":"a","x":1}`, false, DecodeOptions{}, 0, ""},
		{"unknown field refused", "application/json", `{"name":"a","x":1}`, false, DecodeOptions{DisallowUnknownFields: true}, 400, `unknown field "x"`},
		{"no content type", "", `{}`, false, DecodeOptions{}, 415, "Content-Type must be application/json"},
		{"any content type", "text/plain", `{}`, false, DecodeOptions{AllowAnyContentType: true}, 0, ""},
		{"text", "text/plain", `{}`, false, DecodeOptions{}, 415, "Content-Type must be application/json"},
		{"empty", "application/json", ``, false, DecodeOptions{}, 400, "request body is empty"},
		{"syntax", "application/json", `{"name":}`, false, DecodeOptions{}, 400, "malformed JSON at byte 9"},
		{"truncated", "application/json", `{"name":"a"`, false, DecodeOptions{}, 400, "request body holds truncated JSON"},
		{"type", "application/json", `{"n":"x"}`, false, DecodeOptions{}, 400, "field n: want int, got JSON string"},
		{"two values", "application/json", `{} {}`, false, DecodeOptions{}, 400, "request body must hold a single JSON value"},
		{"trailing garbage", "application/json", `{} x`, false, DecodeOptions{}, 400, "request body must hold a single JSON value"},
		{"trailing space", "application/json", "{}\n  ", false, DecodeOptions{}, 0, ""},
		{"declared too large", "application/json", `{"name":"aaaaaaaaaaaa"}`, false, DecodeOptions{MaxBytes: 10}, 413, "request body exceeds the limit of 10 bytes"},
		{"chunked too large", "application/json", `{"name":"aaaaaaaaaaaa"}`, true, DecodeOptions{MaxBytes: 10}, 413, "request body exceeds the limit of 10 bytes"},
		{"chunked at limit", "application/json", `{"n":12345}`, true, DecodeOptions{MaxBytes: 11}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			if tc.body == "" {
				r.Body = http.NoBody
			}
			if tc.chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(io.MultiReader(strings.NewReader(tc.body)))
			}
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			var v in
			err := Decode(r, &v, tc.o)
			if tc.status == 0 {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) || de.Status != tc.status || de.Error() != tc.msg {
				t.Fatalf("error %#v, want %d %q", err, tc.status, tc.msg)
			}
		})
	}
}

// Behind http.MaxBytesReader (middleware.BodyLimit) the limit error is a
// 413 too.
func TestDecodeMaxBytesReader(t *testing.T) {
	r := httptest.NewRequest("POST", "/", nil)
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = -1
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader(`{"name":"aaaaaaaaaaaaaaaa"}`)), 5)
	var v map[string]any
	var de *DecodeError
	if err := Decode(r, &v, DecodeOptions{}); !errors.As(err, &de) || de.Status != 413 {
		t.Fatalf("%v", err)
	}
}
