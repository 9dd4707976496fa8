package park

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// edgeEnd is a socketpair end that parks with AddEdge.
type edgeEnd struct {
	*end
	es EdgeState
}

func (e *edgeEnd) Edge() *EdgeState { return &e.es }

func edgePair(t *testing.T) (*edgeEnd, func(string)) {
	e, peer := socketpair(t)
	return &edgeEnd{end: e}, func(s string) {
		if _, err := peer.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
}

// read drains e's socket without waiting, reporting how many bytes it
// held.
func (e *edgeEnd) read() int {
	rc, err := e.f.SyscallConn()
	if err != nil {
		panic(err)
	}
	var buf [64]byte
	n := 0
	rc.Read(func(fd uintptr) bool {
		for {
			k, err := unix.Read(int(fd), buf[:])
			if k > 0 {
				n += k
			}
			if err != nil || k < len(buf) {
				return true // no wait: the caller parks instead
			}
		}
	})
	return n
}

// AddEdge registers once: a parked socket wakes for what arrives; bytes
// that arrive while it runs make its next AddEdge answer Retry, never a
// park that waits for more; bytes already there when it first registers
// wake it at once. Forget leaves nothing in the set, and a set that
// stopped (empty for Linger) registers the socket again.
func TestSetAddEdge(t *testing.T) {
	ps := NewSets()[0]
	defer ps.Close()
	a, writeA := edgePair(t)

	if r := ps.AddEdge(a); r != Parked {
		t.Fatalf("AddEdge = %v, want Parked", r)
	}
	a.notWoken(t, "with nothing to read")
	writeA("x")
	a.waitWoken(t, "by a byte that came while parked")
	if a.read() != 1 {
		t.Fatal("the byte is not there")
	}

	// It runs (not parked): a byte comes, the waiter marks it.
	writeA("y")
	deadline := time.Now().Add(5 * time.Second)
	for {
		ps.mu.Lock()
		ready := a.es.ready
		ps.mu.Unlock()
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an edge while running was not kept")
		}
		time.Sleep(time.Millisecond)
	}
	if r := ps.AddEdge(a); r != Retry {
		t.Fatalf("AddEdge after an edge while running = %v, want Retry", r)
	}
	if a.read() != 1 {
		t.Fatal("the byte is not there")
	}
	if r := ps.AddEdge(a); r != Parked {
		t.Fatalf("AddEdge after the read = %v, want Parked", r)
	}
	a.notWoken(t, "with nothing to read")
	writeA("z")
	a.waitWoken(t, "again")
	a.read()

	// Forget: no slot, nothing parked; a later byte wakes nothing.
	if r := ps.AddEdge(a); r != Parked {
		t.Fatalf("AddEdge = %v", r)
	}
	ps.Forget(a)
	if ps.Parked() != 0 {
		t.Fatalf("Parked() = %d after Forget", ps.Parked())
	}
	writeA("w")
	a.notWoken(t, "after Forget")
	ps.mu.Lock()
	held := 0
	for _, c := range ps.slots {
		if c != nil {
			held++
		}
	}
	ps.mu.Unlock()
	if held != 0 {
		t.Fatalf("%d slots held after Forget", held)
	}

	// Registered again, with a byte already there: woken at once.
	if r := ps.AddEdge(a); r != Parked {
		t.Fatalf("AddEdge = %v", r)
	}
	a.waitWoken(t, "by what was there when it registered")
	a.read()

	// The set stops while it runs (nothing parked for Linger): its
	// registration is void, the next AddEdge registers it in the new
	// epoll instance, and a byte wakes it.
	deadline = time.Now().Add(Linger + 5*time.Second)
	for ps.Running() {
		if time.Now().After(deadline) {
			t.Fatal("the empty set did not stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := ps.AddEdge(a); r != Parked {
		t.Fatalf("AddEdge after the set stopped = %v", r)
	}
	writeA("v")
	a.waitWoken(t, "in the set started again")
}

// A ping-pong of many messages, parking whenever nothing is there, as
// an event WebSocket does: the peer sends the next as soon as the last
// is answered, so it arrives before, during and after each park. None is
// lost (a lost edge would leave it parked).
func TestSetAddEdgePingPong(t *testing.T) {
	ps := NewSets()[0]
	defer ps.Close()
	a, writeA := edgePair(t)
	const n = 2000
	acks := make(chan struct{})
	go func() {
		for i := range n {
			if i%4 == 0 {
				time.Sleep(100 * time.Microsecond) // after its read: it parks
			}
			writeA("m")
			<-acks
		}
	}()
	parked, retried := 0, 0
	for got := 0; got < n; {
		if k := a.read(); k > 0 {
			got += k
			for range k {
				acks <- struct{}{}
			}
			continue
		}
		if got%8 == 0 {
			// Slow to park: the next message's edge comes while it
			// runs, and the set's waiter sees it first. Longer than the
			// sender's pause as the runtime times it: with one P, both
			// wait in epoll_wait, whose timeout counts milliseconds, so
			// the sender's 100 µs took a millisecond, and a 1 ms pause
			// here always ended first (GOMAXPROCS=1: 0 retries).
			time.Sleep(3 * time.Millisecond)
		}
		switch ps.AddEdge(a) {
		case Parked:
			parked++
			a.waitWoken(t, "by the next message")
		case Retry:
			retried++
		case Refused:
			t.Fatalf("after %d messages: AddEdge refused", got)
		}
	}
	t.Logf("%d messages: %d parks, %d retries", n, parked, retried)
	if retried == 0 {
		t.Error("no edge came while it ran: the test did not test that")
	}
}
