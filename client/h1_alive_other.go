//go:build !unix

package client

// alive cannot peek without blocking here: stale connections are left to
// the retry rule.
func (c *conn) alive() bool { return true }
