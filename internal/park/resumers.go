package park

import (
	"sync/atomic"
	"time"
)

// Resumers run the connections a readiness set woke (their Wake hands
// them over with Resume): a goroutine that waits for the next takes one,
// else a new goroutine starts, which then waits for others. At most
// maxIdleResumers wait, each until it has had no connection for Linger
// (as long as an empty set lingers) to twice that, or until quit closes:
// a wake-up of thousands of connections is served by a few goroutines,
// not thousands. The server's connections and the websocket package's
// event connections use one each.
type Resumers[T any] struct {
	run  func(T)
	ch   chan T
	idle atomic.Int32 // goroutines waiting on ch
	quit <-chan struct{}
}

// maxIdleResumers is how many goroutines may wait for connections. A
// set's waiter hands out up to Batch at a time, and hands out more while
// the goroutines of its last batch still run: with room for Batch alone,
// the ones that found no waiting goroutine started new ones, which ended
// once idle, and each new goroutine grew its stack again (wsbench echo,
// 200 connections, event API: stack growth was 10-16% of the server's
// user CPU; with 4*Batch it left the profile, and the CPU profile's time
// outside syscalls per message fell from 1.66-1.88 µs to 1.38-1.53, three
// runs each under load). At most 128 goroutines of a few KB each, for a
// busy server; they end once idle.
const maxIdleResumers = 4 * Batch

// NewResumers returns resumers that call run for each connection handed
// to Resume; their goroutines end when quit closes (nil: never).
func NewResumers[T any](run func(T), quit <-chan struct{}) *Resumers[T] {
	return &Resumers[T]{run: run, ch: make(chan T), quit: quit}
}

// Resume runs p on a waiting goroutine, or a new one.
func (r *Resumers[T]) Resume(p T) {
	select {
	case r.ch <- p:
	default:
		go r.loop(p)
	}
}

// loop runs p, then others handed to it while it waits. Its timer is
// not reset for each connection (a Reset per message is a tenth of an
// event WebSocket's user CPU): it fires every Linger, and the goroutine
// ends at a firing with no connection since the one before, so between
// Linger and twice that after its last.
func (r *Resumers[T]) loop(p T) {
	var t *time.Timer
	served := false // a connection came since the timer last fired
	for {
		r.run(p)
		if r.idle.Add(1) > maxIdleResumers {
			r.idle.Add(-1)
			return
		}
		if t == nil {
			t = time.NewTimer(Linger)
		}
		for waiting := true; waiting; {
			select {
			case p = <-r.ch:
				r.idle.Add(-1)
				served, waiting = true, false
			case <-t.C:
				if !served {
					r.idle.Add(-1)
					return
				}
				served = false
				t.Reset(Linger)
			case <-r.quit:
				r.idle.Add(-1)
				return
			}
		}
	}
}
