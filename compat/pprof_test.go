package compat_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// pprofMux registers net/http/pprof's handlers on a mux of its own, as a
// service exposing them on an admin port does.
func pprofMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// pprofBody describes a pprof response body by what does not change run
// to run.
func pprofBody(t *testing.T, path string, body []byte) string {
	switch {
	case path == "/debug/pprof/":
		names := regexp.MustCompile(`href='?([a-z]+)\?debug=1'?`).FindAllSubmatch(body, -1)
		var list []string
		for _, n := range names {
			list = append(list, string(n[1]))
		}
		slices.Sort(list)
		return "index of " + strings.Join(list, ",")
	case strings.HasPrefix(path, "/debug/pprof/profile"), strings.HasPrefix(path, "/debug/pprof/heap"):
		if !bytes.HasPrefix(body, []byte{0x1f, 0x8b}) {
			return fmt.Sprintf("not gzip: %q", body[:min(len(body), 64)])
		}
		p, err := profile.Parse(bytes.NewReader(body)) // gunzips, then decodes the proto
		if err != nil {
			return "unparsable profile: " + err.Error()
		}
		var types []string
		for _, st := range p.SampleType {
			types = append(types, st.Type+"/"+st.Unit)
		}
		s := "gzipped profile of " + strings.Join(types, ",")
		if strings.HasPrefix(path, "/debug/pprof/profile") {
			d := time.Duration(p.DurationNanos)
			if d < 900*time.Millisecond || d > 5*time.Second {
				t.Errorf("CPU profile lasted %v, asked 1s", d)
			}
			s += fmt.Sprintf(", period %v %s", time.Duration(p.Period), p.PeriodType.Type)
		}
		return s
	case path == "/debug/pprof/goroutine?debug=2":
		return fmt.Sprintf("goroutine dump: running goroutine %v, the handler's stack %v",
			regexp.MustCompile(`(?m)^goroutine \d+ \[running\]:$`).Match(body),
			bytes.Contains(body, []byte("net/http/pprof.handler.ServeHTTP")))
	case strings.HasPrefix(path, "/debug/pprof/trace"):
		return fmt.Sprintf("execution trace: header %q", body[:min(len(body), 11)])
	case path == "/debug/pprof/cmdline":
		return fmt.Sprintf("cmdline: %d NUL-separated words", len(bytes.Split(body, []byte{0})))
	}
	return fmt.Sprintf("%q", body)
}

// TestPprof serves net/http/pprof on both engines and fetches what a
// person debugging a service fetches: the index, a one-second CPU
// profile, a heap profile, a full goroutine dump, an execution trace, the
// command line, and an unknown profile's error.
func TestPprof(t *testing.T) {
	paths := []struct {
		path   string
		status int
	}{
		{"/debug/pprof/", 200},
		{"/debug/pprof/profile?seconds=1", 200},
		{"/debug/pprof/heap", 200},
		{"/debug/pprof/goroutine?debug=2", 200},
		{"/debug/pprof/trace?seconds=0.1", 200},
		{"/debug/pprof/cmdline", 200},
		{"/debug/pprof/nothing", 404},
	}
	obs := observed{}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			base := e.serve(t, pprofMux())
			c := newClient(t)
			for _, p := range paths {
				resp, err := c.Get(base + p.path)
				if err != nil {
					t.Errorf("%s: %v", p.path, err)
					obs.add(e.name, "%s → error %s", p.path, errString(err))
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != p.status || err != nil {
					t.Errorf("%s: %d (%v), want %d: %q", p.path, resp.StatusCode, err, p.status, body[:min(len(body), 200)])
				}
				desc := pprofBody(t, p.path, body)
				obs.add(e.name, "%s → %d Content-Type=%q Content-Disposition=%q %s", p.path, resp.StatusCode,
					resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), desc)
				for _, bad := range []string{"not gzip", "unparsable", "false"} {
					if strings.Contains(desc, bad) {
						t.Errorf("%s: %s", p.path, desc)
					}
				}
			}
		})
	}
	obs.compare(t, "responses")
}
