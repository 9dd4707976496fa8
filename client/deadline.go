package client

// Deadlines: the past one that wakes blocked I/O (both engines), and a
// timer for a request's deadline while it waits for a connection.

import "time"

// aLongTimeAgo is a deadline in the past: setting it wakes blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// deadlineTimer is a channel that fires at deadline (nil, never, for a
// zero deadline) and the function that stops its timer.
func deadlineTimer(deadline time.Time) (<-chan time.Time, func()) {
	if deadline.IsZero() {
		return nil, func() {}
	}
	timer := time.NewTimer(time.Until(deadline))
	return timer.C, func() { timer.Stop() }
}
