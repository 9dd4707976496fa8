package compat_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sort"
	"strings"
	"testing"

	"github.com/hotpathhq/hotpath/client"
	"go.opentelemetry.io/contrib/instrumentation/net/http/httptrace/otelhttptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// otelhttptrace builds per-phase spans (getconn, connect, tls, headers,
// send, receive) from net/http's httptrace hooks, as APM agents do. On
// HTTP/1.1, HTTPS and HTTP/2, the same two requests (a new connection,
// then a reused one) give the same spans, with the same parents and the
// same reuse attributes, through hotpath's client.Transport as through
// net/http's: every hook it listens to fires, and none is left open that
// net/http's closes.
func TestOtelHTTPTraceSpansAsNetHTTP(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	plain := httptest.NewServer(h)
	defer plain.Close()
	overTLS := httptest.NewUnstartedServer(h)
	overTLS.EnableHTTP2 = true
	overTLS.StartTLS()
	defer overTLS.Close()
	pool := overTLS.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	h1 := new(http.Protocols)
	h1.SetHTTP1(true)
	h2 := new(http.Protocols)
	h2.SetHTTP2(true)

	for _, mode := range []struct {
		name  string
		url   string
		proto *http.Protocols
	}{
		{"h1", plain.URL, nil},
		{"https", overTLS.URL, h1},
		{"h2", overTLS.URL, h2},
	} {
		t.Run(mode.name, func(t *testing.T) {
			newStd := func() *http.Transport {
				return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: mode.proto, ForceAttemptHTTP2: true}
			}
			std := newStd()
			defer std.CloseIdleConnections()
			ours := client.FromHTTPTransport(newStd())
			defer ours.CloseIdleConnections()
			want := otelSpans(t, std, mode.url)
			got := otelSpans(t, ours, mode.url)
			if got != want {
				t.Errorf("spans through client.Transport:\n%s\nthrough net/http's transport:\n%s", got, want)
			}
			if !strings.Contains(want, "http.getconn") || !strings.Contains(want, "http.send") {
				t.Fatalf("net/http's spans lack the phases the test compares:\n%s", want)
			}
		})
	}
}

// otelSpans makes two requests through rt, each under a root span with
// otelhttptrace's hooks, and describes the spans they made: name, parent,
// reuse attributes, whether it ended, sorted (net/http's read and write
// loops race, so start order is not compared).
func otelSpans(t *testing.T, rt http.RoundTripper, url string) string {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	c := &http.Client{Transport: rt}
	var lines []string
	for i := range 2 {
		ctx, root := tp.Tracer("compat").Start(context.Background(), fmt.Sprintf("request-%d", i))
		ctx = httptrace.WithClientTrace(ctx, otelhttptrace.NewClientTrace(ctx, otelhttptrace.WithTracerProvider(tp), otelhttptrace.WithoutHeaders()))
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "hello" {
			t.Fatalf("body %q, %v", b, err)
		}
		resp.Body.Close()
		root.End()
	}
	names := map[string]string{} // span ID → name
	for _, s := range rec.Started() {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	ended := map[string]bool{}
	for _, s := range rec.Ended() {
		ended[s.SpanContext().SpanID().String()] = true
	}
	for _, s := range rec.Started() {
		line := s.Name() + " parent=" + names[s.Parent().SpanID().String()]
		for _, a := range s.Attributes() {
			if k := string(a.Key); k == "http.conn.reused" || k == "http.conn.wasidle" {
				line += " " + k + "=" + a.Value.String()
			}
		}
		if !ended[s.SpanContext().SpanID().String()] {
			line += " (not ended)"
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
