package server

// HTTP/1.1 engine: the grace before parking, ended by the Server's sweep
// of read waits (waitsweep.go) instead of a read deadline per wait.
//
// An idle connection waits parkGrace in the netpoller before it parks
// (h1_park.go), so that a client sending one request after another does
// not pay for parking at each. That wait used to be a read deadline: one
// update of the socket's deadline when the read found nothing and
// another to put the old one back, each a change to the runtime's timer
// heap, which the scheduler then keeps sorting. Under wrk -c50 (server on
// one core) they cost 2.5% of the server's CPU, a tenth of its user
// time, on the path of every request that waits.
//
// Instead a wait is recorded with the sweep (graceBegin) and ended
// (graceEnd); a wait the sweep finds older than graceTicks ticks is
// ended by moving the socket's read deadline to the past, and the
// connection puts its deadline back before it parks. A connection's grace
// is so between parkGrace and parkGrace+sweepTick. The working state
// (connWork) holds the record: it joins a list at its first wait and
// leaves it when its connection parks, hands over to HTTP/2 or ends.

// graceTicks is how many of the sweep's ticks a grace wait lasts at
// least: parkGrace.
const graceTicks = uint64(parkGrace / sweepTick)

// graceBegin records that c's read found nothing and waits in the
// netpoller: the sweep ends the wait once parkGrace passed. Called from
// the raw read's callback or before a TLS read; graceEnd must follow.
func (c *conn) graceBegin() {
	c.srv.grace.begin(&c.connWork.grace, c.nc, graceTicks)
}

// graceEnd ends c's grace wait, whose read returned err: errWouldBlock
// when the sweep ended it with nothing read (the read deadline in force
// put back: restoreReadDeadline).
func (c *conn) graceEnd(err error) error {
	w := &c.connWork.grace
	if !w.end() {
		return err
	}
	w.endedBySweep(c.restoreReadDeadline)
	if err != nil && isTimeout(err) {
		return errWouldBlock
	}
	return err
}

// graceLeave takes cw off the sweep's lists, if it is on one: its
// connection parks, leaves for HTTP/2 or ends, and has no wait.
func (cw *connWork) graceLeave() { cw.grace.leave() }

// restoreReadDeadline puts the read deadline in force back on the socket
// after a wait that moved it, and Shutdown's interrupt with it if one
// came meanwhile (the flag stays set: readMore handles it).
func (c *conn) restoreReadDeadline() {
	c.nc.SetReadDeadline(c.readDL)
	if c.interrupted.Load() {
		c.nc.SetReadDeadline(aLongTimeAgo)
	}
}
