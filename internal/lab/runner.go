package lab

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Options configures Run.
type Options struct {
	// Budget sizes the experiments (Quick or Full); its Runs may be
	// overridden (hotpath lab --runs).
	Budget Budget
	// MaxRuns bounds the adaptive stop: an experiment with an
	// inconclusive claim is measured again with more runs, up to MaxRuns
	// per arm, while the budget's ExtraTime lasts. 0 means Budget.MaxRuns;
	// a value at or below Budget.Runs turns the adaptive stop off.
	MaxRuns int
	// ChildCmd starts this binary as a child server (see ChildEnv); nil
	// runs servers in-process.
	ChildCmd []string
	// Progress receives one line per step; nil is quiet.
	Progress io.Writer
}

// Report is everything a lab run measured (results.json; see
// docs/lab/results-json.md for the schema).
type Report struct {
	// Schema names the layout of results.json: "hotpath-lab/3".
	Schema  string  `json:"schema"`
	Machine Machine `json:"machine"`
	Budget  string  `json:"budget"`
	// RunsPerArm is the number of runs every arm gets at first; MaxRuns
	// the most an experiment with an inconclusive claim was allowed
	// (Result.Runs says what each got).
	RunsPerArm int           `json:"runs_per_arm"`
	MaxRuns    int           `json:"max_runs"`
	Started    time.Time     `json:"started"`
	Duration   time.Duration `json:"duration_ns"`
	// Rule is the verdict rule in words (Rule).
	Rule string `json:"rule"`
	// Sources are the seed articles (Sources).
	Sources []Source  `json:"sources"`
	Results []*Result `json:"results"`
}

// SchemaVersion is written in every results.json.
const SchemaVersion = "hotpath-lab/3"

// Counts returns how many experiments and how many claims got each
// verdict. A failed experiment counts as one claim not reproducible.
func (rep *Report) Counts() (experiments, claims map[Verdict]int) {
	experiments, claims = map[Verdict]int{}, map[Verdict]int{}
	for _, r := range rep.Results {
		experiments[r.Verdict]++
		for _, c := range r.Comparisons {
			if c.Verdict != Info {
				claims[c.Verdict]++
			}
		}
		if r.Err != "" {
			claims[NotReproducible]++
		}
	}
	return experiments, claims
}

// runsText says how many runs each arm got: "quick budget, 6 runs per
// arm (up to 12 where a claim was inconclusive)".
func (rep *Report) runsText() string {
	s := fmt.Sprintf("%s budget, %d runs per arm", rep.Budget, rep.RunsPerArm)
	if rep.MaxRuns > rep.RunsPerArm {
		s += fmt.Sprintf(" (up to %d where a claim was inconclusive)", rep.MaxRuns)
	}
	return s
}

// Run runs the experiments in order and returns their report. An
// experiment that fails is reported as not reproducible with its error;
// the others still run. Run stops early when ctx is cancelled.
//
// The adaptive stop: when a claim comes out inconclusive, the experiment
// runs again, keeping the runs it made and adding half as many again
// (at least 2, at most up to MaxRuns), until no claim is inconclusive,
// MaxRuns is reached, or
// the next round would not fit in what is left of Budget.ExtraTime.
func Run(ctx context.Context, exps []*Experiment, opt Options) *Report {
	maxRuns := opt.MaxRuns
	if maxRuns == 0 {
		maxRuns = opt.Budget.MaxRuns
	}
	maxRuns = max(maxRuns, opt.Budget.Runs)
	rep := &Report{Schema: SchemaVersion, Machine: ReadMachine(), Budget: opt.Budget.Name, RunsPerArm: opt.Budget.Runs, MaxRuns: maxRuns,
		Started: time.Now(), Rule: Rule, Sources: Sources}
	extra := opt.Budget.ExtraTime
	for i, e := range exps {
		if ctx.Err() != nil {
			break
		}
		prefix := fmt.Sprintf("[%2d/%d] %-17s", i+1, len(exps), e.ID)
		env := &Env{Ctx: ctx, Budget: opt.Budget, ChildCmd: opt.ChildCmd}
		start := time.Now()
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "%s %s\n", prefix, e.Title)
			env.Progress = func(msg string) {
				fmt.Fprintf(opt.Progress, "%s   %s (%.1fs)\n", prefix, msg, time.Since(start).Seconds())
			}
		}
		r := runOne(env, e, true)
		for r.Err == "" && needsMoreRuns(r) && ctx.Err() == nil {
			runs := r.Runs
			add := min(max(2, runs/2), maxRuns-runs)
			if runs == 0 || add <= 0 {
				break
			}
			// The next round costs about the time per run so far (setup
			// included, so this overestimates) times the runs it adds.
			cost := time.Duration(float64(time.Since(start)) * float64(add) / float64(runs))
			if cost > extra {
				break
			}
			if opt.Progress != nil {
				fmt.Fprintf(opt.Progress, "%s   inconclusive after %d runs: %d more\n", prefix, runs, add)
			}
			t0 := time.Now()
			env.Budget.Runs = runs + add
			env.carry = r.samples()
			next := runOne(env, e, false)
			extra -= time.Since(t0)
			if next.Err != "" { // keep what was measured
				break
			}
			r = next
		}
		r.Duration = time.Since(start)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "%s → %s in %.1fs (%d runs)\n", prefix, r.Verdict, r.Duration.Seconds(), r.Runs)
		}
		rep.Results = append(rep.Results, r)
	}
	rep.Duration = time.Since(rep.Started)
	return rep
}

// runOne checks that the arms do the same work (when check is set), then
// measures them.
func runOne(env *Env, e *Experiment, check bool) (r *Result) {
	fail := func(err error) *Result {
		return &Result{ID: e.ID, Seed: e.Seed, Title: e.Title, Verdict: NotReproducible, Why: err.Error(), Err: err.Error()}
	}
	defer func() {
		if p := recover(); p != nil {
			r = fail(fmt.Errorf("panic: %v", p))
		}
	}()
	if check && e.Check != nil {
		if err := e.Check(env); err != nil {
			return fail(fmt.Errorf("same-work check failed: %w", err))
		}
	}
	r, err := e.Run(env)
	if err != nil {
		return fail(err)
	}
	r.ID, r.Seed, r.Title = e.ID, e.Seed, e.Title
	return r
}
