//go:build !unix

package load

// peek cannot look without waiting here: nothing is seen.
func (c *fastConn) peek() (data, closed bool) { return false, false }
