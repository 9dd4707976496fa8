package load

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in     string
		metric string
		op     string
		bound  float64
		share  bool
	}{
		{"p99<50ms", "p99", "<", 50000, false},
		{"p99.9 <= 200ms", "p99.9", "<=", 200000, false},
		{"max<1.5s", "max", "<", 1.5e6, false},
		{"mean<800µs", "mean", "<", 800, false},
		{"errors<0.1%", "errors", "<", 0.001, true},
		{"errors<5", "errors", "<", 5, false},
		{"rate>99%", "rate", ">", 0.99, true},
		{"rps>=1000", "rps", ">=", 1000, false},
		{"status:5xx<1", "status:5xx", "<", 1, false},
		{"status:503<0.5%", "status:503", "<", 0.005, true},
	} {
		th, err := parseThreshold(Threshold(tc.in))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if th.metric != tc.metric || th.op != tc.op || th.bound != tc.bound || th.share != tc.share {
			t.Errorf("%q: %+v, want %s %s %v share=%v", tc.in, th, tc.metric, tc.op, tc.bound, tc.share)
		}
	}
	// A fraction without % on a count would silently mean 0: refused,
	// with a hint; whole counts, shares and fractional rates still parse.
	for _, tc := range []struct{ in, hint string }{
		{"errors<0.01", `errors is a count; write errors<1% for a share or errors<1 for a count`},
		{"errors <= 0.5", `errors is a count; write errors<=50% for a share or errors<=0 for a count`},
		{"status:5xx<0.1", `status:5xx is a count; write status:5xx<10% for a share or status:5xx<1 for a count`},
		{"status:503>2.5", `status:503 is a count; write a whole number, e.g. status:503>2`},
		{"errors<0.07", `write errors<7% for a share`},
	} {
		err := Threshold(tc.in).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.hint)
		}
	}
	for _, good := range []string{"errors<0", "errors<1", "errors<2.0", "errors<0.01%", "status:5xx<0.5%", "rps>1000.5"} {
		if err := Threshold(good).Validate(); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"", "p99", "<50ms", "p99<50", "p0<1ms", "p101<1ms", "pxx<1ms", "p99<-5ms", "errors<x",
		"rate>99", "rps>5%", "status:6xx<1", "status:5x<1", "latency<5ms", "errors<NaN"} {
		if err := Threshold(bad).Validate(); err == nil {
			t.Errorf("%q parsed", bad)
		}
		// Run refuses what Validate refuses, with the same error.
		if _, err := Run(context.Background(), Config{URL: "http://x/", Thresholds: []Threshold{"p99<1s", Threshold(bad)}}); err == nil || err.Error() != Threshold(bad).Validate().Error() {
			t.Errorf("Run with threshold %q: err %v, want Validate's", bad, err)
		}
	}
}

func TestThresholdEvaluate(t *testing.T) {
	res := &Result{Sent: 1000, Requests: 990, Errors: 10, ReqPerS: 500, Rate: 100, AchievedRate: 99.5,
		Latency: Percentiles{Count: 990, Max: 120000, Mean: 2500},
		Status:  map[string]int64{"200": 980, "503": 6, "500": 4}}
	lat := newHist()
	for i := range 990 {
		lat.RecordValue(int64(1000 + i)) // 1.000 to 1.989 ms
	}
	for _, tc := range []struct {
		expr     string
		pass     bool
		measured string
	}{
		{"p50<2ms", true, "1.494ms"},
		{"p99<1ms", false, "1.979ms"},
		{"max<100ms", false, "120ms"},
		{"mean<3ms", true, "2.5ms"},
		{"errors<1%", false, "1%"},
		{"errors<=10", true, "10"},
		{"rate>99%", true, "99.5%"},
		{"rps>600", false, "500.0"},
		{"status:5xx<1", false, "10"},
		{"status:503<=6", true, "6"},
		{"status:5xx<2%", true, "1.01%"},
	} {
		th, err := parseThreshold(Threshold(tc.expr))
		if err != nil {
			t.Fatal(err)
		}
		got := th.evaluate(res, lat)
		if got.Pass != tc.pass || got.Measured != tc.measured {
			t.Errorf("%s: pass=%v measured %s, want %v %s", tc.expr, got.Pass, got.Measured, tc.pass, tc.measured)
		}
	}
	closed := *res
	closed.Rate = 0
	th, _ := parseThreshold("rate>99%")
	if got := th.evaluate(&closed, lat); got.Pass || !strings.Contains(got.Note, "closed-loop") {
		t.Errorf("rate in closed loop: %+v, want a failure that says why", got)
	}
}

// TestShardedThresholdsAreOneRun: thresholds evaluated on the merge of 4
// shards (the fake clock makes every time exact) give what they give on
// the same load run as one process.
func TestShardedThresholdsAreOneRun(t *testing.T) {
	const shards = 4
	ths := []Threshold{"p50<1ms", "p99<=350us", "p99.9<300us", "max<1s", "errors<0.1%", "rate>99%", "rps>900", "status:2xx>999", " status:5xx<1 "}
	cfg := Config{URL: "http://fake/", Connections: 10, Rate: 1000, Duration: time.Second, RunID: "r1", Thresholds: ths}
	singles, _ := runOnFakeClock(t, cfg, 1, 300*time.Microsecond)
	parts, _ := runOnFakeClock(t, cfg, shards, 300*time.Microsecond)
	if t.Failed() {
		return
	}
	single := singles[0]
	m, err := Merge(parts...)
	if err != nil {
		t.Fatal(err)
	}
	if len(single.Thresholds) != len(ths) || !slices.Equal(m.Thresholds, single.Thresholds) {
		t.Fatalf("merged thresholds differ from the single run's:\nmerged %+v\nsingle %+v", m.Thresholds, single.Thresholds)
	}
	var verdicts []string
	for _, tr := range m.Thresholds {
		verdicts = append(verdicts, string(tr.Threshold)+"="+map[bool]string{true: "pass", false: "fail"}[tr.Pass])
	}
	// Every request takes 300µs: p99.9<300us fails, the rest pass.
	want := "p50<1ms=pass p99<=350us=pass p99.9<300us=fail max<1s=pass errors<0.1%=pass rate>99%=pass rps>900=pass status:2xx>999=pass status:5xx<1=pass"
	if got := strings.Join(verdicts, " "); got != want {
		t.Errorf("verdicts:\n got %s\nwant %s", got, want)
	}
	// A shard alone carries the thresholds too, evaluated on its part.
	if len(parts[0].Thresholds) != len(ths) {
		t.Errorf("shard 0 carries %d thresholds, want %d", len(parts[0].Thresholds), len(ths))
	}
}
