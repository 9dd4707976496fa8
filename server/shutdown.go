package server

// Ending: Shutdown (graceful), Close (now), RegisterOnShutdown and
// SetKeepAlivesEnabled.

import (
	"context"
	"time"
)

// shutdownPollInterval is how often Shutdown looks for connections that
// went idle.
const shutdownPollInterval = 10 * time.Millisecond

// newConnGrace is how long Shutdown lets a connection that has not yet
// sent its first request keep waiting for it.
const newConnGrace = 2 * time.Second

// Shutdown stops the server gracefully: it closes the listeners, lets
// requests in progress finish (their responses carry "Connection: close"),
// and gives each idle keep-alive connection a quiet period (200 ms) in
// which a request already on its way is still served, with
// "Connection: close"; then the connection closes. It returns when every
// connection is closed, or with ctx's error when ctx ends first
// (connections are then left running; call Close to cut them).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	first := !s.shutting.Swap(true)
	s.closeListeners()
	hooks := s.onShutdown
	s.mu.Unlock()
	if first {
		for _, f := range hooks {
			go f()
		}
	}

	h2err := make(chan error, 1)
	go func() { h2err <- s.shutdownH2(ctx, false) }()
	t := time.NewTicker(shutdownPollInterval)
	defer t.Stop()
	for {
		if s.wakeIdle() == 0 {
			s.closeParks()
			return <-h2err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// RegisterOnShutdown registers a function to call on Shutdown, as
// net/http's: each runs on a goroutine of its own when Shutdown starts,
// and should close connections the server no longer tracks (hijacked
// ones, WebSockets), without waiting for them.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShutdown = append(s.onShutdown, f)
	s.mu.Unlock()
}

// SetKeepAlivesEnabled controls HTTP keep-alives, as net/http's: on by
// default. Disabled, every response ends its connection ("Connection:
// close" on HTTP/1.1, GOAWAY once its streams are done on HTTP/2), and
// idle connections close now. Enabling them again applies to the
// connections that follow.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.noKeepAlives.Store(!v)
	if v {
		return
	}
	s.mu.Lock()
	for c := range s.conns {
		if ConnState(c.state.Load()) == StateIdle && !c.quiet.Load() {
			c.interrupt() // it serves what already came, then closes
		}
	}
	conns := make([]*h2Conn, 0, len(s.h2native))
	for sc := range s.h2native {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		sc.gracefulShutdown()
	}
}

// wakeIdle interrupts every idle connection (so it serves what it already
// received and closes), cuts lingering closes short (lingerShutdown), and
// returns how many connections remain.
func (s *Server) wakeIdle() int {
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

// Close closes the listeners and every connection at once, without
// waiting for requests in progress. Prefer Shutdown.
func (s *Server) Close() error {
	s.mu.Lock()
	s.shutting.Store(true)
	s.closeListeners()
	for c := range s.conns {
		c.nc.Close()
		c.unpark() // a parked connection has no read to fail: wake it
	}
	s.mu.Unlock()
	s.shutdownH2(context.Background(), true)
	s.connWG.Wait()
	s.closeParks()
	return nil
}

// closeParks stops the readiness sets once no connection is left, and
// the goroutines waiting to resume connections.
func (s *Server) closeParks() {
	for _, ps := range s.parks {
		ps.close()
	}
	if s.parkQuit != nil {
		s.quitOnce.Do(func() { close(s.parkQuit) })
	}
}
