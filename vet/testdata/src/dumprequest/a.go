package dumprequest

import (
	"log"
	"net/http"
	"net/http/httputil"
)

// ---- must flag ----

func logging(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dump, err := httputil.DumpRequest(r, true) // want `httputil.DumpRequest runs on every request`
		if err == nil {
			log.Printf("req:\n%s", dump)
		}
		h.ServeHTTP(w, r)
	})
}

// ---- must not flag ----

// A logging RoundTripper exists to dump: whoever builds the client installs
// it only when debugging (go-containerregistry wraps its transport in one
// only if logs.Enabled(logs.Debug)), which this function cannot see.
type logTransport struct{ next http.RoundTripper }

func (t logTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	b, _ := httputil.DumpRequestOut(req, true)
	log.Printf("%s", b)
	return t.next.RoundTrip(req)
}

var debug bool

func goodDebugFlag(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if debug {
			dump, _ := httputil.DumpRequest(r, true)
			log.Printf("%s", dump)
		}
		h.ServeHTTP(w, r)
	})
}

func goodOnError(resp *http.Response, req *http.Request) {
	switch {
	case resp.StatusCode >= 500:
		b, _ := httputil.DumpRequestOut(req, false)
		log.Printf("%s", b)
	}
}

// A helper: its caller decides when to dump (minio-go's dumpHTTP).
func goodHelper(req *http.Request) {
	b, _ := httputil.DumpRequestOut(req, false)
	log.Printf("%s", b)
}

// Not per request: a one-off dump of a request built elsewhere.
func goodNoRequestParam(build func() *http.Request) {
	b, _ := httputil.DumpRequest(build(), false)
	log.Printf("%s", b)
}
