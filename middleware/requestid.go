package middleware

import (
	"context"
	"crypto/rand"
	"net/http"
	"strconv"
	"sync/atomic"
)

// RequestIDHeader is the header RequestID reads (when trusted) and writes.
const RequestIDHeader = "X-Request-Id"

// DefaultMaxRequestIDLen caps an incoming request ID that
// RequestID.TrustIncoming accepts when MaxLen is 0.
const DefaultMaxRequestIDLen = 64

type requestIDKey struct{}

// RequestIDFrom returns the request ID that RequestID stored in ctx, or ""
// if there is none.
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// RequestID gives every request an ID, stores it in the request's context
// (read it with [RequestIDFrom]) and sets it as the response's
// X-Request-Id. The zero value ignores an incoming X-Request-Id and
// always makes its own:
//
//	h := middleware.RequestID{}.Wrap(mux)
//
// An ID is a random per-process prefix, a dash, and a counter in base 36
// ("k3v9q2xg-1a"): unique within the process by construction, and across
// restarts and instances with overwhelming probability (the prefix has 40
// random bits), where time.Now().UnixNano() collides when two requests
// share a clock tick.
//
// Its cost is mostly r.WithContext's copy of the request, as with any
// middleware that adds a context value; BenchmarkRequestID and
// BenchmarkRequestIDTimeNow (requestid_test.go) compare it with IDs from
// time.Now().UnixNano().
type RequestID struct {
	// TrustIncoming keeps a request's own X-Request-Id when it is valid:
	// 1 to MaxLen bytes of letters, digits and "-._:+=/@". Set it only
	// behind a proxy you control, which sets or strips the header: a
	// client-chosen ID can collide with another's on purpose.
	TrustIncoming bool
	// MaxLen caps a trusted incoming ID; longer ones are replaced.
	// 0 means DefaultMaxRequestIDLen.
	MaxLen int
	// NoResponseHeader stops RequestID from echoing the ID in the
	// response's X-Request-Id header.
	NoResponseHeader bool
}

// Wrap returns next with request IDs given to its requests.
func (o RequestID) Wrap(next http.Handler) http.Handler {
	if o.MaxLen <= 0 {
		o.MaxLen = DefaultMaxRequestIDLen
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := ""
		if o.TrustIncoming {
			if in := r.Header.Get(RequestIDHeader); validRequestID(in, o.MaxLen) {
				id = in
			}
		}
		if id == "" {
			id = NextRequestID()
		}
		if !o.NoResponseHeader {
			w.Header()[RequestIDHeader] = []string{id}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)))
	})
}

var (
	idPrefix  = newIDPrefix()
	idCounter atomic.Uint64
)

// newIDPrefix returns 8 base-32 characters (40 bits) from crypto/rand.
func newIDPrefix() string {
	const alphabet = "0123456789abcdefghijklmnopqrstuv"
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b[:])
}

// NextRequestID returns the next ID of RequestID's sequence, for work
// that starts outside a request (a background job, a message). It is safe
// for concurrent use and costs one allocation (the string).
func NextRequestID() string {
	var b [8 + 1 + 13]byte // prefix, '-', up to 13 base-36 digits of a uint64
	n := copy(b[:], idPrefix)
	b[n] = '-'
	return string(strconv.AppendUint(b[:n+1], idCounter.Add(1), 36))
}

// validRequestID reports whether s is a request ID worth keeping: 1 to max
// bytes of a conservative set that is safe in logs and headers.
func validRequestID(s string, max int) bool {
	if len(s) == 0 || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == ':' || c == '+' || c == '=' || c == '/' || c == '@':
		default:
			return false
		}
	}
	return true
}
