//go:build !unix

package server

// initRaw leaves c on the portable path: idle connections keep their
// buffers while they wait.
func (c *conn) initRaw() {}
