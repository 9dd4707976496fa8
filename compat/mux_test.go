package compat_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// muxRouter is a gorilla/mux router: variables with and without
// patterns, a subrouter with its own middleware, method and query and
// header matchers, host variables, strict slashes, a named route built
// back into a URL, and router-wide middleware.
func muxRouter() http.Handler {
	r := mux.NewRouter()
	r.StrictSlash(true)
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen-By", "router-mw")
			next.ServeHTTP(w, r)
		})
	})
	tmpl := func(r *http.Request) string {
		t, _ := mux.CurrentRoute(r).GetPathTemplate()
		return t
	}
	r.HandleFunc("/articles/{category}/{id:[0-9]+}", func(w http.ResponseWriter, r *http.Request) {
		v := mux.Vars(r)
		fmt.Fprintf(w, "category=%s id=%s template=%s", v["category"], v["id"], tmpl(r))
	}).Methods("GET").Name("article")
	r.HandleFunc("/articles/{category}/{id:[0-9]+}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "updated %s with %s", mux.Vars(r)["id"], b)
	}).Methods("PUT", "PATCH")
	r.HandleFunc("/link", func(w http.ResponseWriter, req *http.Request) {
		u, err := r.Get("article").URL("category", "tech", "id", "42")
		fmt.Fprintf(w, "url=%v err=%v", u, err)
	})
	r.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "search q=%s", mux.Vars(r)["q"])
	}).Queries("q", "{q}")
	r.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "search without q")
	})
	r.HandleFunc("/typed", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "json client")
	}).Headers("Accept", "application/json")
	r.Host("{tenant}.example.test").Path("/whoami").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tenant=%s", mux.Vars(r)["tenant"])
	})
	r.HandleFunc("/dir/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "dir index") })

	api := r.PathPrefix("/api/v2").Subrouter()
	api.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer good" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			w.Header().Set("X-API-Version", "2")
			next.ServeHTTP(w, r)
		})
	})
	api.HandleFunc("/users/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "user=%s template=%s", mux.Vars(r)["name"], tmpl(r))
	}).Methods("GET")
	api.HandleFunc("/users", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Location", "/api/v2/users/"+string(b))
		w.WriteHeader(http.StatusCreated)
	}).Methods("POST")
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no route for "+r.URL.Path, http.StatusNotFound)
	})
	return r
}

type muxRequest struct {
	method, path, body string
	header             map[string]string
	wantStatus         int
	wantBody           string // a regular expression
}

var muxRequests = []muxRequest{
	{method: "GET", path: "/articles/tech/42", wantStatus: 200, wantBody: `^category=tech id=42 template=/articles/\{category\}/\{id:\[0-9\]\+\}$`},
	{method: "GET", path: "/articles/tech/abc", wantStatus: 404, wantBody: `^no route for /articles/tech/abc\n$`},
	{method: "PUT", path: "/articles/tech/42", body: "v2", wantStatus: 202, wantBody: `^updated 42 with v2$`},
	{method: "PATCH", path: "/articles/tech/42", body: "v3", wantStatus: 202, wantBody: `^updated 42 with v3$`},
	{method: "DELETE", path: "/articles/tech/42", wantStatus: 405, wantBody: `^$`},
	{method: "GET", path: "/link", wantStatus: 200, wantBody: `^url=/articles/tech/42 err=<nil>$`},
	{method: "GET", path: "/search?q=lamp", wantStatus: 200, wantBody: `^search q=lamp$`},
	{method: "GET", path: "/search", wantStatus: 200, wantBody: `^search without q$`},
	{method: "GET", path: "/typed", header: map[string]string{"Accept": "application/json"}, wantStatus: 200, wantBody: `^json client$`},
	{method: "GET", path: "/typed", header: map[string]string{"Accept": "text/html"}, wantStatus: 404, wantBody: `^no route for /typed`},
	{method: "GET", path: "/whoami", header: map[string]string{"Host": "acme.example.test"}, wantStatus: 200, wantBody: `^tenant=acme$`},
	{method: "GET", path: "/dir", wantStatus: 301, wantBody: `^<a href="/dir/">Moved Permanently</a>`},
	{method: "GET", path: "/dir/", wantStatus: 200, wantBody: `^dir index$`},
	{method: "GET", path: "/api/v2/users/ada", header: map[string]string{"Authorization": "Bearer good"},
		wantStatus: 200, wantBody: `^user=ada template=/api/v2/users/\{name\}$`},
	{method: "GET", path: "/api/v2/users/ada", wantStatus: 401, wantBody: `^unauthorized\n$`},
	{method: "POST", path: "/api/v2/users", body: "bob", header: map[string]string{"Authorization": "Bearer good"},
		wantStatus: 201, wantBody: `^$`},
	{method: "GET", path: "/api/v2/nothing", header: map[string]string{"Authorization": "Bearer good"},
		wantStatus: 404, wantBody: `^no route for /api/v2/nothing\n$`},
}

// TestGorillaMux serves a gorilla/mux router on both engines: variables,
// subrouter middleware, method, query, header and host matching, 404 and
// 405, a strict-slash redirect and a URL built from a named route, with
// the same statuses, headers and bodies on both.
func TestGorillaMux(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, muxRouter())
			c := newClient(t)
			for _, rq := range muxRequests {
				req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
				if err != nil {
					t.Fatal(err)
				}
				if rq.body == "" {
					req.Body = http.NoBody
				}
				for k, v := range rq.header {
					if k == "Host" {
						req.Host = v
					} else {
						req.Header.Set(k, v)
					}
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", rq.method, rq.path, err)
					obs.add(e.name, "%s %s → error %s", rq.method, rq.path, errString(err))
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rq.wantStatus || !regexp.MustCompile(rq.wantBody).Match(body) || err != nil {
					t.Errorf("%s %s: %d %q (%v), want %d and %s", rq.method, rq.path, resp.StatusCode, body, err, rq.wantStatus, rq.wantBody)
				}
				obs.add(e.name, "%s %s → %d Content-Type=%q X-Seen-By=%q X-API-Version=%q Location=%q %q",
					rq.method, rq.path, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("X-Seen-By"),
					resp.Header.Get("X-API-Version"), resp.Header.Get("Location"), body)
			}
		})
	}
	obs.compare(t, "responses")
}
