package compat_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// promApp is an application instrumented the way promhttp's docs show:
// every InstrumentHandler* middleware around a small mux, and the
// registry served at /metrics (itself counted by InstrumentMetricHandler).
func promApp(reg *prometheus.Registry) http.Handler {
	inFlight := prometheus.NewGauge(prometheus.GaugeOpts{Name: "app_in_flight_requests"})
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "app_requests_total"}, []string{"code", "method"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "app_request_duration_seconds"}, []string{"code", "method"})
	ttwh := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "app_time_to_write_header_seconds"}, []string{"code"})
	reqSize := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "app_request_size_bytes",
		Buckets: []float64{100, 1000, 10000}}, []string{"method"})
	respSize := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "app_response_size_bytes",
		Buckets: []float64{10, 100, 1000, 10000}}, []string{"code"})
	reg.MustRegister(inFlight, counter, duration, ttwh, reqSize, respSize)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "stored %d bytes", n)
	})
	mux.HandleFunc("GET /flush", func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		for i := range 3 {
			fmt.Fprintf(w, "part %d\n", i)
			if ok {
				f.Flush()
			}
		}
		fmt.Fprintf(w, "flusher=%v", ok)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, newPattern(5000))
	})
	var app http.Handler = mux
	app = promhttp.InstrumentHandlerTimeToWriteHeader(ttwh, app)
	app = promhttp.InstrumentHandlerResponseSize(respSize, app)
	app = promhttp.InstrumentHandlerRequestSize(reqSize, app)
	app = promhttp.InstrumentHandlerCounter(counter, app)
	app = promhttp.InstrumentHandlerDuration(duration, app)
	app = promhttp.InstrumentHandlerInFlight(inFlight, app)

	root := http.NewServeMux()
	root.Handle("/metrics", promhttp.InstrumentMetricHandler(reg, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	root.Handle("/", app)
	return root
}

// promTraffic is what the client does before scraping.
var promTraffic = []struct {
	method, path string
	body         int
	status       int
}{
	{"GET", "/ok", 0, 200}, {"GET", "/ok", 0, 200}, {"GET", "/ok", 0, 200},
	{"POST", "/items", 10, 201}, {"POST", "/items", 3000, 201},
	{"GET", "/missing", 0, 404},
	{"GET", "/flush", 0, 200},
	{"GET", "/big", 0, 200},
}

// promSummary lists the app_* and promhttp_metric_handler_* series of a
// scrape with what does not depend on timing: counter and gauge values,
// histogram counts, and the sums of the size histograms.
func promSummary(families map[string]*dto.MetricFamily) []string {
	var out []string
	for name, f := range families {
		if !strings.HasPrefix(name, "app_") && !strings.HasPrefix(name, "promhttp_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			series := name + "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.Counter != nil:
				out = append(out, fmt.Sprintf("%s %v", series, m.Counter.GetValue()))
			case m.Gauge != nil:
				out = append(out, fmt.Sprintf("%s %v", series, m.Gauge.GetValue()))
			case m.Histogram != nil && strings.HasSuffix(name, "_bytes"):
				out = append(out, fmt.Sprintf("%s count=%d sum=%v", series, m.Histogram.GetSampleCount(), m.Histogram.GetSampleSum()))
			case m.Histogram != nil:
				out = append(out, fmt.Sprintf("%s count=%d", series, m.Histogram.GetSampleCount()))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestPromhttp serves an application wrapped in promhttp's
// InstrumentHandler* middleware on both engines, makes some requests and
// scrapes /metrics, plain and gzipped, as Prometheus does: both scrapes
// must parse and count exactly the requests made, with the same series
// on both engines.
func TestPromhttp(t *testing.T) {
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, promApp(prometheus.NewRegistry()))
			c := newClient(t)
			for _, rq := range promTraffic {
				req, _ := http.NewRequest(rq.method, base+rq.path, io.LimitReader(newPattern(int64(rq.body)), int64(rq.body)))
				if rq.body == 0 {
					req.Body = http.NoBody
				}
				req.ContentLength = int64(rq.body)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", rq.method, rq.path, err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != rq.status {
					t.Errorf("%s %s: status %d, want %d", rq.method, rq.path, resp.StatusCode, rq.status)
				}
				if rq.path == "/flush" {
					obs.add(e.name, "/flush body %q", body)
				}
			}
			for _, enc := range []string{"identity", "gzip"} {
				req, _ := http.NewRequest("GET", base+"/metrics", nil)
				req.Header.Set("Accept-Encoding", enc) // set by hand: the Transport leaves the body as sent
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("scrape %s: %v", enc, err)
				}
				var body io.Reader = resp.Body
				if resp.Header.Get("Content-Encoding") == "gzip" {
					zr, err := gzip.NewReader(resp.Body)
					if err != nil {
						t.Fatalf("scrape %s: %v", enc, err)
					}
					body = zr
				}
				parser := expfmt.NewTextParser(model.UTF8Validation)
				families, err := parser.TextToMetricFamilies(body)
				resp.Body.Close()
				if err != nil {
					t.Errorf("scrape %s: %v", enc, err)
				}
				obs.add(e.name, "scrape Accept-Encoding=%s: %d Content-Type=%q Content-Encoding=%q parse error %v",
					enc, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"), err)
				summary := promSummary(families)
				for _, s := range summary {
					obs.add(e.name, "  %s", s)
				}
				for _, want := range []string{
					"app_requests_total{code=200,method=get} 5",
					"app_requests_total{code=201,method=post} 2",
					"app_requests_total{code=404,method=get} 1",
					"app_response_size_bytes{code=200} count=5 sum=5039",
					"app_in_flight_requests{} 0",
					"app_request_duration_seconds{code=200,method=get} count=5",
				} {
					if !slices.Contains(summary, want) {
						t.Errorf("scrape %s lacks %s:\n%s", enc, want, strings.Join(summary, "\n"))
					}
				}
			}
		})
	}
	obs.compare(t, "scrapes")
}
