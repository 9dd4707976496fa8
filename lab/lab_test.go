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

var validVerdicts = []Verdict{Confirmed, Partly, Refuted, NotReproducible, Info}

// TestExperiments is every experiment's smoke test: a tiny budget, the
// same-work check, then the result's structure.
func TestExperiments(t *testing.T) {
	if len(All()) < 20 {
		t.Fatalf("%d experiments registered, want the 14 exercises of seed 000 and 6 more", len(All()))
	}
	for _, e := range All() {
		t.Run(e.ID, func(t *testing.T) {
			env := &Env{Ctx: context.Background(), Budget: Smoke}
			if e.Check == nil {
				t.Fatal("no same-work check")
			}
			if err := e.Check(env); err != nil {
				t.Fatalf("same-work check: %v", err)
			}
			r, err := e.Run(env)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			checkResult(t, e, r, Smoke.Runs)
		})
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
}

// TestSameWorkChecksFail makes sure the checks can fail: a check that
// cannot fail would let the lab compare different work.
func TestSameWorkChecksFail(t *testing.T) {
	env := &Env{Ctx: context.Background(), Budget: Smoke}
	if err := checkServers(env, getRequest("/"), []byte("something else"), "hello-native"); err == nil {
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
