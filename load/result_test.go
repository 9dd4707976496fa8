package load

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// resultOf builds a one-run Result from latencies: request i starts i ms
// after the start and takes lats[i].
func resultOf(t *testing.T, lats []time.Duration, status int) *Result {
	t.Helper()
	cfg, tg, err := Config{URL: "http://example.com/", Connections: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tl := &timeline{start: start}
	rec := newRecorder(tl, false)
	for i, d := range lats {
		s := sample{start: start.Add(time.Duration(i) * time.Millisecond), status: status, proto: protoHTTP11, reused: i > 0, bytesIn: 100}
		s.end, s.firstByte = s.start.Add(d), s.start.Add(d/2)
		rec.add(&s)
	}
	rec.addConn(0, 50*time.Microsecond, 0)
	rec.flushWindow()
	r := &runner{start: start}
	return buildResult(&cfg, &tg, []*recorder{rec}, tl, r, time.Duration(len(lats))*time.Millisecond, cpuUsage{user: time.Millisecond})
}

func spread(n int, from, step time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = from + time.Duration(i)*step
	}
	return out
}

// TestMergeExact: merging runs gives the histogram of all their requests
// together, bucket for bucket, not an average of percentiles. Inputs go
// through their JSON form, as `hotpath load merge` reads them.
func TestMergeExact(t *testing.T) {
	a := spread(3000, 100*time.Microsecond, time.Microsecond)  // 3 s of 100-3099 µs
	b := spread(1000, 5*time.Millisecond, 37*time.Microsecond) // 1 s of 5-42 ms
	ra, rb := resultOf(t, a, 200), resultOf(t, b, 503)
	all := resultOf(t, append(append([]time.Duration(nil), a...), b...), 200)

	var runs []*Result
	for _, r := range []*Result{ra, rb} {
		var buf bytes.Buffer
		if err := r.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := ReadResult(&buf)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, back)
	}
	m, err := Merge(runs...)
	if err != nil {
		t.Fatal(err)
	}
	hm, _ := m.latencyHist()
	hall, _ := all.latencyHist()
	if !hm.Equals(hall) {
		t.Error("merged latency histogram differs from the histogram of all requests")
	}
	if m.Latency != all.Latency {
		t.Errorf("merged percentiles %+v, want %+v", m.Latency, all.Latency)
	}
	if m.Sources != 2 || m.Requests != 4000 || m.Status["200"] != 3000 || m.Status["503"] != 1000 || m.Conns.Opened != 2 || m.BytesIn != 400_000 {
		t.Errorf("merged counts: sources %d requests %d status %v opened %d bytes %d", m.Sources, m.Requests, m.Status, m.Conns.Opened, m.BytesIn)
	}
	// Timeline: each second (of completion) adds up the runs' windows.
	perSec := map[int]int64{}
	for _, r := range []*Result{ra, rb} {
		for _, w := range r.Timeline {
			perSec[w.T] += w.Requests
		}
	}
	var total int64
	for _, w := range m.Timeline {
		total += w.Requests
		if w.Requests != perSec[w.T] {
			t.Errorf("merged second %d: %d requests, want %d", w.T, w.Requests, perSec[w.T])
		}
	}
	if total != 4000 || len(m.Timeline) != len(perSec) {
		t.Errorf("merged timeline holds %d requests in %d windows, want 4000 in %d", total, len(m.Timeline), len(perSec))
	}
	if _, err := Merge(ra, stallRun(t, 1000)); err == nil || !strings.Contains(err.Error(), "cannot merge") {
		t.Errorf("merging closed- and open-loop runs: err %v", err)
	}
	// Merging is associative: ((a b) b) == (a (b b)).
	m1, _ := Merge(m, rb)
	bb, _ := Merge(rb, rb)
	m2, _ := Merge(ra, bb)
	if m1.Latency != m2.Latency || m1.Requests != m2.Requests {
		t.Errorf("merge not associative: %+v vs %+v", m1.Latency, m2.Latency)
	}
}

// TestJSONRoundTrip: a result read back from its JSON equals the
// original, and its JSON matches schema.json.
func TestJSONRoundTrip(t *testing.T) {
	for name, res := range map[string]*Result{"closed": stallRun(t, 0), "open": stallRun(t, 1000), "synthetic": resultOf(t, spread(10, time.Millisecond, time.Millisecond), 200)} {
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		raw := buf.Bytes()
		back, err := ReadResult(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, res) {
			t.Errorf("%s: round trip changed the result:\n%+v\n%+v", name, back, res)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var errs []string
		validate(schema(t), doc, "$", &errs)
		for _, e := range errs {
			t.Errorf("%s: %s", name, e)
		}
	}
	if _, err := ReadResult(strings.NewReader(`{"schema":"other/9"}`)); err == nil {
		t.Error("ReadResult accepted another schema")
	}
	if _, err := ReadResult(strings.NewReader(`{"schema":"hotpath-load/1","histograms":{"latency":"!!"}}`)); err == nil {
		t.Error("ReadResult accepted a bad histogram")
	}
}

//go:embed schema.json
var schemaJSON []byte

func schema(t *testing.T) map[string]any {
	var s map[string]any
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return s
}

// validate checks doc against the subset of JSON Schema schema.json uses:
// type, const, enum, properties, required, additionalProperties, items
// and local $ref.
func validate(s map[string]any, doc any, path string, errs *[]string) {
	root := s
	var check func(s map[string]any, v any, path string)
	check = func(s map[string]any, v any, path string) {
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/$defs/")
			check(root["$defs"].(map[string]any)[name].(map[string]any), v, path)
			return
		}
		fail := func(format string, a ...any) { *errs = append(*errs, path+": "+fmt.Sprintf(format, a...)) }
		if c, ok := s["const"]; ok && c != v {
			fail("%v, want %v", v, c)
		}
		if e, ok := s["enum"].([]any); ok {
			found := false
			for _, x := range e {
				found = found || x == v
			}
			if !found {
				fail("%v not in %v", v, e)
			}
		}
		if ty, ok := s["type"]; ok {
			types := []any{ty}
			if l, ok := ty.([]any); ok {
				types = l
			}
			match := false
			for _, ty := range types {
				match = match || jsonType(v, ty.(string))
			}
			if !match {
				fail("%T is not %v", v, ty)
			}
		}
		if obj, ok := v.(map[string]any); ok {
			props, _ := s["properties"].(map[string]any)
			for _, r := range asSlice(s["required"]) {
				if _, ok := obj[r.(string)]; !ok {
					fail("missing %q", r)
				}
			}
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if ps, ok := props[k].(map[string]any); ok {
					check(ps, obj[k], path+"."+k)
				} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
					check(ap, obj[k], path+"."+k)
				} else if s["additionalProperties"] == false {
					fail("%q is not in the schema", k)
				}
			}
		}
		if arr, ok := v.([]any); ok {
			if items, ok := s["items"].(map[string]any); ok {
				for i, x := range arr {
					check(items, x, fmt.Sprintf("%s[%d]", path, i))
				}
			}
		}
	}
	check(s, doc, path)
}

func asSlice(v any) []any {
	l, _ := v.([]any)
	return l
}

func jsonType(v any, ty string) bool {
	switch ty {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == float64(int64(f))
	}
	return false
}

// TestMergeRefusesMisaligned: runs of other targets, made at other times
// or for other durations are not one load from several machines: Merge
// refuses them naming the difference; MergeMisaligned merges them with a
// warning. Runs within the slack merge quietly.
func TestMergeRefusesMisaligned(t *testing.T) {
	base := func() *Result {
		r := resultOf(t, spread(100, time.Millisecond, time.Microsecond), 200)
		r.Target, r.DurationS = "http://10.0.0.1:8080/", 5
		return r
	}
	for _, tc := range []struct {
		name   string
		change func(r *Result)
		reason string // "" when the runs line up
	}{
		{"same", func(r *Result) {}, ""},
		{"half a second later", func(r *Result) { r.Start = r.Start.Add(500 * time.Millisecond) }, ""},
		{"other path", func(r *Result) { r.Target = "http://10.0.0.1:8080/json" }, "target http://10.0.0.1:8080/json vs http://10.0.0.1:8080/"},
		{"11 s later", func(r *Result) { r.Start = r.Start.Add(11 * time.Second) }, "started 11s apart"},
		{"shorter", func(r *Result) { r.DurationS = 3 }, "duration 3.00s vs 5.00s"},
		{"long runs, 5 s apart", func(r *Result) { r.Start = r.Start.Add(5 * time.Second) }, ""}, // see below: 60 s runs
	} {
		a, b := base(), base()
		if tc.name == "long runs, 5 s apart" {
			a.DurationS, b.DurationS = 60, 60 // slack 6 s
		}
		tc.change(b)
		m, err := Merge(a, b)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			} else if m.Requests != 200 {
				t.Errorf("%s: merged %d requests, want 200", tc.name, m.Requests)
			}
			continue
		}
		var me *MergeError
		if !errors.As(err, &me) || !me.Misaligned || me.Input != 2 || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: Merge err %v, want a misaligned *MergeError for input 2 naming %q", tc.name, err, tc.reason)
		}
		m, err = MergeMisaligned(a, b)
		if err != nil {
			t.Fatalf("%s: MergeMisaligned: %v", tc.name, err)
		}
		if m.Requests != 200 || len(m.Warnings) == 0 || !strings.Contains(strings.Join(m.Warnings, "\n"), tc.reason) {
			t.Errorf("%s: MergeMisaligned: %d requests, warnings %q", tc.name, m.Requests, m.Warnings)
		}
	}
	// Another mode is refused even by MergeMisaligned.
	_, err := MergeMisaligned(base(), stallRun(t, 1000))
	var me *MergeError
	if !errors.As(err, &me) || me.Misaligned || !strings.Contains(err.Error(), "mode open-loop vs closed-loop") {
		t.Errorf("merging closed- and open-loop runs: %v", err)
	}
}

// JSON round trip: write, read, write again gives the same bytes.
func TestJSONRoundTripBytes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL, Rate: 200, Duration: 300 * time.Millisecond, Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	res.WriteJSON(&a)
	r2, err := ReadResult(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r2.WriteJSON(&b)
	if a.String() != b.String() {
		t.Errorf("round trip differs")
	}
	m, _ := Merge(r2)
	var c bytes.Buffer
	m.WriteJSON(&c)
	if c.String() != a.String() {
		al, cl := strings.Split(a.String(), "\n"), strings.Split(c.String(), "\n")
		for i := range min(len(al), len(cl)) {
			if al[i] != cl[i] {
				t.Errorf("Merge(one run) differs at line %d: %q vs %q", i, al[i], cl[i])
				break
			}
		}
	}
}
