package websocket

import (
	"context"
	"sync"
	"sync/atomic"
)

// The connection's locks and one-time events, made so that an idle
// connection holds no channel: a channel (96 bytes, and an allocation) is
// made only for a goroutine that has to wait. Five channels were a
// third of an idle event connection's heap. They share one mutex, the
// Conn's syncMu, passed to each method (a mutex each was 40 bytes of
// every Conn): each holds it only for a few instructions, and none while
// holding another's.

// gate is a lock whose wait a context or another event can end. The
// holder releases it with unlock; a waiter is handed it in arrival order.
type gate struct {
	held    bool
	waiters *[]chan struct{} // closed to hand the gate over; nil with none
}

// tryLock takes g if it is free.
func (g *gate) tryLock(mu *sync.Mutex) bool {
	mu.Lock()
	defer mu.Unlock()
	if g.held {
		return false
	}
	g.held = true
	return true
}

// lockOr takes g, waiting as long as it is held, unless ctx ends (then
// -1 and ctx's error) or a or b closes first (then 1 or 2; a nil one
// never does). It returns 0 and nil once g is taken.
func (g *gate) lockOr(mu *sync.Mutex, ctx context.Context, a, b <-chan struct{}) (int, error) {
	mu.Lock()
	if !g.held {
		g.held = true
		mu.Unlock()
		return 0, nil
	}
	ch := make(chan struct{})
	if g.waiters == nil {
		g.waiters = new([]chan struct{})
	}
	*g.waiters = append(*g.waiters, ch)
	mu.Unlock()
	var which int
	var err error
	select {
	case <-ch:
		return 0, nil
	case <-ctx.Done():
		which, err = -1, ctx.Err()
	case <-a:
		which = 1
	case <-b:
		which = 2
	}
	mu.Lock()
	if ws := g.waiters; ws != nil {
		for i, w := range *ws {
			if w == ch {
				*ws = append((*ws)[:i], (*ws)[i+1:]...)
				if len(*ws) == 0 {
					g.waiters = nil
				}
				mu.Unlock()
				return which, err
			}
		}
	}
	mu.Unlock()
	// Handed the gate as the wait ended: pass it on.
	g.unlock(mu)
	return which, err
}

// unlock releases g, to its first waiter if one waits.
func (g *gate) unlock(mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	ws := g.waiters
	if ws == nil {
		g.held = false
		return
	}
	ch := (*ws)[0]
	n := copy(*ws, (*ws)[1:])
	(*ws)[n] = nil
	*ws = (*ws)[:n]
	if n == 0 {
		g.waiters = nil
	}
	close(ch) // held stays true: the waiter has it
}

// event happens once: the socket closed, the peer's close frame came.
type event struct {
	fired atomic.Bool
	ch    chan struct{} // made by the first wait, closed by fire
}

// done reports whether e happened.
func (e *event) done() bool { return e.fired.Load() }

// wait returns a channel closed when e happens.
func (e *event) wait(mu *sync.Mutex) <-chan struct{} {
	mu.Lock()
	defer mu.Unlock()
	if e.ch == nil {
		e.ch = make(chan struct{})
		if e.fired.Load() {
			close(e.ch)
		}
	}
	return e.ch
}

// fire makes e happen; later calls do nothing.
func (e *event) fire(mu *sync.Mutex) {
	mu.Lock()
	defer mu.Unlock()
	if e.fired.Load() {
		return
	}
	e.fired.Store(true)
	if e.ch != nil {
		close(e.ch)
	}
}
