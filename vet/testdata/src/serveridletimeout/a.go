package serveridletimeout

import (
	"net/http"
	"time"
)

// ---- must flag ----

func bare(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second} // want `http.Server has no IdleTimeout`
	return srv.ListenAndServe()
}

var global = http.Server{Addr: ":8081", WriteTimeout: time.Second} // want `http.Server has no IdleTimeout`

// ---- must not flag ----

func good(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, IdleTimeout: 90 * time.Second}
	return srv.ListenAndServe()
}

// IdleTimeout falls back to ReadTimeout (telegraf's servers set only this).
func goodReadTimeout(mux *http.ServeMux, d time.Duration) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadTimeout: d}
	return srv.ListenAndServe()
}

func goodSetAfter(mux *http.ServeMux) error {
	srv := http.Server{Addr: ":8080", Handler: mux}
	srv.IdleTimeout = time.Minute
	return srv.ListenAndServe()
}

var tuned = http.Server{Addr: ":8082"}

func init() { tuned.IdleTimeout = time.Minute }

func goodPassed(mux *http.ServeMux, configure func(*http.Server)) error {
	srv := &http.Server{Addr: ":8080", Handler: mux}
	configure(srv) // may set timeouts we cannot see
	return srv.ListenAndServe()
}

func goodSuppressed(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux} //nolint:HP009
	return srv.ListenAndServe()
}

// The literal's closing brace ends its last element's line.
func braceOnLastLine(mux *http.ServeMux) error {
	srv := &http.Server{ // want `http.Server has no IdleTimeout`
		ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mux.ServeHTTP(w, r)
		})}
	return srv.ListenAndServe()
}
