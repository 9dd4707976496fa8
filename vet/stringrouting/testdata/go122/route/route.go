package route

import (
	"net/http"
	"strings"
)

func handleUsers(w http.ResponseWriter, r *http.Request)  {}
func handleOrders(w http.ResponseWriter, r *http.Request) {}
func handleHealth(w http.ResponseWriter, r *http.Request) {}

// ---- must flag ----

func handler(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/v1/users/"): // want `requests are routed by string tests on r.URL.Path`
		handleUsers(w, r)
	case strings.HasPrefix(r.URL.Path, "/api/v1/orders/"):
		handleOrders(w, r)
	case strings.Contains(r.URL.Path, "/health"):
		handleHealth(w, r)
	default:
		http.NotFound(w, r)
	}
}

type router struct{ api, static http.Handler }

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/") { // want `requests are routed by string tests`
		rt.api.ServeHTTP(w, r)
	} else if strings.HasPrefix(r.URL.Path, "/static/") {
		rt.static.ServeHTTP(w, r)
	}
}

func serveUser(w http.ResponseWriter, id string)  {}
func serveOrder(w http.ResponseWriter, id string) {}

// The branches pass the rest of the path, not the request (lab 000-06).
func pathParams(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/v1/users/"): // want `requests are routed by string tests`
		serveUser(w, strings.TrimPrefix(r.URL.Path, "/api/v1/users/"))
	case strings.HasPrefix(r.URL.Path, "/api/v1/orders/"):
		serveOrder(w, strings.TrimPrefix(r.URL.Path, "/api/v1/orders/"))
	}
}

// ---- must not flag ----

func deny(w http.ResponseWriter, path string) {}

// Two guards that reject with the raw path are checks, not routes.
func goodGuardsWithPath(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/admin/") {
		deny(w, r.URL.Path)
		return
	}
	if strings.Contains(r.URL.Path, "/.git/") {
		deny(w, r.URL.Path)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// One prefix check is a guard, not a router.
func goodGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/admin/") {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Two checks that set flags do not dispatch.
func goodFlags(w http.ResponseWriter, r *http.Request) {
	cache, auth := false, false
	if strings.HasPrefix(r.URL.Path, "/static/") {
		cache = true
	}
	if strings.HasSuffix(r.URL.Path, ".json") {
		auth = true
	}
	_, _ = cache, auth
}

// Dynamic prefixes come from configuration: a router cannot be written down.
func goodDynamic(prefixes []string, hs []http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i, p := range prefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				hs[i].ServeHTTP(w, r)
			}
		}
	}
}
