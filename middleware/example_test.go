package middleware_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/hotpathhq/hotpath/middleware"
)

// The four together, in the order that makes each see what it needs:
// RequestID first (everything below logs the ID), AccessLog outside Recover
// (the 500 is logged), BodyLimit next to the handler.
func Example() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { // stable output for the example
			switch a.Key {
			case "time", "dur", "request_id", "stack":
				return slog.Attr{}
			}
			return a
		},
	}))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(b)
	})
	mux.HandleFunc("GET /panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := middleware.RequestID{}.Wrap(
		middleware.AccessLog{Logger: logger}.Wrap(
			middleware.Recover{Logger: logger}.Wrap(
				middleware.BodyLimit{MaxBytes: 8}.Wrap(mux))))

	for _, r := range []*http.Request{
		httptest.NewRequest("POST", "/echo", strings.NewReader("hello")),
		httptest.NewRequest("POST", "/echo", strings.NewReader("far too long")),
		httptest.NewRequest("GET", "/panic", nil),
	} {
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	// Output:
	// level=INFO msg=http method=POST path=/echo status=200 bytes=5 remote=192.0.2.1:1234
	// level=INFO msg=http method=POST path=/echo status=413 bytes=42 remote=192.0.2.1:1234
	// level=ERROR msg="http: panic serving request" panic=boom method=GET path=/panic
	// level=INFO msg=http method=GET path=/panic status=500 bytes=22 remote=192.0.2.1:1234
}

func ExampleRequestIDFrom() {
	h := middleware.RequestID{}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := middleware.RequestIDFrom(r.Context())
		fmt.Println(id != "" && id == w.Header().Get(middleware.RequestIDHeader))
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	// Output: true
}

func ExampleRequestID() {
	// Behind a proxy that sets X-Request-Id: keep its IDs when they are sane.
	h := middleware.RequestID{TrustIncoming: true}.Wrap(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Println(middleware.RequestIDFrom(r.Context()))
		}))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Request-Id", "edge-7f3a9c")
	h.ServeHTTP(httptest.NewRecorder(), r)
	// Output: edge-7f3a9c
}

func ExampleAccessLog() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	mux := http.NewServeMux()
	// Capture the first 512 bytes of one request body in 1000.
	h := middleware.AccessLog{Logger: logger, BodySampleEvery: 1000, BodySampleBytes: 512}.Wrap(mux)
	_ = h // http.ListenAndServe(":8080", h)
}

func ExampleBodyLimit() {
	h := middleware.BodyLimit{MaxBytes: 1 << 20}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest) // replaced by the 413
			return
		}
	}))
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 2<<20)))
	r.ContentLength = -1 // as if chunked: the limit trips while reading
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Print(w.Code, " ", w.Body.String())
	// Output: 413 request body exceeds the limit of 1048576 bytes
}

func ExampleRecover() {
	h := middleware.Recover{Logger: slog.New(slog.DiscardHandler)}.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	fmt.Println(w.Code)
	// Output: 500
}
