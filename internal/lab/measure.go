package lab

import (
	"fmt"
	"time"

	"github.com/hotpathhq/hotpath/internal/microbench"
)

// newArm returns an arm named name measuring code.
func newArm(name, code string) *Arm { return &Arm{Name: name, Code: code} }

// measure calls run for every arm, Budget.Runs times, rotating the order
// of the arms each run so that no arm always goes first, then summarizes.
// run records the arm's metrics for that run.
func (env *Env) measure(r *Result, run func(a *Arm, i int) error) error {
	return env.measureArms(r, r.Arms, run)
}

// measureArms is measure for some of r's arms. Runs an earlier round
// already made (Env.carry) are kept, not repeated: run i of every arm is
// still run i, so ratios stay paired run by run.
func (env *Env) measureArms(r *Result, arms []*Arm, run func(a *Arm, i int) error) error {
	runs := max(1, env.Budget.Runs)
	done := env.carried(arms)
	for i := done; i < runs; i++ {
		for k := range arms {
			if err := env.ctx().Err(); err != nil {
				return err
			}
			a := arms[(i+k)%len(arms)]
			if err := run(a, i); err != nil {
				return fmt.Errorf("%s: %w", a.Name, err)
			}
		}
		env.progress("run %d/%d", i+1, runs)
	}
	r.Runs = max(r.Runs, runs)
	r.summarize()
	return nil
}

// carried gives arms the samples of an earlier round (Env.carry), cut to
// the number of runs every arm has, and returns that number.
func (env *Env) carried(arms []*Arm) int {
	if env.carry == nil {
		return 0
	}
	done := -1
	for _, a := range arms {
		ms := env.carry[a.Name]
		if len(ms) == 0 {
			return 0
		}
		for _, vs := range ms {
			if done < 0 || len(vs) < done {
				done = len(vs)
			}
		}
	}
	done = max(0, min(done, env.Budget.Runs))
	for _, a := range arms {
		a.samples = map[string][]float64{}
		for m, vs := range env.carry[a.Name] {
			a.samples[m] = append([]float64(nil), vs[:done]...)
		}
	}
	return done
}

// benchOp is a micro-benchmark arm: op does the operation n times.
type benchOp struct {
	arm *Arm
	op  func(n int) error
}

var microMetrics = []Metric{NsPerOp, BytesPerOp, AllocsPerOp}

// bench measures ns/op, B/op and allocs/op of each op, like
// testing.Benchmark but with the lab's budget: each run executes the op
// as many times as fit in Budget.RunTime (estimated once, up front).
// Allocations are counted process-wide (runtime.MemStats), so an op must
// not leave goroutines working in the background.
func (env *Env) bench(r *Result, ops ...benchOp) error {
	var arms []*Arm
	counts := map[*Arm]int{}
	fns := map[*Arm]func(int) error{}
	for _, o := range ops {
		n, err := calibrate(o.op, env.Budget.RunTime)
		if err != nil {
			return fmt.Errorf("%s: %w", o.arm.Name, err)
		}
		arms = append(arms, o.arm)
		counts[o.arm], fns[o.arm] = n, o.op
	}
	r.Arms = append(r.Arms, arms...)
	return env.measureArms(r, arms, func(a *Arm, _ int) error {
		ns, b, allocs, err := timeOp(fns[a], counts[a])
		if err != nil {
			return err
		}
		a.record(NsPerOp.Name, ns)
		a.record(BytesPerOp.Name, b)
		a.record(AllocsPerOp.Name, allocs)
		return nil
	})
}

// costClaims are a seed's claims on what one operation costs, before vs
// after: time (ns/op), garbage (B/op) and allocations (allocs/op). A cost
// the seed makes no claim about has no Quote and is not compared.
type costClaims struct {
	Time, Garbage, Allocs Claim
	// Names, where set, replace the comparisons' names "time", "garbage"
	// and "allocations" (in that order) with the seed's words.
	Names [3]string
}

// compareCosts compares before with after on each claimed cost, in the
// order time, garbage, allocations.
func (r *Result) compareCosts(before, after *Arm, c costClaims) {
	costs := [3]struct {
		name   string
		metric Metric
		claim  Claim
	}{{"time", NsPerOp, c.Time}, {"garbage", BytesPerOp, c.Garbage}, {"allocations", AllocsPerOp, c.Allocs}}
	for i, k := range costs {
		if k.claim.Quote == "" {
			continue
		}
		if c.Names[i] != "" {
			k.name = c.Names[i]
		}
		r.compare(k.name, before.Name, after.Name, k.metric, k.claim)
	}
}

// benchPair is a micro-benchmark pair: before and after each do the
// operation once per call; bench times them and their costs are compared
// with the seed's claims. The caller adds Setup, SameWork and the verdict.
func (env *Env) benchPair(before *Arm, beforeOp func() error, after *Arm, afterOp func() error, claims costClaims) (*Result, error) {
	r := newResult(microMetrics)
	if err := env.bench(r, benchOp{before, repeat(beforeOp)}, benchOp{after, repeat(afterOp)}); err != nil {
		return nil, err
	}
	r.compareCosts(before, after, claims)
	return r, nil
}

// calibrate returns how many iterations of op fill d (at least 1).
func calibrate(op func(int) error, d time.Duration) (int, error) {
	return microbench.Calibrate(op, d)
}

// timeOp runs op(n) and returns its per-operation time, bytes and
// allocations.
func timeOp(op func(int) error, n int) (ns, bytes, allocs float64, err error) {
	s, err := microbench.Time(op, n)
	return s.Ns, s.Bytes, s.Allocs, err
}

// repeat turns a single operation into a benchOp function.
func repeat(f func() error) func(int) error { return microbench.Repeat(f) }
