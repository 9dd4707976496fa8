package load

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The cycle sends each target as often as its weight, spread evenly: no
// target waits a whole cycle behind another.
func TestMixCycle(t *testing.T) {
	u := &target{}
	u.url, _ = url.Parse("http://h/")
	m, err := newMix([]Target{{URL: "http://h/a", Weight: 5}, {URL: "http://h/b", Weight: 3}, {URL: "http://h/c", Weight: 2}}, u)
	if err != nil {
		t.Fatal(err)
	}
	var n [3]int
	for _, i := range m.seq {
		n[i]++
	}
	if len(m.seq) != 10 || n != [3]int{5, 3, 2} || m.seq[0] != 0 || m.seq[1] == m.seq[0] && m.seq[2] == m.seq[0] {
		t.Errorf("cycle %v", m.seq)
	}
	if _, err := newMix([]Target{{URL: "http://other/a"}}, u); err == nil {
		t.Error("a target on another host was accepted")
	}
}

// TestMixDeliversWeights: a weighted 3-target mix (GET, POST with a file
// body, PUT) on both engines, 100,000 requests on the fast one: each
// target gets its weight's share within 1%, the server sees each
// target's method, path and body, and the per-target figures add up to
// the totals.
func TestMixDeliversWeights(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen[r.Method+" "+r.URL.Path+" "+string(b)]++
		mu.Unlock()
		if r.Method == "PUT" {
			w.WriteHeader(201)
		}
	}))
	defer srv.Close()
	targets := []Target{
		{Method: "GET", URL: srv.URL + "/a", Weight: 5},
		{Method: "POST", URL: srv.URL + "/b", Body: []byte(`{"a":1}`), Header: http.Header{"Content-Type": {"application/json"}}, Weight: 3},
		{Method: "PUT", URL: srv.URL + "/c", Weight: 2},
	}
	for _, tc := range []struct {
		engine Engine
		n      int64
	}{{EngineFast, 100000}, {EngineNetHTTP, 2000}} {
		if raceEnabled {
			tc.n /= 10
		}
		t.Run(string(tc.engine), func(t *testing.T) {
			mu.Lock()
			clear(seen)
			mu.Unlock()
			res, err := Run(context.Background(), Config{Targets: targets, Connections: 8, Requests: tc.n, Engine: tc.engine})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Targets) != 3 {
				t.Fatalf("%d targets in the result", len(res.Targets))
			}
			var sent, reqs int64
			for i, tr := range res.Targets {
				want := float64(tc.n) * float64(targets[i].Weight) / 10
				if math.Abs(float64(tr.Sent)-want) > 0.01*want {
					t.Errorf("%s %s: %d sent, want %v within 1%%", tr.Method, tr.URL, tr.Sent, want)
				}
				key := fmt.Sprintf("%s %s %s", targets[i].Method, strings.TrimPrefix(targets[i].URL, srv.URL), targets[i].Body)
				mu.Lock()
				got := seen[key]
				mu.Unlock()
				if int64(got) != tr.Requests {
					t.Errorf("%s: the server saw %d, the result says %d responses", key, got, tr.Requests)
				}
				if tr.Latency == nil || tr.Latency.Count != tr.Requests {
					t.Errorf("%s: latency %+v for %d responses", key, tr.Latency, tr.Requests)
				}
				sent += tr.Sent
				reqs += tr.Requests
			}
			if sent != res.Sent || reqs != res.Requests || res.Targets[2].Status["201"] != res.Targets[2].Requests {
				t.Errorf("per target %d sent %d responses, totals %d %d; PUT statuses %v", sent, reqs, res.Sent, res.Requests, res.Targets[2].Status)
			}
			m, err := Merge(res, res)
			if err != nil || m.Targets[1].Sent != 2*res.Targets[1].Sent || m.Targets[1].Latency.Count != 2*res.Targets[1].Latency.Count {
				t.Errorf("merge: %v %+v", err, m.Targets)
			}
		})
	}
}
