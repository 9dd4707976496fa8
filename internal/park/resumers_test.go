package park

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestResumersRunEachOnce: connections handed over from many goroutines
// at once, in bursts, each run exactly once (run under -race in CI).
func TestResumersRunEachOnce(t *testing.T) {
	const senders, each = 8, 2000
	var ran [senders * each]atomic.Int32
	var wg sync.WaitGroup
	wg.Add(senders * each)
	r := NewResumers(func(i int) {
		ran[i].Add(1)
		if i%97 == 0 {
			runtime.Gosched() // some runs let others in
		}
		wg.Done()
	}, nil)
	for s := range senders {
		go func() {
			for i := range each {
				r.Resume(s*each + i)
			}
		}()
	}
	wg.Wait()
	for i := range ran {
		if n := ran[i].Load(); n != 1 {
			t.Fatalf("connection %d ran %d times, want once", i, n)
		}
	}
}

// TestResumersBlockedRunDelaysNoOther: a run that blocks holds its own
// goroutine only. The first connection of a burst blocks until every
// other one of the burst has run: were the queue left to the goroutine
// that took the first, it would wait forever.
func TestResumersBlockedRunDelaysNoOther(t *testing.T) {
	for _, burst := range []int{2, 3, Batch, 4 * maxIdleResumers} {
		others := make(chan int, burst)
		done := make(chan bool, 1)
		r := NewResumers(func(i int) {
			if i != 0 {
				others <- i
				return
			}
			for range burst - 1 {
				select {
				case <-others:
				case <-time.After(10 * time.Second):
					done <- false
					return
				}
			}
			done <- true
		}, nil)
		for i := range burst {
			r.Resume(i)
		}
		if !<-done {
			t.Fatalf("burst of %d: the blocked first run still waited for the others after 10s", burst)
		}
	}
}

// TestResumersIdleGoroutinesEnd: after a burst, the goroutines that
// served it wait, at most maxIdleResumers of them, and end within twice
// Linger with nothing to do; quit ends them at once, and a connection
// handed over after quit still runs. Goroutines are counted by their
// stacks, not runtime.NumGoroutine: the idle resumers of the tests before
// end while this one runs (they made its base count too high, and the
// first wait fail, in a CI run).
func TestResumersIdleGoroutinesEnd(t *testing.T) {
	waitFor(t, "the resumers of earlier tests gone", func() bool { return resumerGoroutines() == 0 })
	quit := make(chan struct{})
	var wg sync.WaitGroup
	block := make(chan struct{})
	r := NewResumers(func(int) { <-block; wg.Done() }, quit)
	const n = 3 * maxIdleResumers // each blocks: a goroutine each
	wg.Add(n)
	for i := range n {
		r.Resume(i)
	}
	waitFor(t, "a goroutine per blocked run", func() bool { return resumerGoroutines() == n })
	close(block)
	wg.Wait()
	waitFor(t, "at most maxIdleResumers waiting", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.waiting <= maxIdleResumers && resumerGoroutines() <= maxIdleResumers
	})
	close(quit)
	waitFor(t, "the waiting goroutines gone after quit", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.waiting == 0 && resumerGoroutines() == 0
	})
	ran := make(chan struct{})
	r2 := NewResumers(func(int) { close(ran) }, quit)
	r2.Resume(1)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection handed over after quit did not run")
	}

	// Without quit, idle goroutines end on their own: between Linger
	// and twice that after their last connection.
	r3 := NewResumers(func(int) {}, nil)
	for i := range 100 {
		r3.Resume(i)
	}
	waitFor(t, "the idle goroutines gone after 2×Linger", func() bool {
		r3.mu.Lock()
		defer r3.mu.Unlock()
		return r3.waiting == 0 && r3.coming == 0
	})
}

// resumerGoroutines counts the goroutines running a Resumers' loop.
func resumerGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return bytes.Count(buf[:n], []byte(".(*Resumers[...]).loop("))
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waitFor polls cond until it holds, failing the test after 3×Linger.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3*Linger + 5*time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, 3*Linger+5*time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
