package lab

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
)

// Experiment is one seed claim (or a family of claims) made runnable.
type Experiment struct {
	// ID names the experiment on the command line: "000-01", "001-pool".
	ID string
	// Seed is the seed's number, "000" to "004".
	Seed string
	// Title says in a few words what is compared.
	Title string
	// Run measures the arms and returns the result with its comparisons;
	// the runner gives the result the experiment's ID, Seed and Title.
	Run func(env *Env) (*Result, error)
	// Check runs each arm once and fails if they do not do the same work
	// (different response bytes or parsed values). Run calls it first.
	Check func(env *Env) error
}

// Select returns the experiments whose IDs are listed, in the order of
// Experiments. An ID may be a prefix ending in '-' or a seed number: "000"
// selects every exercise of seed 000. An unknown ID is an error naming the
// known ones.
func Select(ids []string) ([]*Experiment, error) {
	all := Experiments()
	if len(ids) == 0 {
		return all, nil
	}
	chosen := map[*Experiment]bool{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		n := 0
		for _, e := range all {
			if e.ID == id || e.Seed == id || strings.HasPrefix(e.ID, id+"-") {
				chosen[e] = true
				n++
			}
		}
		if n == 0 {
			known := make([]string, 0, len(all))
			for _, e := range all {
				known = append(known, e.ID)
			}
			return nil, fmt.Errorf("lab: unknown experiment %q (known: %s)", id, strings.Join(known, ", "))
		}
	}
	var out []*Experiment
	for _, e := range all {
		if chosen[e] {
			out = append(out, e)
		}
	}
	return out, nil
}

// Budget sizes every experiment from a few knobs.
type Budget struct {
	// Name is "quick", "full" or "smoke".
	Name string
	// Runs is how many times each arm is measured; ratios are computed
	// per run and summarized by their median and its confidence interval.
	Runs int
	// RunTime is the target duration of one run of one arm.
	RunTime time.Duration
	// Scale multiplies the sizes of end-to-end experiments (requests per
	// run, connections, body sizes); 1 is the full size.
	Scale float64
	// MaxRuns and ExtraTime bound the adaptive stop (see Run): an
	// experiment with an inconclusive claim gets more runs, up to MaxRuns
	// per arm, while the whole lab run has spent less than ExtraTime on
	// such extra runs.
	MaxRuns   int
	ExtraTime time.Duration
}

// The standard budgets.
var (
	// Quick runs the whole lab in about 2 minutes on two cores (at most
	// 30 s of it on extra runs for inconclusive claims).
	Quick = Budget{Name: "quick", Runs: 6, RunTime: 100 * time.Millisecond, Scale: 0.25, MaxRuns: 12, ExtraTime: 30 * time.Second}
	// Full measures longer, with more runs and full sizes (about 6 to 8
	// minutes on two cores).
	Full = Budget{Name: "full", Runs: 10, RunTime: 300 * time.Millisecond, Scale: 1, MaxRuns: 20, ExtraTime: 2 * time.Minute}
	// Smoke runs every arm briefly; it is for tests, its numbers mean little.
	Smoke = Budget{Name: "smoke", Runs: 3, RunTime: 2 * time.Millisecond, Scale: 0.01}
)

// N scales a full-size count by the budget, never below min.
func (b Budget) N(full, min int) int {
	return max(min, int(math.Round(float64(full)*b.Scale)))
}

// Env is what an experiment gets from the runner.
type Env struct {
	// Ctx is cancelled when the run is interrupted.
	Ctx context.Context
	// Budget sizes the experiment.
	Budget Budget
	// ChildCmd, when set, is the command that starts this binary as a
	// child server process (see ChildEnv); nil runs servers in-process.
	ChildCmd []string
	// Progress, if set, is told what the experiment is doing.
	Progress func(msg string)

	// carry holds the samples of an earlier round of the same experiment,
	// by arm name and metric: measureArms keeps them and adds only the
	// runs still missing (the adaptive stop).
	carry map[string]map[string][]float64
}

func (env *Env) progress(format string, args ...any) {
	if env.Progress != nil {
		env.Progress(fmt.Sprintf(format, args...))
	}
}

func (env *Env) ctx() context.Context {
	if env.Ctx == nil {
		return context.Background()
	}
	return env.Ctx
}
