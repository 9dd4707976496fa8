package lab

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the lab's child server, as the
// hotpath binary does, so the child-process path is tested too.
func TestMain(m *testing.M) {
	if kind := os.Getenv(ChildEnv); kind != "" {
		if err := ServeChild(kind, os.Stdin, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var validVerdicts = append(ClaimVerdicts, Info)

// TestExperiments is every experiment's smoke test: a tiny budget, the
// same-work check, then the result's structure.
func TestExperiments(t *testing.T) {
	if len(Experiments()) < 20 {
		t.Fatalf("%d experiments listed, want the 14 exercises of seed 000 and 6 more", len(Experiments()))
	}
	for _, e := range Experiments() {
		t.Run(e.ID, func(t *testing.T) {
			env := &Env{Ctx: context.Background(), Budget: Smoke}
			if e.Check == nil {
				t.Fatal("no same-work check")
			}
			r := runOne(env, e, true) // the same-work check, then the run
			if r.Err != "" {
				t.Fatal(r.Err)
			}
			checkResult(t, e, r, Smoke.Runs)
		})
	}
}

// TestExperimentsList: the list is the report's order (by ID), names
// each experiment once and gives each a Check and a Run.
func TestExperimentsList(t *testing.T) {
	all := Experiments()
	for i, e := range all {
		if e.ID == "" || e.Seed == "" || e.Title == "" || e.Check == nil || e.Run == nil {
			t.Errorf("experiment %d (%q) lacks an ID, Seed, Title, Check or Run", i, e.ID)
		}
		if !strings.HasPrefix(e.ID, e.Seed) {
			t.Errorf("%s: seed %s", e.ID, e.Seed)
		}
		if i > 0 && all[i-1].ID >= e.ID {
			t.Errorf("%s listed after %s: the list must be in ID order, without repeats", e.ID, all[i-1].ID)
		}
	}
}

func checkResult(t *testing.T, e *Experiment, r *Result, runs int) {
	t.Helper()
	if r.ID != e.ID || r.Seed != e.Seed || r.Title == "" {
		t.Errorf("identity: %q %q %q", r.ID, r.Seed, r.Title)
	}
	if r.Setup == "" || r.SameWork == "" || r.Why == "" {
		t.Errorf("missing Setup, SameWork or Why: %+v", r)
	}
	if len(r.Arms) < 2 {
		t.Fatalf("%d arms, want a before and an after", len(r.Arms))
	}
	for _, a := range r.Arms {
		if len(a.Stats) == 0 {
			t.Errorf("arm %q has no measurements", a.Name)
		}
		for name, s := range a.Stats {
			if _, ok := r.metric(name); !ok && name != ConnsPer1k.Name {
				t.Errorf("arm %q: metric %q not declared", a.Name, name)
			}
			if len(s.Values) != runs {
				t.Errorf("arm %q %s: %d values, want %d", a.Name, name, len(s.Values), runs)
			}
			if math.IsNaN(s.Median) || s.Lo > s.Median || s.Median > s.Hi {
				t.Errorf("arm %q %s: bad stat %+v", a.Name, name, s)
			}
		}
	}
	if len(r.Comparisons) == 0 {
		t.Fatal("no comparison")
	}
	claims := 0
	for _, c := range r.Comparisons {
		if r.arm(c.Before) == nil || r.arm(c.After) == nil {
			t.Errorf("comparison %q names unknown arms %q, %q", c.Name, c.Before, c.After)
		}
		if !slices.Contains(validVerdicts, c.Verdict) || c.Why == "" || c.Claim.Quote == "" {
			t.Errorf("comparison %q: verdict %q, why %q, quote %q", c.Name, c.Verdict, c.Why, c.Claim.Quote)
		}
		if math.IsNaN(c.Measured.Median) || c.Measured.Median <= 0 {
			t.Errorf("comparison %q: measured %+v", c.Name, c.Measured)
		}
		if c.Verdict != Info {
			claims++
		}
	}
	if claims == 0 {
		t.Error("no comparison carries a seed claim")
	}
	if r.Verdict != Overall(r.Comparisons) {
		t.Errorf("verdict %q, want Overall's %q", r.Verdict, Overall(r.Comparisons))
	}
}

// TestBenchPair: a micro-benchmark pair measures both arms on time,
// garbage and allocations and compares only the costs the seed claims,
// under the seed's names where it has its own.
func TestBenchPair(t *testing.T) {
	env := &Env{Ctx: context.Background(), Budget: Smoke}
	before, after := newArm("before", ""), newArm("after", "")
	nop := func() error { return nil }
	r, err := env.benchPair(before, nop, after, nop, costClaims{
		Time:   Claim{Quote: "t", Ratio: 2},
		Allocs: Claim{Quote: "a", Ratio: 3},
		Names:  [3]string{2: "allocs"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Arms) != 2 || len(r.Metrics) != 3 {
		t.Fatalf("%d arms, %d metrics; want 2 and 3", len(r.Arms), len(r.Metrics))
	}
	for _, a := range r.Arms {
		for _, m := range microMetrics {
			if len(a.Stats[m.Name].Values) != Smoke.Runs {
				t.Errorf("arm %s: %s has %d runs, want %d", a.Name, m.Name, len(a.Stats[m.Name].Values), Smoke.Runs)
			}
		}
	}
	var got []string
	for _, c := range r.Comparisons {
		got = append(got, c.Name+" "+c.Metric+" "+c.Before+"→"+c.After+" "+c.Claim.Quote)
	}
	want := []string{"time ns/op before→after t", "allocs allocs/op before→after a"}
	if !slices.Equal(got, want) {
		t.Errorf("comparisons %q, want %q", got, want)
	}
}

// TestChildServer runs a server in a child process (this test binary)
// and checks its stats come from the child, not from this process.
func TestChildServer(t *testing.T) {
	env := &Env{Ctx: context.Background(), Budget: Smoke, ChildCmd: []string{os.Args[0], "-test.run=^$"}}
	h, err := env.startServer("hello-native")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !h.Child || !strings.Contains(h.where(), "child process") {
		t.Fatalf("server not in a child: %+v", h)
	}
	rps, cpu, _, _, err := serverLoad(env.ctx(), h, 2, 50*time.Millisecond, "/")
	if err != nil {
		t.Fatal(err)
	}
	if rps <= 0 || cpu < 0 {
		t.Errorf("rps %v, cpu %v", rps, cpu)
	}
	// A TLS child hands its certificate over.
	ht, err := env.startServer("hello-tls")
	if err != nil {
		t.Fatal(err)
	}
	defer ht.Close()
	if ht.TLS == nil || !strings.HasPrefix(ht.URL(), "https://") {
		t.Fatalf("TLS child without a trusted certificate: %+v", ht)
	}
	// 002's servers from children, hotpath's native HTTP/2 engine among
	// them: each answers the body over the protocol its arm wants.
	if err := checkDrainVsClose(env); err != nil {
		t.Fatal(err)
	}
}

// TestSameWorkChecksFail makes sure the checks can fail: a check that
// cannot fail would let the lab compare different work.
func TestSameWorkChecksFail(t *testing.T) {
	env := &Env{Ctx: context.Background(), Budget: Smoke}
	if err := checkServers(env, "/", []byte("something else"), "hello-native"); err == nil {
		t.Error("checkServers accepted a wrong body")
	}
	if err := sameBodies("x", func() ([]byte, error) { return []byte("y"), nil }); err == nil {
		t.Error("sameBodies accepted a wrong body")
	}
	_, check := bodyHandlers(freshBufferHandler, freshBufioHandler, body4K)
	if err := check(); err == nil {
		t.Error("bodyHandlers' check accepted two handlers that answer differently")
	}
}

func TestSelect(t *testing.T) {
	es, err := Select([]string{"000"})
	if err != nil || len(es) != 14 {
		t.Fatalf("Select(000) = %d experiments, %v; want 14", len(es), err)
	}
	es, err = Select([]string{"002-drain", "000-01"})
	if err != nil || len(es) != 2 || es[0].ID != "000-01" {
		t.Fatalf("Select = %v, %v", es, err)
	}
	if _, err := Select([]string{"999"}); err == nil || !strings.Contains(err.Error(), "known:") {
		t.Fatalf("unknown ID: %v", err)
	}
}

func TestRunReportsFailures(t *testing.T) {
	e := &Experiment{ID: "x-fail", Seed: "x", Title: "fails", Run: func(*Env) (*Result, error) { panic("boom") }}
	rep := Run(context.Background(), []*Experiment{e}, Options{Budget: Smoke})
	if len(rep.Results) != 1 || rep.Results[0].Verdict != NotReproducible || !strings.Contains(rep.Results[0].Err, "boom") {
		t.Fatalf("got %+v", rep.Results[0])
	}
}

// TestClientsChildChecksBodies: lab-clients (the child running 003's
// client libraries) refuses a wrong answer, for every client, and answers
// a bad command with an error rather than hanging.
func TestClientsChildChecksBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "something else")
	}))
	defer srv.Close()
	env := &Env{Ctx: context.Background(), Budget: Smoke}
	arms, children, cleanup, err := startAllClients(env, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if len(arms) != 5 || arms[0].Name != "net/http" {
		t.Fatalf("clients %+v, want 5 with net/http first", arms)
	}
	for i, c := range children {
		id, err := c.newClient(2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.send("call %s get", id); err == nil || !strings.Contains(err.Error(), "something else") {
			t.Errorf("%s accepted a wrong body (err %v)", arms[i].Name, err)
		}
		if _, err := c.send("bogus %s get", id); err == nil {
			t.Errorf("%s: a bad command got no error", arms[i].Name)
		}
	}
}

// fakeExperiment measures two arms whose per-run values come from
// values(i): it counts how often each run index was measured.
func fakeExperiment(claim Claim, values func(i int) (before, after float64), measured map[int]int) *Experiment {
	e := &Experiment{ID: "x-fake", Seed: "000", Title: "fake"}
	e.Run = func(env *Env) (*Result, error) {
		before, after := newArm("before", ""), newArm("after", "")
		r := newResult([]Metric{NsPerOp}, before, after)
		err := env.measure(r, func(a *Arm, i int) error {
			b, x := values(i)
			if a == before {
				measured[i]++
				a.record(NsPerOp.Name, b)
			} else {
				a.record(NsPerOp.Name, x)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		r.compare("time", before.Name, after.Name, NsPerOp, claim)
		r.finish("fake")
		return r, nil
	}
	return e
}

// An inconclusive claim gets more runs, up to MaxRuns; the runs already
// made are kept, not repeated.
func TestAdaptiveRuns(t *testing.T) {
	noisy := func(i int) (float64, float64) { // ratios 0.8, 1.25, 0.8, ...: straddle 1× and reach a 1.2× claim's band
		if i%2 == 0 {
			return 80, 100
		}
		return 125, 100
	}
	b := Smoke
	b.Runs, b.MaxRuns, b.ExtraTime = 4, 10, time.Hour
	measured := map[int]int{}
	rep := Run(context.Background(), []*Experiment{fakeExperiment(Claim{Ratio: 1.2}, noisy, measured)}, Options{Budget: b})
	r := rep.Results[0]
	// 4 runs, then +2 (6), +3 (9), +1 (10: the last step is cut to MaxRuns).
	if r.Runs != 10 || len(r.Comparisons[0].Measured.Values) != 10 || r.Comparisons[0].Verdict != Inconclusive {
		t.Errorf("got %d runs, %d ratios, %q; want 10 runs of a still inconclusive claim", r.Runs, len(r.Comparisons[0].Measured.Values), r.Comparisons[0].Verdict)
	}
	for i := range 10 {
		if measured[i] != 1 {
			t.Errorf("run %d measured %d times, want once", i, measured[i])
		}
	}
	if rep.RunsPerArm != 4 || rep.MaxRuns != 10 {
		t.Errorf("report says %d runs per arm, max %d", rep.RunsPerArm, rep.MaxRuns)
	}

	// A clear result stops at the budget's runs; MaxRuns ≤ Runs turns the
	// adaptive stop off.
	clear := func(int) (float64, float64) { return 200, 100 }
	measured = map[int]int{}
	rep = Run(context.Background(), []*Experiment{fakeExperiment(Claim{Ratio: 2}, clear, measured)}, Options{Budget: b})
	if r := rep.Results[0]; r.Runs != 4 || r.Comparisons[0].Verdict != Confirmed {
		t.Errorf("clear result: %d runs, %q", r.Runs, r.Comparisons[0].Verdict)
	}
	measured = map[int]int{}
	rep = Run(context.Background(), []*Experiment{fakeExperiment(Claim{Ratio: 1.2}, noisy, measured)}, Options{Budget: b, MaxRuns: 4})
	if r := rep.Results[0]; r.Runs != 4 {
		t.Errorf("adaptive stop off: %d runs, want 4", r.Runs)
	}
	// No time left for extra runs: none are made.
	b.ExtraTime = 0
	rep = Run(context.Background(), []*Experiment{fakeExperiment(Claim{Ratio: 1.2}, noisy, map[int]int{})}, Options{Budget: b})
	if r := rep.Results[0]; r.Runs != 4 {
		t.Errorf("no extra time: %d runs, want 4", r.Runs)
	}
}
