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

// AddEdge refuses: the connection waits on its goroutine.
func (ps *Set) AddEdge(c EdgeParker) AddResult { return Refused }

// Forget has nothing to forget.
func (ps *Set) Forget(c EdgeParker) {}
