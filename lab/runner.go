package lab

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Options configures Run.
type Options struct {
	// Budget sizes the experiments (Quick or Full).
	Budget Budget
	// ChildCmd starts this binary as a child server (see ChildEnv); nil
	// runs servers in-process.
	ChildCmd []string
	// Progress receives one line per step; nil is quiet.
	Progress io.Writer
}

// Report is everything a lab run measured.
type Report struct {
	Machine  Machine       `json:"machine"`
	Budget   string        `json:"budget"`
	Runs     int           `json:"runs"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration_ns"`
	Rule     string        `json:"rule"`
	Results  []*Result     `json:"results"`
}

// Run runs the experiments in order and returns their report. An
// experiment that fails is reported as not reproducible with its error;
// the others still run. Run stops early when ctx is cancelled.
func Run(ctx context.Context, exps []*Experiment, opt Options) *Report {
	rep := &Report{Machine: ReadMachine(), Budget: opt.Budget.Name, Runs: opt.Budget.Runs, Started: time.Now(), Rule: Rule}
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
		r := runOne(env, e)
		r.Duration = time.Since(start)
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, "%s → %s in %.1fs\n", prefix, r.Verdict, r.Duration.Seconds())
		}
		rep.Results = append(rep.Results, r)
	}
	rep.Duration = time.Since(rep.Started)
	return rep
}

// runOne checks that the arms do the same work, then measures them.
func runOne(env *Env, e *Experiment) (r *Result) {
	fail := func(err error) *Result {
		return &Result{ID: e.ID, Seed: e.Seed, Title: e.Title, Verdict: NotReproducible, Why: err.Error(), Err: err.Error()}
	}
	defer func() {
		if p := recover(); p != nil {
			r = fail(fmt.Errorf("panic: %v", p))
		}
	}()
	if e.Check != nil {
		if err := e.Check(env); err != nil {
			return fail(fmt.Errorf("same-work check failed: %w", err))
		}
	}
	r, err := e.Run(env)
	if err != nil {
		return fail(err)
	}
	return r
}
