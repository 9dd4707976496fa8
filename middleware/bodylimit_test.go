package middleware

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/jsonhttp"
)

// echo reads the body the way handlers usually do: on an error it answers
// 400 with the error.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Write(b)
})

func TestBodyLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool
		h       http.Handler
		status  int
		resp    string
	}{
		{"under", "12345", false, echo, 200, "12345"},
		{"at the limit", "1234567890", false, echo, 200, "1234567890"},
		{"declared over", "12345678901", false, echo, 413, "request body exceeds the limit of 10 bytes\n"},
		{"chunked over, handler answers 400", "12345678901", true, echo, 413, "request body exceeds the limit of 10 bytes\n"},
		{"chunked over, handler silent", "12345678901", true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
		}), 413, "request body exceeds the limit of 10 bytes\n"},
		{"handler wrote first", "12345678901", true, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(202)
			_, err := io.ReadAll(r.Body)
			var mbe *http.MaxBytesError
			if !errors.As(err, &mbe) {
				t.Errorf("Read error %v, want *http.MaxBytesError", err)
			}
			io.WriteString(w, "kept")
		}), 202, "kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			h := BodyLimit{MaxBytes: 10}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				tc.h.ServeHTTP(w, r)
			}))
			req := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength = -1
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status || rec.Body.String() != tc.resp {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.status, tc.resp)
			}
			if tc.name == "declared over" && called {
				t.Fatal("handler ran for a declared Content-Length over the limit")
			}
			if rec.Code == 413 && rec.Header().Get("Connection") != "close" {
				t.Fatal("413 without Connection: close")
			}
		})
	}
}

func TestBodyLimitOnServers(t *testing.T) {
	h := BodyLimit{MaxBytes: 1 << 10}.Wrap(echo)
	engines(t, h, func(t *testing.T, base string) {
		for _, tc := range []struct {
			body   io.Reader
			status int
		}{
			{strings.NewReader(strings.Repeat("x", 100)), 200},
			{strings.NewReader(strings.Repeat("x", 2<<10)), 413},                 // Content-Length
			{io.MultiReader(strings.NewReader(strings.Repeat("x", 2<<10))), 413}, // chunked
		} {
			resp, err := http.Post(base, "text/plain", tc.body)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		}
	})
}

func TestBodyLimitKeepsFlusher(t *testing.T) {
	h := BodyLimit{MaxBytes: 10}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("not a Flusher")
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/", strings.NewReader("x")))
}

// TestBodyLimitReplyJSON: a JSON API's 413 has the shape of its other
// errors, both for a declared length and for a body that overflows while
// the handler reads it.
func TestBodyLimitReplyJSON(t *testing.T) {
	h := BodyLimit{MaxBytes: 10, Reply: jsonhttp.Error}.Wrap(echo)
	for _, chunked := range []bool{false, true} {
		req := httptest.NewRequest("POST", "/", strings.NewReader("12345678901"))
		if chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		want := `{"error":"request body exceeds the limit of 10 bytes"}` + "\n"
		if rec.Code != 413 || rec.Body.String() != want || rec.Header().Get("Content-Type") != jsonhttp.ContentType ||
			rec.Header().Get("Connection") != "close" {
			t.Errorf("chunked=%v: %d %q %v, want 413 %q as JSON with Connection: close", chunked, rec.Code, rec.Body.String(), rec.Header(), want)
		}
	}
}

// TestBodyLimitZeroValue: BodyLimit{} caps bodies at 4 MiB and answers in
// plain text; a negative MaxBytes lets any body through.
func TestBodyLimitZeroValue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    BodyLimit
		declared int64
		want     int
	}{
		{"zero, 4 MiB", BodyLimit{}, 4 << 20, http.StatusOK},
		{"zero, over 4 MiB", BodyLimit{}, 4<<20 + 1, http.StatusRequestEntityTooLarge},
		{"negative, over 4 MiB", BodyLimit{MaxBytes: -1}, 4<<20 + 1, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/", io.LimitReader(neverEnding('x'), tc.declared))
			req.ContentLength = tc.declared
			rec := httptest.NewRecorder()
			tc.limit.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
			})).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d, want %d (%q)", rec.Code, tc.want, rec.Body.String())
			}
			if tc.want == http.StatusRequestEntityTooLarge && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
				t.Errorf("Content-Type %q, want text/plain", rec.Header().Get("Content-Type"))
			}
		})
	}
}

// neverEnding is an endless body of one byte.
type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
