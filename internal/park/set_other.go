//go:build !linux

package park

// Elsewhere than Linux there are no readiness sets: idle connections wait
// on their goroutines.

// Supported: parking is implemented on this platform.
const Supported = false

// Set is a readiness set; none exists here.
type Set struct{}

func NewSets() []*Set              { return nil }
func (ps *Set) Add(c Parker) bool  { return false }
func (ps *Set) Take(c Parker) bool { return false }
func (ps *Set) Close()             {}
func (ps *Set) Parked() int        { return 0 }
