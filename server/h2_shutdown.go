package server

// HTTP/2 engine: GOAWAY and the end of native connections, and how
// Shutdown and Close reach them (registerH2).

import (
	"context"

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
// handler has returned, which ends the read loop.
func (sc *h2Conn) maybeDoneLocked() {
	if !sc.goAway || sc.fatal || sc.running > 0 {
		return
	}
	sc.readStop = true
	sc.nc.SetReadDeadline(aLongTimeAgo)
}

// registerH2 and unregisterH2 keep the native connections for Shutdown
// and Close.
func (s *Server) registerH2(sc *h2Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return false
	}
	if s.h2native == nil {
		s.h2native = make(map[*h2Conn]struct{})
	}
	s.h2native[sc] = struct{}{}
	s.h2nativeWG.Add(1)
	return true
}

func (s *Server) unregisterH2(sc *h2Conn) {
	s.mu.Lock()
	delete(s.h2native, sc)
	s.mu.Unlock()
	s.h2nativeWG.Done()
}

// shutdownNativeH2 sends GOAWAY on every native connection and waits for
// them to end, or closes them at once when now is set or ctx ends.
func (s *Server) shutdownNativeH2(ctx context.Context, now bool) error {
	s.mu.Lock()
	conns := make([]*h2Conn, 0, len(s.h2native))
	for sc := range s.h2native {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		if now {
			sc.nc.Close()
			sc.stopParking() // a closed socket leaves epoll silently
		} else {
			sc.gracefulShutdown()
		}
	}
	done := make(chan struct{})
	go func() { s.h2nativeWG.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
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

// h2ConnsLocked lists the native HTTP/2 connections, for the caller to
// end gracefully once s.mu is released (SetKeepAlivesEnabled(false)).
func (s *Server) h2ConnsLocked() []*h2Conn {
	conns := make([]*h2Conn, 0, len(s.h2native))
	for sc := range s.h2native {
		conns = append(conns, sc)
	}
	return conns
}
