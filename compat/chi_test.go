package compat_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// quietFormatter is chi's DefaultLogFormatter, writing to a buffer and
// recording panics there instead of printing a stack to stderr.
type quietFormatter struct{ middleware.DefaultLogFormatter }

func (f *quietFormatter) NewLogEntry(r *http.Request) middleware.LogEntry {
	return quietEntry{f.DefaultLogFormatter.NewLogEntry(r), f.Logger}
}

type quietEntry struct {
	middleware.LogEntry
	logger middleware.LoggerInterface
}

func (e quietEntry) Panic(v any, stack []byte) { e.logger.Print(fmt.Sprintf("panic: %v", v)) }

// chiRouter is a small API: URL parameters (plain, regexp, wildcard), a
// subrouter with its own middleware, a mounted router, and chi's
// RequestID, Logger and Recoverer in front of it all. Log lines go to
// logs.
func chiRouter(logs io.Writer) http.Handler {
	// middleware.Logger builds its handler from DefaultLogger when the
	// first route is added.
	middleware.DefaultLogger = middleware.RequestLogger(&quietFormatter{middleware.DefaultLogFormatter{
		Logger: log.New(logs, "", 0), NoColor: true,
	}})
	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	r.Use(middleware.Logger)
	r.Use(middleware.Recoverer)

	r.Get("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "root") })
	r.Get("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "user=%s route=%s reqid=%s", chi.URLParam(r, "id"),
			chi.RouteContext(r.Context()).RoutePattern(), middleware.GetReqID(r.Context()))
	})
	r.Get("/items/{id:[0-9]+}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "item=%s", chi.URLParam(r, "id"))
	})
	r.Get("/files/*", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "file=%s", chi.URLParam(r, "*"))
	})
	r.Get("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	r.Route("/api/v1", func(r chi.Router) {
		r.Use(func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-API-Version", "1")
				next.ServeHTTP(w, r)
			})
		})
		r.Get("/things/{name}", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "thing=%s q=%s route=%s", chi.URLParam(r, "name"), r.URL.Query().Get("q"),
				chi.RouteContext(r.Context()).RoutePattern())
		})
		r.Post("/things", func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Location", "/api/v1/things/"+string(b))
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, "created %s", b)
		})
	})
	admin := chi.NewRouter()
	admin.Get("/stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "stats route=%s", chi.RouteContext(r.Context()).RoutePattern())
	})
	r.Mount("/admin", admin)
	return r
}

type chiRequest struct {
	method, path, body string
	header             map[string]string
	wantStatus         int
	wantBody           string // a regular expression
}

var chiRequests = []chiRequest{
	{method: "GET", path: "/", wantStatus: 200, wantBody: `^root$`},
	{method: "GET", path: "/users/42", header: map[string]string{"X-Request-Id": "client-id-1"},
		wantStatus: 200, wantBody: `^user=42 route=/users/\{id\} reqid=client-id-1$`},
	{method: "GET", path: "/users/7", wantStatus: 200, wantBody: `^user=7 route=/users/\{id\} reqid=.+/.+-\d{6}$`},
	{method: "GET", path: "/users/a%20b", wantStatus: 200, wantBody: `^user=a b route=/users/\{id\} reqid=`},
	{method: "GET", path: "/users/a%2Fb", wantStatus: 200, wantBody: `^user=a%2Fb route=/users/\{id\} reqid=`}, // chi routes on RawPath
	{method: "GET", path: "/items/123", wantStatus: 200, wantBody: `^item=123$`},
	{method: "GET", path: "/items/abc", wantStatus: 404, wantBody: `404 page not found`},
	{method: "GET", path: "/files/a/b/c.txt", wantStatus: 200, wantBody: `^file=a/b/c.txt$`},
	{method: "GET", path: "/api/v1/things/lamp?q=on", wantStatus: 200, wantBody: `^thing=lamp q=on route=/api/v1/things/\{name\}$`},
	{method: "POST", path: "/api/v1/things", body: "chair", wantStatus: 201, wantBody: `^created chair$`},
	{method: "DELETE", path: "/api/v1/things", wantStatus: 405, wantBody: `^$`},
	{method: "GET", path: "/admin/stats", wantStatus: 200, wantBody: `^stats route=/admin/stats$`},
	{method: "GET", path: "/panic", wantStatus: 500, wantBody: `^$`},
	{method: "GET", path: "/", wantStatus: 200, wantBody: `^root$`}, // still serving after the panic
	{method: "GET", path: "/nowhere", wantStatus: 404, wantBody: `404 page not found`},
}

// chiResult is what the client saw of one request, without what differs
// run to run (generated request IDs, Date).
func chiResult(t *testing.T, c *http.Client, base string, rq chiRequest) string {
	t.Helper()
	req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	if rq.body == "" {
		req.Body = http.NoBody
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", rq.method, rq.path, err)
	}
	if resp.StatusCode != rq.wantStatus || !regexp.MustCompile(rq.wantBody).Match(body) {
		t.Errorf("%s %s: %d %q, want %d and %s", rq.method, rq.path, resp.StatusCode, body, rq.wantStatus, rq.wantBody)
	}
	generated := regexp.MustCompile(`reqid=.+/.+-\d{6}`)
	return fmt.Sprintf("%s %s → %d Allow=%q Content-Type=%q X-API-Version=%q Location=%q %q",
		rq.method, rq.path, resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"),
		resp.Header.Get("X-API-Version"), resp.Header.Get("Location"), generated.ReplaceAll(body, []byte("reqid=GENERATED")))
}

// logLineRE takes the parts of a chi log line that differ run to run: the
// generated request ID, the ports, the duration.
var logLineRE = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`^\[[^\]]+/[^\]]+-\d{6}\] `), "[GENERATED] "},
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(` in \S+$`), " in DURATION"},
}

func normalizeLogs(s string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		for _, r := range logLineRE {
			line = r.re.ReplaceAllString(line, r.with)
		}
		out = append(out, line)
	}
	return out
}

// TestChi runs a chi router, with its RequestID, Logger and Recoverer
// middleware, on both engines: same statuses, bodies, headers and log
// lines (the Logger sees the method, host, RequestURI, protocol, remote
// address, status and byte count through chi's wrapped ResponseWriter).
func TestChi(t *testing.T) {
	results := map[string][]string{}
	logs := map[string][]string{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			var buf syncBuffer
			base := e.serve(t, chiRouter(&buf))
			c := newClient(t)
			for _, rq := range chiRequests {
				results[e.name] = append(results[e.name], chiResult(t, c, base, rq))
			}
			// One line per request, plus one for the panic.
			waitFor(t, "a log line per request", func() bool {
				return strings.Count(buf.String(), "\n") >= len(chiRequests)+1
			})
			logs[e.name] = normalizeLogs(buf.String())
		})
	}
	compareLines(t, "responses", results["hotpath"], results["net/http"])
	compareLines(t, "log lines", logs["hotpath"], logs["net/http"])
	for _, want := range []string{
		`[client-id-1] "GET http://127.0.0.1:PORT/users/42 ` + reqProto + `" from 127.0.0.1:PORT - 200 43B in DURATION`,
		`panic: boom`,
		`[GENERATED] "GET http://127.0.0.1:PORT/panic ` + reqProto + `" from 127.0.0.1:PORT - 500 0B in DURATION`,
		`[GENERATED] "DELETE http://127.0.0.1:PORT/api/v1/things ` + reqProto + `" from 127.0.0.1:PORT - 405 0B in DURATION`,
	} {
		if !strings.Contains(strings.Join(logs["hotpath"], "\n"), want) {
			t.Errorf("hotpath logs lack %q:\n%s", want, strings.Join(logs["hotpath"], "\n"))
		}
	}
}

// TestChiConcurrentClients keeps several keep-alive connections busy on
// both engines: URL parameters must never leak between requests that
// share a connection (the adapter reuses the Request per connection).
func TestChiConcurrentClients(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, chiRouter(io.Discard))
			c := newClient(t)
			errs := make(chan error, 8)
			for g := range 8 {
				go func() {
					for i := range 50 {
						id := fmt.Sprintf("%d-%d", g, i)
						resp, err := c.Get(base + "/api/v1/things/" + id + "?q=" + id)
						if err != nil {
							errs <- err
							return
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if want := "thing=" + id + " q=" + id + " route=/api/v1/things/{name}"; string(b) != want {
							errs <- fmt.Errorf("got %q, want %q", b, want)
							return
						}
					}
					errs <- nil
				}()
			}
			timeout := time.After(30 * time.Second)
			for range 8 {
				select {
				case err := <-errs:
					if err != nil {
						t.Fatal(err)
					}
				case <-timeout:
					t.Fatal("clients did not finish")
				}
			}
		})
	}
}
