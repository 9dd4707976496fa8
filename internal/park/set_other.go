//go:build !linux

package server

// Elsewhere than Linux, idle connections wait on their goroutines, as
// they did before parking (h1_park.go): no readiness sets.

const parkSupported = false

type parkSet struct{}

func newParkSets() []*parkSet          { return nil }
func (ps *parkSet) add(c parker) bool  { return false }
func (ps *parkSet) take(c parker) bool { return false }
func (ps *parkSet) close()             {}
