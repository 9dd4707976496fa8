package park

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// unregistrable is a connection whose socket is gone by the time it parks
// (its writer closed it meanwhile): registering it fails.
type unregistrable struct {
	st  State
	reg bool
}

func (u *unregistrable) Parking() (*State, *bool) { return &u.st, &u.reg }
func (u *unregistrable) ParkDeadline() time.Time  { return time.Time{} }
func (u *unregistrable) PollRaw() (syscall.RawConn, error) {
	return nil, errors.New("socket closed")
}
func (u *unregistrable) ParkVetoed() bool { return false }
func (u *unregistrable) Wake()            {}

// A set that a failed add started (its epoll instance and waiter) stops
// after Linger like any set left empty, instead of holding both until
// another connection parks in it or the server closes.
func TestParkSetStartedByFailedAddStops(t *testing.T) {
	ps := NewSets()[0]
	defer ps.Close()
	if ps.Add(&unregistrable{st: State{slot: -1, hidx: -1}}) {
		t.Fatal("a connection whose socket cannot be registered parked")
	}
	deadline := time.Now().Add(Linger + 5*time.Second)
	for {
		if !ps.Running() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the empty set still holds its epoll instance and waiter %v after the failed add", Linger+5*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
