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

// interrupt wakes a connection blocked in a read, or parked, for
// Shutdown.
func (c *conn) interrupt() {
	c.interrupted.Store(true)
	c.nc.SetReadDeadline(aLongTimeAgo)
	c.unpark()
}
