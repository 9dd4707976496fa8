package park

import (
	"sync"
	"time"
)

// Resumers run the connections a readiness set woke (their Wake hands
// them over with Resume). A woken connection joins a queue; goroutines
// take from it, one connection at a time, and take the next when they are
// done, so that a set's waiter handing over a batch of thirty ready
// connections wakes one goroutine, not thirty: a goroutine that finds
// more queued behind the one it took wakes (or starts) one more only when
// none is already on its way, as Go's scheduler wakes its threads. A
// connection whose run blocks so holds its goroutine only: the next
// queued one goes to the goroutine woken behind it, and so on, so one
// connection's blocking delays no other. Goroutines with nothing to do
// wait, at most maxIdleResumers of them, each until it has had no
// connection for Linger (as long as an empty set lingers) to twice that,
// or until quit closes: a wake-up of thousands of connections is served
// by a few goroutines, not thousands. The server's connections and the
// websocket package's event connections use one each.
//
// The handover was a channel send per connection, and each a goroutine's
// select waking: on an event WebSocket's echo, about 2,700 of the
// server's 7,900 user-space instructions per message (callgrind,
// BenchmarkEcho/events).
type Resumers[T any] struct {
	run  func(T)
	quit <-chan struct{}
	wake chan struct{} // a token per goroutine woken from waiting (buffered: sent under mu)

	mu      sync.Mutex
	queue   []T // handed over, not yet taken: queue[head:]
	head    int
	waiting int // goroutines waiting for a token
	coming  int // goroutines woken or started that have not looked at the queue yet
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
	return &Resumers[T]{run: run, quit: quit, wake: make(chan struct{}, maxIdleResumers)}
}

// Resume has p run on a goroutine of r's: one already running, once it
// is done with its own, or one woken or started for it.
func (r *Resumers[T]) Resume(p T) {
	r.mu.Lock()
	r.queue = append(r.queue, p)
	r.callLocked()
	r.mu.Unlock()
}

// callLocked makes sure a goroutine is on its way to the queue, which is
// not empty: one already coming, a waiting one woken, or a new one.
func (r *Resumers[T]) callLocked() {
	switch {
	case r.coming > 0:
	case r.waiting > 0:
		r.waiting--
		r.coming++
		r.wake <- struct{}{} // never blocks: a token per waiting goroutine
	default:
		r.coming++
		go r.loop()
	}
}

// loop is a resumer goroutine, started coming: it takes queued
// connections and runs them until the queue is empty, then waits for a
// token, until it has had none for Linger, or quit closes. Its timer is
// not reset per connection (a Reset per message was a tenth of an event
// WebSocket's user CPU): it fires every Linger, and the goroutine ends at
// a firing with no connection since the one before, so between Linger
// and twice that after its last.
func (r *Resumers[T]) loop() {
	var t *time.Timer
	served := false // a connection came since the timer last fired
	r.mu.Lock()
	r.coming--
	for {
		if r.head < len(r.queue) {
			p := r.take()
			if r.head < len(r.queue) {
				r.callLocked() // more queued: someone for them, should p block
			}
			r.mu.Unlock()
			r.run(p)
			served = true
			r.mu.Lock()
			continue
		}
		if r.waiting >= maxIdleResumers {
			r.mu.Unlock()
			return
		}
		r.waiting++
		r.mu.Unlock()
		if t == nil {
			// Its first wait: what it ran before came before the timer,
			// so an idle goroutine ends Linger after its first burst.
			t = time.NewTimer(Linger)
			served = false
		}
		woken := false
		for !woken {
			select {
			case <-r.wake:
				woken = true
			case <-t.C:
				if !served && r.leave() {
					return
				}
				served = false
				t.Reset(Linger)
			case <-r.quit:
				if r.leave() {
					t.Stop()
					return
				}
			}
			if !woken && r.tokenTaken() {
				woken = true
			}
		}
		r.mu.Lock()
		r.coming--
	}
}

// leave ends a waiting goroutine's wait for good, unless a token was sent
// for it meanwhile (its waiting was counted off under mu by whoever sent
// it): then it reports false, and the caller takes the token.
func (r *Resumers[T]) leave() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.wake) > 0 {
		return false
	}
	r.waiting--
	return true
}

// tokenTaken takes a token sent for a goroutine that did not leave
// (leave reported false), reporting whether it did.
func (r *Resumers[T]) tokenTaken() bool {
	select {
	case <-r.wake:
		return true
	default:
		return false
	}
}

// take removes the queue's first connection. Hold mu.
func (r *Resumers[T]) take() T {
	var zero T
	p := r.queue[r.head]
	r.queue[r.head] = zero
	r.head++
	if r.head == len(r.queue) {
		r.queue, r.head = r.queue[:0], 0
	}
	return p
}
