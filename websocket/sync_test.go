package websocket

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGate: many goroutines lock and unlock one gate, some giving up
// their wait (a ctx that ends, another event): never two inside at once,
// no goroutine left waiting, and the gate free at the end (a hand-over to
// a waiter that gave up is passed on, not lost).
func TestGate(t *testing.T) {
	var g gate
	var mu sync.Mutex
	var inside, max, got, gaveUp atomic.Int32
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			for range 200 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(2000))*time.Microsecond)
				var other <-chan struct{}
				if r.IntN(4) == 0 {
					other = stop // closes halfway
				}
				which, err := g.lockOr(&mu, ctx, other, nil)
				cancel()
				if which != 0 || err != nil {
					gaveUp.Add(1)
					continue
				}
				n := inside.Add(1)
				for m := max.Load(); n > m && !max.CompareAndSwap(m, n); m = max.Load() {
				}
				got.Add(1)
				time.Sleep(time.Duration(r.IntN(20)) * time.Microsecond)
				inside.Add(-1)
				g.unlock(&mu)
			}
		})
	}
	time.AfterFunc(20*time.Millisecond, func() { close(stop) })
	wg.Wait()
	if max.Load() != 1 {
		t.Errorf("%d goroutines held the gate at once", max.Load())
	}
	if !g.tryLock(&mu) || g.waiters != nil {
		t.Errorf("the gate is not free at the end (waiters %v)", g.waiters)
	}
	t.Logf("%d locked, %d gave up", got.Load(), gaveUp.Load())
	if got.Load() == 0 || gaveUp.Load() == 0 {
		t.Error("the test exercised only one path")
	}
}

// TestEvent: waiters made before and after fire see it; done reports it.
func TestEvent(t *testing.T) {
	var e event
	var mu sync.Mutex
	before := e.wait(&mu)
	if e.done() {
		t.Fatal("done before fire")
	}
	e.fire(&mu)
	e.fire(&mu)
	select {
	case <-before:
	default:
		t.Fatal("a wait made before fire was not woken")
	}
	select {
	case <-e.wait(&mu):
	default:
		t.Fatal("a wait made after fire blocks")
	}
	if !e.done() {
		t.Fatal("not done after fire")
	}
}
