// Package microbench times one operation as the lab's micro-benchmarks
// do: calibrate a count that fills a time budget, then run it and report
// time, bytes and allocations per operation (from runtime.MemStats, so
// the whole process's). The lab uses it in process; bench/peers'
// lab-clients child uses it for the client libraries kept out of the
// library's go.mod.
package microbench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Sample is one measurement: per-operation figures.
type Sample struct {
	Ns, Bytes, Allocs float64
}

// Repeat turns a single operation into an op(n) that runs it n times,
// stopping at the first error.
func Repeat(f func() error) func(int) error {
	return func(n int) error {
		for range n {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
}

// Calibrate returns a count n for which op(n) takes about d.
func Calibrate(op func(int) error, d time.Duration) (int, error) {
	n := 1
	for {
		start := time.Now()
		if err := op(n); err != nil {
			return 0, err
		}
		el := time.Since(start)
		if el >= d/4 || n >= 1<<30 {
			per := float64(el) / float64(n)
			return max(1, int(float64(d)/max(per, 1))), nil
		}
		if el <= 0 {
			n *= 100
			continue
		}
		n = min(n*100, max(n*2, int(float64(n)*float64(d/4)/float64(el))+1))
	}
}

// Time runs op(n) and returns its per-operation time, bytes and
// allocations.
func Time(op func(int) error, n int) (Sample, error) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()
	err := op(n)
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	f := float64(n)
	return Sample{float64(el.Nanoseconds()) / f, float64(m1.TotalAlloc-m0.TotalAlloc) / f, float64(m1.Mallocs-m0.Mallocs) / f}, err
}

// Concurrent runs do on workers goroutines for d (or until ctx ends) and
// returns the figures per completed call: wall time divided by calls, as
// a parallel Go benchmark reports ns/op.
func Concurrent(ctx context.Context, workers int, d time.Duration, do func() error) (Sample, error) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	var calls atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			// Each worker makes one call at least, however late it is
			// scheduled: on a loaded machine a short window could
			// otherwise pass with no call at all.
			for first := true; first || time.Now().Before(deadline) && ctx.Err() == nil; first = false {
				if err := do(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err, _ := firstErr.Load().(error); err != nil {
		return Sample{}, err
	}
	n := float64(calls.Load())
	if n == 0 {
		return Sample{}, fmt.Errorf("no call completed in %s", d)
	}
	return Sample{float64(el.Nanoseconds()) / n, float64(m1.TotalAlloc-m0.TotalAlloc) / n, float64(m1.Mallocs-m0.Mallocs) / n}, nil
}
