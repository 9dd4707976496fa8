package client

import (
	"crypto/tls"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Request.Cancel (deprecated, still closed by older code) is honoured as
// the context is, on every protocol: closed while the head is awaited,
// the request fails at once; closed while the body is read, the read
// fails; never closed, nothing waits on it once the body is done.
func TestRequestCancel(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow-head":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/slow-body":
			io.WriteString(w, "part")
			http.NewResponseController(w).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			io.WriteString(w, "ok")
		}
	})
	plain, tlsSrv, h2c, pool := testServers(t, h)
	t.Cleanup(func() { close(release) })
	modes := map[string]struct {
		url string
		tr  *Transport
	}{
		"h1":    {plain.URL, &Transport{}},
		"https": {tlsSrv.URL, &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, Protocols: h1Protocols()}},
		"h2":    {tlsSrv.URL, &Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
		"h2c":   {h2c.URL, h2cTransport(t)},
	}
	for name, m := range modes {
		t.Run(name, func(t *testing.T) {
			t.Cleanup(m.tr.CloseIdleConnections)
			// Closed while the head is awaited.
			cancel := make(chan struct{})
			req, _ := http.NewRequest("GET", m.url+"/slow-head", nil)
			//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
			req.Cancel = cancel
			time.AfterFunc(100*time.Millisecond, func() { close(cancel) })
			start := time.Now()
			_, err := m.tr.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), "canceled") {
				t.Errorf("Cancel closed before the head: %v, want a canceled request", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the request ended %v after its Cancel closed", d)
			}
			// Closed while the body is read.
			cancel = make(chan struct{})
			req, _ = http.NewRequest("GET", m.url+"/slow-body", nil)
			//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
			req.Cancel = cancel
			resp, err := m.tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			part := make([]byte, 4)
			io.ReadFull(resp.Body, part)
			close(cancel)
			if _, err := io.ReadAll(resp.Body); err == nil || !strings.Contains(err.Error(), "canceled") {
				t.Errorf("Cancel closed during the body: %v, want a canceled read", err)
			}
			resp.Body.Close()
			// Never closed: once the body is done, nothing is left waiting.
			base := runtime.NumGoroutine()
			for range 20 {
				req, _ = http.NewRequest("GET", m.url+"/", nil)
				//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
				req.Cancel = make(chan struct{})
				resp, err := m.tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			deadline := time.Now().Add(5 * time.Second)
			n := runtime.NumGoroutine()
			for n > base+5 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				n = runtime.NumGoroutine()
			}
			if n > base+5 {
				t.Errorf("%d goroutines 5 s after 20 requests whose Cancel never closed, %d before", n, base)
			}
		})
	}
}
