package compat_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A proxy topology: the engine the reverse proxy runs on, and the engine
// of the backend behind it. Each hotpath topology is compared with the
// all-net/http one.
type proxyTopology struct {
	name           string
	proxy, backend engine
}

var (
	hotpathEngine = engines[0]
	netHTTPEngine = engines[1]
	proxyRef      = proxyTopology{"net/http proxy, net/http backend", netHTTPEngine, netHTTPEngine}
	proxyTopos    = []proxyTopology{
		{"hotpath proxy, net/http backend", hotpathEngine, netHTTPEngine},
		{"hotpath proxy, hotpath backend", hotpathEngine, hotpathEngine},
		proxyRef,
	}
)

// reverseProxy is httputil.ReverseProxy to backend as a gateway sets it
// up: X-Forwarded headers, its own Transport, and FlushInterval -1 so
// that a stream reaches the client as the backend writes it.
func reverseProxy(t *testing.T, backend string) http.Handler {
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	tr := protoTransport(&http.Transport{MaxIdleConnsPerHost: 4}) // h2c to the backend in h2 mode
	t.Cleanup(tr.CloseIdleConnections)
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.SetXForwarded()
		},
		Transport:     protoClientCheck(t, tr),
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
}

// proxied runs a scenario through a reverse proxy in every topology and
// compares what the client saw. setup makes the backend's handler and
// the client's scenario, which may share channels; the scenario gets the
// proxy's base URL and reports what it saw line by line with add.
func proxied(t *testing.T, setup func(t *testing.T) (backend http.Handler,
	scenario func(proxyURL string, add func(format string, args ...any)))) {
	obs := map[string][]string{}
	for _, topo := range proxyTopos {
		t.Run(topo.name, func(t *testing.T) {
			backend, scenario := setup(t)
			backendURL := topo.backend.serve(t, backend)
			proxyURL := topo.proxy.serve(t, reverseProxy(t, backendURL))
			scenario(proxyURL, func(format string, args ...any) {
				obs[topo.name] = append(obs[topo.name], fmt.Sprintf(format, args...))
			})
		})
	}
	for _, topo := range proxyTopos {
		if topo.name != proxyRef.name {
			compareLines(t, topo.name, obs[topo.name], obs[proxyRef.name])
		}
	}
}

// TestReverseProxySSE streams server-sent events from a backend through
// the proxy: each event must reach the client before the backend writes
// the next (the backend waits for the client to say it has it).
func TestReverseProxySSE(t *testing.T) {
	const events = 5
	proxied(t, func(t *testing.T) (http.Handler, func(string, func(string, ...any))) {
		next := make(chan struct{}, events)
		backendDone := make(chan string, 1)
		backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sent := 0
			defer func() { backendDone <- fmt.Sprintf("backend sent %d events", sent) }()
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			for i := range events {
				if i > 0 {
					select {
					case <-next:
					case <-time.After(5 * time.Second):
						return // the client never got the last event
					}
				}
				fmt.Fprintf(w, "id: %d\nevent: tick\ndata: event %d\n\n", i, i)
				http.NewResponseController(w).Flush()
				sent++
			}
		})
		return backend, func(proxyURL string, add func(string, ...any)) {
			resp, err := newClient(t).Get(proxyURL + "/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			add("status %d Content-Type=%q Cache-Control=%q Content-Length=%d",
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"), resp.ContentLength)
			br := bufio.NewReader(resp.Body)
			got := 0
			for {
				ev, err := readEvent(br)
				if err != nil {
					add("stream ended: %s (partial %q)", errString(err), ev)
					break
				}
				add("event %q", ev)
				got++
				next <- struct{}{}
			}
			select {
			case s := <-backendDone:
				add("%s", s)
			case <-time.After(5 * time.Second):
				t.Error("the backend handler did not return")
			}
			if got != events {
				t.Errorf("the client got %d events, want %d", got, events)
			}
		}
	})
}

// proxyBig is the size of the bodies sent both ways through the proxy.
const proxyBig = 100 << 20

// TestReverseProxyUpload uploads 100 MB through the proxy to a backend
// that hashes it, streaming on every hop (generated and hashed on the
// fly, never held).
func TestReverseProxyUpload(t *testing.T) {
	proxied(t, func(t *testing.T) (http.Handler, func(string, func(string, ...any))) {
		backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sum, n, err := hashStream(r.Body)
			fmt.Fprintf(w, "backend got Content-Length=%d, read %d bytes, sha256 %s, error %s",
				r.ContentLength, n, sum, errString(err))
		})
		return backend, func(proxyURL string, add func(string, ...any)) {
			req, _ := http.NewRequest("POST", proxyURL+"/upload", newPattern(proxyBig))
			req.ContentLength = proxyBig
			resp, err := newClientTimeout(t, 60*time.Second).Do(req)
			if err != nil {
				add("error %s", errString(err))
				t.Fatalf("upload: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			add("%d %q (%v)", resp.StatusCode, body, err)
			want := fmt.Sprintf("backend got Content-Length=%d, read %d bytes, sha256 %s, error <nil>",
				proxyBig, proxyBig, patternSum(proxyBig))
			if resp.StatusCode != 200 || string(body) != want {
				t.Errorf("%d %q, want 200 %q", resp.StatusCode, body, want)
			}
		}
	})
}

// TestReverseProxyDownload downloads 100 MB through the proxy from a
// backend that generates it, and hashes it as it arrives.
func TestReverseProxyDownload(t *testing.T) {
	proxied(t, func(t *testing.T) (http.Handler, func(string, func(string, ...any))) {
		backend := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(proxyBig))
			io.Copy(w, newPattern(proxyBig))
		})
		return backend, func(proxyURL string, add func(string, ...any)) {
			resp, err := newClientTimeout(t, 60*time.Second).Get(proxyURL + "/download")
			if err != nil {
				add("error %s", errString(err))
				t.Fatalf("download: %v", err)
			}
			sum, n, err := hashStream(resp.Body)
			resp.Body.Close()
			add("%d Content-Type=%q Content-Length=%d: read %d bytes, sha256 %s, error %s",
				resp.StatusCode, resp.Header.Get("Content-Type"), resp.ContentLength, n, sum, errString(err))
			if resp.StatusCode != 200 || n != proxyBig || sum != patternSum(proxyBig) || err != nil {
				t.Errorf("%d: read %d bytes, sha256 %s (%v), want 200, %d bytes, %s", resp.StatusCode, n, sum, err,
					proxyBig, patternSum(proxyBig))
			}
		}
	})
}

// TestReverseProxyWebSocket runs the gorilla/websocket session of
// TestGorillaWebSocket through the proxy, which hands the upgrade over
// by hijacking the client's connection.
func TestReverseProxyWebSocket(t *testing.T) {
	skipInH2(t, wsNoH2)
	proxied(t, func(t *testing.T) (http.Handler, func(string, func(string, ...any))) {
		seen := make(chan []string, 1)
		return gorillaEcho(seen), func(proxyURL string, add func(string, ...any)) {
			var lines []string
			gorillaSession(t, "ws"+strings.TrimPrefix(proxyURL, "http")+"/ws", seen, func(l string) {
				lines = append(lines, l)
				add("%s", l)
			})
			got := strings.Join(lines, "\n")
			for _, w := range wsWant(`client got close 4000 "server done"`, `server got close 4001 "client ack"`) {
				if !strings.Contains(got, w) {
					t.Errorf("missing %s in:\n%s", w, got)
				}
			}
		}
	})
}

// TestReverseProxyTrailers passes a backend's trailers through the
// proxy: declared in the Trailer header, and undeclared ones set with
// http.TrailerPrefix after the body was flushed (how gRPC servers send
// grpc-status).
func TestReverseProxyTrailers(t *testing.T) {
	proxied(t, func(t *testing.T) (http.Handler, func(string, func(string, ...any))) {
		mux := http.NewServeMux()
		mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Checksum, X-Count")
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "body with declared trailers\n")
			w.Header().Set("X-Checksum", "abc123")
			w.Header().Set("X-Count", "1")
		})
		mux.HandleFunc("/flushed", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "body, flushed\n")
			http.NewResponseController(w).Flush()
			io.WriteString(w, "more body\n")
			w.Header().Set(http.TrailerPrefix+"X-Status", "0")
			w.Header().Set(http.TrailerPrefix+"X-Message", "all good")
		})
		return mux, func(proxyURL string, add func(string, ...any)) {
			c := newClient(t)
			for _, path := range []string{"/declared", "/flushed"} {
				resp, err := c.Get(proxyURL + path)
				if err != nil {
					add("%s: error %s", path, errString(err))
					t.Errorf("%s: %v", path, err)
					continue
				}
				announced := sortedKeys(resp.Trailer)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				var trailers []string
				for _, k := range sortedKeys(resp.Trailer) {
					trailers = append(trailers, k+"="+strings.Join(resp.Trailer[k], ","))
				}
				add("%s: %d Content-Length=%d %q (%v) announced trailers %q, trailers %q",
					path, resp.StatusCode, resp.ContentLength, body, err, announced, trailers)
				want := map[string][]string{
					"/declared": {"X-Checksum=abc123", "X-Count=1"},
					"/flushed":  {"X-Message=all good", "X-Status=0"},
				}[path]
				if !slices.Equal(trailers, want) {
					t.Errorf("%s: trailers %q, want %q", path, trailers, want)
				}
			}
		}
	})
}

func sortedKeys(h http.Header) []string {
	var keys []string
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
