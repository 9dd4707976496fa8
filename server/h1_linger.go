package server

// HTTP/1.1 engine: how a connection ends after an error response
// (lingering close).

import "time"

// Lingering close: after an error response the client may still be
// sending the body we refused. Closing at once would reset the
// connection, and a reset can destroy our response before the client
// reads it; so the write side is closed and the rest is read and
// discarded, within bounds, as nginx's lingering_close does.
const (
	lingerGap   = 2 * time.Second  // the longest wait for more input (nginx lingering_timeout: 5 s)
	lingerTotal = 30 * time.Second // the longest linger (nginx lingering_time: 30 s)
	lingerBytes = 256 << 20        // the most discarded
	// lingerShutdown is how long a connection still lingers once
	// Shutdown has begun, so that a client that keeps sending does not
	// hold Shutdown for lingerTotal (net/http waits 500 ms there too).
	lingerShutdown = 500 * time.Millisecond
)

// conn.lingering's states.
const (
	lingerNo int32 = iota
	lingerOn
	lingerCut
)

// lingerClose half-closes the connection and discards what the client is
// still sending, until it closes its side or a bound is reached.
func (c *conn) lingerClose() {
	type closeWriter interface{ CloseWrite() error }
	cw, ok := c.nc.(closeWriter)
	if !ok || cw.CloseWrite() != nil {
		return
	}
	buf := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(buf)
	c.lingering.Store(lingerOn)
	defer c.lingering.Store(lingerNo)
	end := time.Now().Add(lingerTotal)
	shortened := false
	for total := 0; total < lingerBytes; {
		now := time.Now()
		next := now.Add(lingerGap)
		if next.After(end) {
			next = end
		}
		c.nc.SetReadDeadline(next)
		// Shutdown cuts a linger short: wakeIdle marks it lingerCut, then
		// sets its own deadline. Checked after ours is set, so that ours
		// never overrides that cut for a whole gap.
		if !shortened && (c.lingering.Load() == lingerCut || c.srv.shutting.Load()) {
			if cut := now.Add(lingerShutdown); cut.Before(end) {
				end = cut
			}
			shortened = true
			if next.After(end) {
				c.nc.SetReadDeadline(end)
			}
		}
		n, err := c.nc.Read(buf[:])
		total += n
		if err != nil {
			return
		}
	}
}
