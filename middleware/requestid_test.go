package middleware

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRequestIDUniqueUnderConcurrency(t *testing.T) {
	const workers, per = 8, 500
	h := RequestID{}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got, hdr := RequestIDFrom(r.Context()), w.Header().Get(RequestIDHeader); got == "" || got != hdr {
			t.Errorf("context ID %q, response header %q", got, hdr)
		}
	}))
	ids := make(chan string, workers*per)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				ids <- rec.Header().Get(RequestIDHeader)
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := make(map[string]bool, workers*per)
	for id := range ids {
		if seen[id] {
			t.Fatalf("duplicate request ID %q", id)
		}
		seen[id] = true
		if !strings.HasPrefix(id, idPrefix+"-") || !validRequestID(id, DefaultMaxRequestIDLen) {
			t.Fatalf("ID %q not in the prefix-counter format", id)
		}
	}
}

func TestRequestIDIncoming(t *testing.T) {
	long := strings.Repeat("a", DefaultMaxRequestIDLen+1)
	for _, tc := range []struct {
		name, in string
		trust    bool
		keep     bool
	}{
		{"ignored by default", "abc-123", false, false},
		{"trusted", "abc-123", true, true},
		{"trusted, uuid", "0190a6f2-7c1e-7d3a-9b1f-3c2e1d4f5a6b", true, true},
		{"too long", long, true, false},
		{"space", "abc 123", true, false},
		{"control", "abc\x01", true, false},
		{"non-ascii", "abcé", true, false},
		{"empty", "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			h := RequestID{TrustIncoming: tc.trust}.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = RequestIDFrom(r.Context())
			}))
			req := httptest.NewRequest("GET", "/", nil)
			req.Header.Set(RequestIDHeader, tc.in)
			h.ServeHTTP(httptest.NewRecorder(), req)
			if kept := got == tc.in; kept != tc.keep {
				t.Fatalf("incoming %q: got %q, kept=%v want %v", tc.in, got, kept, tc.keep)
			}
			if got == "" {
				t.Fatal("no ID")
			}
		})
	}
}

func TestRequestIDNoResponseHeader(t *testing.T) {
	h := RequestID{NoResponseHeader: true}.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if v := rec.Header().Get(RequestIDHeader); v != "" {
		t.Fatalf("header set to %q", v)
	}
	if RequestIDFrom(context.Background()) != "" {
		t.Fatal("ID from an empty context")
	}
}

// timeNowID is the "before" of seed 000, exercise 14 (with a typed key, so
// the comparison is about the ID alone).
func timeNowID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strconv.FormatInt(time.Now().UnixNano(), 10)
		ctx := context.WithValue(r.Context(), requestIDKey{}, id)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

var nopHandler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

func BenchmarkRequestIDTimeNow(b *testing.B) {
	benchHandler(b, timeNowID(nopHandler), "")
}

func BenchmarkRequestID(b *testing.B) {
	benchHandler(b, RequestID{NoResponseHeader: true}.Wrap(nopHandler), "")
}

func BenchmarkRequestIDWithHeader(b *testing.B) {
	benchHandler(b, RequestID{}.Wrap(nopHandler), "")
}

func BenchmarkNextRequestID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = NextRequestID()
	}
}
