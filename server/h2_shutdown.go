package server

// HTTP/2 engine: GOAWAY and the end of its connections, and how
// Shutdown and Close reach them (registerH2).

import (
	"context"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// gracefulShutdown sends GOAWAY (NO_ERROR) with the last stream the
// connection took, lets the streams it has finish, and closes.
func (sc *h2Conn) gracefulShutdown() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.goAwayLocked()
}

// goAwayLocked sends GOAWAY (NO_ERROR) and lets the streams taken so far
// finish, once.
func (sc *h2Conn) goAwayLocked() {
	if sc.goAway || sc.closed {
		return
	}
	sc.goAway = true
	sc.attachBusyLocked() // a parked connection's
	sc.wbuf = h2.AppendGoAway(sc.wbuf, sc.streams.Last(), h2.ErrCodeNo, nil)
	sc.kickWriter()
	sc.maybeDoneLocked()
	sc.stopParking() // a parked reader must see readStop
}

// maybeDoneLocked closes a connection that is going away once its last
// handler has returned and no stream the GOAWAY promised is still on its
// way to a handler (opening), which ends the read loop.
func (sc *h2Conn) maybeDoneLocked() {
	if !sc.goAway || sc.fatal || sc.running > 0 || sc.opening {
		return
	}
	sc.readStop = true
	sc.nc.SetReadDeadline(aLongTimeAgo)
}

// registerH2 and unregisterH2 keep the HTTP/2 engine's connections for
// Shutdown and Close. A connection accepted before Shutdown whose TLS
// handshake or h2c preface ends after it began is still served, as
// HTTP/1.1 serves a request already on its way (lastChance): late
// reports it, and the connection takes Shutdown's quiet period
// (shutdownQuiet) to read what its client sent before it goes away.
// After Close none is (ok false).
func (s *Server) registerH2(sc *h2Conn) (ok, late bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closedAll {
		return false, false
	}
	if s.h2conns == nil {
		s.h2conns = make(map[*h2Conn]bool)
	}
	late = s.shutting.Load()
	s.h2conns[sc] = late
	return true, late
}

func (s *Server) unregisterH2(sc *h2Conn) {
	s.mu.Lock()
	delete(s.h2conns, sc)
	s.mu.Unlock()
}

// shutdownH2Conns sends GOAWAY on every connection of the HTTP/2 engine
// (or closes them at once with now) and waits, looking every
// shutdownPollInterval, until none is left or ctx ends. A connection that
// registers late is closed at once by Close, and goes away by itself
// after its quiet period under Shutdown (registerH2).
func (s *Server) shutdownH2Conns(ctx context.Context, now bool) error {
	told := make(map[*h2Conn]bool)
	t := time.NewTicker(shutdownPollInterval)
	defer t.Stop()
	for {
		var fresh []*h2Conn
		s.mu.Lock()
		for sc, late := range s.h2conns {
			if !told[sc] && (now || !late) {
				told[sc] = true
				fresh = append(fresh, sc)
			}
		}
		left := len(s.h2conns)
		s.mu.Unlock()
		for _, sc := range fresh {
			if now {
				sc.nc.Close()
				sc.stopParking() // a closed socket leaves epoll silently
			} else {
				sc.gracefulShutdown()
			}
		}
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// closeLocked marks the connection over: nothing more is written, and
// the handlers still running are charged to the client as orphans until
// they return (orphans.go).
func (sc *h2Conn) closeLocked() {
	if sc.closed {
		return
	}
	sc.closed = true
	if sc.running > 0 {
		sc.orphans = sc.running
		sc.srv.orphans.add(sc.client, sc.running)
	}
}

// h2ConnsLocked lists the HTTP/2 engine's connections, for the caller to
// end gracefully once s.mu is released (SetKeepAlivesEnabled(false)).
func (s *Server) h2ConnsLocked() []*h2Conn {
	conns := make([]*h2Conn, 0, len(s.h2conns))
	for sc := range s.h2conns {
		conns = append(conns, sc)
	}
	return conns
}
