//go:build !unix

package server

// initRaw leaves c on the portable path: idle connections keep their
// buffers while they wait.
func (c *conn) initRaw() {}

// watchDisconnect is not available on this platform: the request context
// is canceled when the handler returns, not when the client leaves.
func (c *conn) watchDisconnect(ctx *requestContext, done chan struct{}) { close(done) }

// rawRead is never called on this platform (no raw path).
func (cw *connWork) rawRead(fd uintptr) bool { return true }
