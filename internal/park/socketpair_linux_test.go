package park

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// end is one end of a socketpair parked in a set: a Parker that counts
// its wakes.
type end struct {
	f      *os.File
	st     State
	reg    bool
	dl     time.Time
	vetoed atomic.Bool
	woke   chan struct{}
}

func (e *end) Parking() (*State, *bool)          { return &e.st, &e.reg }
func (e *end) ParkDeadline() time.Time           { return e.dl }
func (e *end) PollRaw() (syscall.RawConn, error) { return e.f.SyscallConn() }
func (e *end) ParkVetoed() bool                  { return e.vetoed.Load() }
func (e *end) Wake()                             { e.woke <- struct{}{} }

// socketpair returns a Parker on one end of a new socketpair and the
// other end, to write to.
func socketpair(t *testing.T) (*end, *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	e := &end{f: os.NewFile(uintptr(fds[0]), "parked"), woke: make(chan struct{}, 4)}
	e.st.Init()
	peer := os.NewFile(uintptr(fds[1]), "peer")
	t.Cleanup(func() { e.f.Close(); peer.Close() })
	return e, peer
}

func (e *end) waitWoken(t *testing.T, why string) {
	t.Helper()
	select {
	case <-e.woke:
	case <-time.After(5 * time.Second):
		t.Fatalf("not woken %s", why)
	}
}

func (e *end) notWoken(t *testing.T, why string) {
	t.Helper()
	select {
	case <-e.woke:
		t.Fatalf("woken %s", why)
	case <-time.After(50 * time.Millisecond):
	}
}

// A parked socket wakes when it becomes readable, once; taken back first,
// it is not woken; Close wakes what is still parked, and parks nothing
// after.
func TestSetSocketpair(t *testing.T) {
	ps := NewSets()[0]
	a, peerA := socketpair(t)
	b, peerB := socketpair(t)

	if !ps.Add(a) {
		t.Fatal("Add failed")
	}
	if n := ps.Parked(); n != 1 {
		t.Fatalf("Parked() = %d, want 1", n)
	}
	a.notWoken(t, "with nothing to read")
	peerA.Write([]byte("x"))
	a.waitWoken(t, "by a readable socket")
	if ps.Parked() != 0 || ps.Take(a) {
		t.Fatal("a woken connection is still in its set")
	}
	a.notWoken(t, "twice for one readiness")

	// Parked again (EPOLL_CTL_MOD: it was registered) with a byte still
	// unread: readable at once.
	if !ps.Add(a) {
		t.Fatal("Add of a registered socket failed")
	}
	a.waitWoken(t, "by what it had not read")

	// Taken back before it is readable: the late event is dropped.
	if !ps.Add(b) {
		t.Fatal("Add failed")
	}
	if !ps.Take(b) {
		t.Fatal("Take did not find a parked connection")
	}
	peerB.Write([]byte("x"))
	b.notWoken(t, "after Take")
	var buf [1]byte
	b.f.Read(buf[:]) // empty again: parks until the next byte

	// A vetoed connection does not park.
	b.vetoed.Store(true)
	if ps.Add(b) {
		t.Fatal("a vetoed connection parked")
	}
	b.vetoed.Store(false)

	if !ps.Add(b) {
		t.Fatal("Add failed")
	}
	ps.Close()
	b.waitWoken(t, "by Close")
	if ps.Add(a) || ps.Parked() != 0 {
		t.Fatal("a connection parked in a closed set")
	}
}

// A parked connection whose deadline passes wakes by the set's timer,
// with nothing to read; the earliest deadline first.
func TestSetDeadline(t *testing.T) {
	ps := NewSets()[0]
	defer ps.Close()
	late, _ := socketpair(t)
	early, _ := socketpair(t)
	now := time.Now()
	late.dl, early.dl = now.Add(300*time.Millisecond), now.Add(30*time.Millisecond)
	if !ps.Add(late) || !ps.Add(early) {
		t.Fatal("Add failed")
	}
	early.waitWoken(t, "by its deadline")
	if time.Now().Before(early.dl) {
		t.Error("woken before its deadline")
	}
	if ps.Parked() != 1 {
		t.Fatalf("Parked() = %d after the first deadline, want 1", ps.Parked())
	}
	late.waitWoken(t, "by its deadline")
	if time.Now().Before(late.dl) {
		t.Error("woken before its deadline")
	}
}
