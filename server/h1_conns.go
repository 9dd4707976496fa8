package server

import "time"

// HTTP/1.1 engine: the Server's HTTP/1.1 connections (every accepted
// connection starts here until it goes to HTTP/2): tracked for Shutdown,
// Close and SetKeepAlivesEnabled, which reach them through dispatch.go;
// and what Shutdown does to one (interrupt, lastChance).

func (s *Server) trackConn(c *conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shutting.Load() {
			return false
		}
		if s.conns == nil {
			s.conns = make(map[*conn]struct{})
		}
		s.conns[c] = struct{}{}
		s.connWG.Add(1)
	} else {
		delete(s.conns, c)
		s.connWG.Done()
	}
	return true
}

// h1WakeIdle interrupts every idle connection (so it serves what it already
// received and closes), cuts lingering closes short (lingerShutdown), and
// returns how many connections remain.
func (s *Server) h1WakeIdle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for c := range s.conns {
		if c.lingering.Load() != lingerNo {
			if c.lingering.CompareAndSwap(lingerOn, lingerCut) {
				c.nc.SetReadDeadline(now.Add(lingerShutdown))
			}
			continue
		}
		st := ConnState(c.state.Load())
		if (st == StateIdle || (st == StateNew && now.Sub(c.accepted()) > newConnGrace)) && !c.quiet.Load() {
			c.interrupt()
		}
	}
	return len(s.conns)
}

// h1CloseConnsLocked closes every HTTP/1.1 connection now (Close); a
// parked one has no read to fail, so it is woken too. Hold s.mu.
func (s *Server) h1CloseConnsLocked() {
	for c := range s.conns {
		c.nc.Close()
		c.unpark()
	}
}

// h1EndIdleLocked interrupts every idle HTTP/1.1 connection: it serves
// what already came, then closes (SetKeepAlivesEnabled(false)). Hold s.mu.
func (s *Server) h1EndIdleLocked() {
	for c := range s.conns {
		if ConnState(c.state.Load()) == StateIdle && !c.quiet.Load() {
			c.interrupt()
		}
	}
}

// lastChance runs during Shutdown on an idle connection: a request that
// has already arrived is served (with "Connection: close"); otherwise the
// connection closes.
func (c *conn) lastChance() error {
	c.quiet.Store(true) // Shutdown interrupts us no more
	c.interrupted.Store(false)
	c.closing = true
	c.setReadDeadline(time.Now().Add(shutdownQuiet))
	if err := c.fill(); err != nil || c.r == c.w {
		return errClosing
	}
	return nil
}

// shutdownQuiet is how long Shutdown lets an idle keep-alive connection
// wait for one more request before closing it. A client that got a
// keep-alive response may already have sent its next request; closing at
// once would lose it (the client sees EOF or a reset). Served within the
// quiet period, it is answered with "Connection: close". What remains is
// a request sent just as the quiet period ends: a client retry covers it
// (Go's Transport retries such a request on a reused connection).
const shutdownQuiet = 200 * time.Millisecond

// interrupt wakes a connection blocked in a read, or parked, for
// Shutdown.
func (c *conn) interrupt() {
	c.interrupted.Store(true)
	c.nc.SetReadDeadline(aLongTimeAgo)
	c.unpark()
}
