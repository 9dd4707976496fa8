package server

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// unregistrable is a connection whose socket is gone by the time it parks
// (its writer closed it meanwhile): registering it fails.
type unregistrable struct {
	st  parkState
	reg bool
}

func (u *unregistrable) parking() (*parkState, *bool) { return &u.st, &u.reg }
func (u *unregistrable) parkDeadline() time.Time      { return time.Time{} }
func (u *unregistrable) pollRaw() (syscall.RawConn, error) {
	return nil, errors.New("socket closed")
}
func (u *unregistrable) parkVetoed() bool { return false }
func (u *unregistrable) wake()            {}
func (u *unregistrable) resume()          {}

// A set that a failed add started (its epoll instance and waiter) stops
// after parkLinger like any set left empty, instead of holding both until
// another connection parks in it or the server closes.
func TestParkSetStartedByFailedAddStops(t *testing.T) {
	ps := newParkSets()[0]
	defer ps.close()
	if ps.add(&unregistrable{st: parkState{slot: -1, hidx: -1}}) {
		t.Fatal("a connection whose socket cannot be registered parked")
	}
	deadline := time.Now().Add(parkLinger + 5*time.Second)
	for {
		ps.mu.Lock()
		running := ps.file != nil
		ps.mu.Unlock()
		if !running {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the empty set still holds its epoll instance and waiter %v after the failed add", parkLinger+5*time.Second)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
