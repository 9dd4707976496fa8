package timerequestid

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

type reqIDKey struct{}

// ---- must flag ----

func requestID(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strconv.FormatInt(time.Now().UnixNano(), 10) // want `request ID from time.Now\(\).UnixNano\(\)`
		ctx := context.WithValue(r.Context(), reqIDKey{}, id)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func header(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Request-ID", fmt.Sprintf("%d", time.Now().UnixNano())) // want `request ID from time.Now`
}

// ---- must not flag ----

var counter atomic.Uint64

func goodCounter(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strconv.FormatUint(counter.Add(1), 36)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqIDKey{}, id)))
	})
}

// Timing, not an ID.
func goodTiming(w http.ResponseWriter, r *http.Request) {
	start := time.Now().UnixNano()
	log.Println(time.Now().UnixNano() - start)
}

// Not request code: a seed at startup.
func goodSeed() int64 {
	seedID := time.Now().UnixNano()
	return seedID
}

// A timestamp header is fine.
func goodTimestamp(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Timestamp", strconv.FormatInt(time.Now().UnixNano(), 10))
}
