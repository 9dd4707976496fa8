package readheadertimeout

import (
	"net/http"
	"time"
)

// ---- must flag ----

func bare(mux *http.ServeMux) error {
	srv := &http.Server{ // want `http.Server has no ReadHeaderTimeout`
		Addr:    ":8080",
		Handler: mux,
	}
	return srv.ListenAndServe()
}

func inline(mux *http.ServeMux) error {
	return (&http.Server{Addr: ":8080", Handler: mux}).ListenAndServe() // want `http.Server has no ReadHeaderTimeout`
}

func listen(mux *http.ServeMux) error {
	return http.ListenAndServe(":8080", mux) // want `http.ListenAndServe serves with no timeouts at all`
}

func zeroIsUnset(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 0} // want `http.Server has no ReadHeaderTimeout`
	return srv.ListenAndServe()
}

// ---- must not flag ----

func good(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.ListenAndServe()
}

// ReadHeaderTimeout falls back to ReadTimeout.
func goodReadTimeout(mux *http.ServeMux, d time.Duration) error {
	srv := &http.Server{Addr: ":8080", Handler: mux, ReadTimeout: d}
	return srv.ListenAndServe()
}

// gosec G112's false positive: the timeout is set after the literal.
func goodSetAfter(mux *http.ServeMux) error {
	srv := &http.Server{Addr: ":8080", Handler: mux}
	srv.ReadHeaderTimeout = 3 * time.Second
	return srv.ListenAndServe()
}

type app struct{ srv *http.Server }

func newApp(mux *http.ServeMux) *app {
	return &app{srv: &http.Server{Addr: ":8080", Handler: mux}}
}

func (a *app) configure(cfgTimeout time.Duration) {
	a.srv.ReadHeaderTimeout = cfgTimeout // set in another function
}

// Returned: the caller may set the timeouts.
func goodReturned(mux *http.ServeMux) *http.Server {
	return &http.Server{Addr: ":8080", Handler: mux}
}

func goodSuppressed(mux *http.ServeMux) error {
	return http.ListenAndServe("localhost:6060", mux) //nolint:read-header-timeout // pprof on loopback
}

func goodIgnored(mux *http.ServeMux) error {
	//hotpath:ignore HP013 debug listener
	return http.ListenAndServe("localhost:6061", mux)
}
