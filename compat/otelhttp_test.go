package compat_test

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// traceParent is an incoming W3C trace context: the server span must join
// this trace, as a child of this span.
const (
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentID    = "00f067aa0ba902b7"
	traceParent = "00-" + traceID + "-" + parentID + "-01"
)

func otelOptions(tp trace.TracerProvider) []otelhttp.Option {
	return []otelhttp.Option{
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}),
	}
}

func usersHandler(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "user %s", r.PathValue("id")+chiParam(r, "id"))
}

func ordersHandler(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "order %s", b)
}

func failHandler(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "database down", http.StatusInternalServerError)
}

func chiParam(r *http.Request, name string) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		return rc.URLParam(name)
	}
	return ""
}

// otelChi is otelhttp around a chi router, with the usual middleware that
// names the span after chi's route once routing is done (chi does not set
// Request.Pattern, so otelhttp cannot see the route itself).
func otelChi(tp trace.TracerProvider) http.Handler {
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if route := chi.RouteContext(r.Context()).RoutePattern(); route != "" {
				span := trace.SpanFromContext(r.Context())
				span.SetAttributes(attribute.String("http.route", route))
				span.SetName(r.Method + " " + route)
			}
		})
	})
	r.Get("/users/{id}", usersHandler)
	r.Post("/orders", ordersHandler)
	r.Get("/fail", failHandler)
	return otelhttp.NewHandler(r, "chi-server", otelOptions(tp)...)
}

// otelMux is net/http's ServeMux with otelhttp inside each route, where
// Request.Pattern is already set: otelhttp records http.route itself.
func otelMux(tp trace.TracerProvider) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /users/{id}", otelhttp.NewHandler(http.HandlerFunc(usersHandler), "users", otelOptions(tp)...))
	mux.Handle("POST /orders", otelhttp.NewHandler(http.HandlerFunc(ordersHandler), "orders", otelOptions(tp)...))
	mux.Handle("GET /fail", otelhttp.NewHandler(http.HandlerFunc(failHandler), "fail", otelOptions(tp)...))
	return mux
}

type otelRequest struct {
	method, path, body string
	traced             bool // send traceParent
	status             int
	route              string // "" when no route matched
	spanStatus         codes.Code
}

var otelRequests = []otelRequest{
	{method: "GET", path: "/users/42", traced: true, status: 200, route: "/users/{id}", spanStatus: codes.Unset},
	{method: "GET", path: "/users/7?expand=1", status: 200, route: "/users/{id}", spanStatus: codes.Unset},
	{method: "POST", path: "/orders", body: "item=3", traced: true, status: 201, route: "/orders", spanStatus: codes.Unset},
	{method: "GET", path: "/fail", status: 500, route: "/fail", spanStatus: codes.Error},
}

// spanSummary is what a span says about a request, without what differs
// run to run (span IDs, times, ports).
func spanSummary(s sdktrace.ReadOnlySpan) string {
	var attrs []string
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case "server.port", "network.peer.port":
			continue
		}
		attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
	}
	sort.Strings(attrs)
	parent := "root" // a new random trace
	if s.Parent().IsValid() {
		parent = "trace " + s.SpanContext().TraceID().String() + ", child of " + s.Parent().SpanID().String()
	}
	return fmt.Sprintf("%q kind=%s status=%s %s\n  %s", s.Name(), s.SpanKind(), s.Status().Code,
		parent, strings.Join(attrs, "\n  "))
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestOtelhttp serves otelhttp-instrumented handlers (around a chi router,
// and inside ServeMux routes) on both engines and checks that every
// request records one server span with the right route, method, status,
// path and trace parent, and that the spans are the same on both.
func TestOtelhttp(t *testing.T) {
	for _, variant := range []struct {
		name    string
		handler func(trace.TracerProvider) http.Handler
	}{
		{"chi", otelChi},
		{"ServeMux", otelMux},
	} {
		t.Run(variant.name, func(t *testing.T) {
			spans := map[string][]string{}
			for _, e := range engines {
				t.Run(e.name, func(t *testing.T) {
					rec := tracetest.NewSpanRecorder()
					tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
					base := e.serve(t, variant.handler(tp))
					c := newClient(t)
					for i, rq := range otelRequests {
						req, err := http.NewRequest(rq.method, base+rq.path, strings.NewReader(rq.body))
						if err != nil {
							t.Fatal(err)
						}
						if rq.traced {
							req.Header.Set("Traceparent", traceParent)
						}
						resp, err := c.Do(req)
						if err != nil {
							t.Fatal(err)
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != rq.status {
							t.Errorf("%s %s: status %d, want %d", rq.method, rq.path, resp.StatusCode, rq.status)
						}
						waitFor(t, "the request's span", func() bool { return len(rec.Ended()) >= i+1 })
						ended := rec.Ended()
						if len(ended) != i+1 {
							t.Fatalf("%d spans after %d requests", len(ended), i+1)
						}
						s := ended[i]
						checkSpan(t, s, rq)
						spans[e.name] = append(spans[e.name], spanSummary(s))
					}
				})
			}
			compareLines(t, "spans", spans["hotpath"], spans["net/http"])
		})
	}
}

func checkSpan(t *testing.T, s sdktrace.ReadOnlySpan, rq otelRequest) {
	t.Helper()
	if s.SpanKind() != trace.SpanKindServer {
		t.Errorf("%s %s: span kind %s", rq.method, rq.path, s.SpanKind())
	}
	if want := rq.method + " " + rq.route; s.Name() != want {
		t.Errorf("%s %s: span name %q, want %q", rq.method, rq.path, s.Name(), want)
	}
	if s.Status().Code != rq.spanStatus {
		t.Errorf("%s %s: span status %s, want %s", rq.method, rq.path, s.Status().Code, rq.spanStatus)
	}
	want := map[string]string{
		"http.route":                rq.route,
		"http.request.method":       rq.method,
		"http.response.status_code": fmt.Sprint(rq.status),
		"url.path":                  strings.SplitN(rq.path, "?", 2)[0],
		"network.protocol.version":  strings.TrimPrefix(reqProto, "HTTP/"), // 1.1, or 2.0 in h2 mode
		"server.address":            "127.0.0.1",
	}
	for k, v := range want {
		got, ok := attr(s, k)
		if !ok || got.String() != v {
			t.Errorf("%s %s: %s = %q (present %v), want %q", rq.method, rq.path, k, got.String(), ok, v)
		}
	}
	if rq.traced {
		if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != parentID {
			t.Errorf("%s %s: span not joined to the incoming trace: %s", rq.method, rq.path, spanSummary(s))
		}
	} else if s.Parent().IsValid() {
		t.Errorf("%s %s: untraced request has a parent: %s", rq.method, rq.path, spanSummary(s))
	}
}
