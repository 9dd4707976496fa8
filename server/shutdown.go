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
// sent its first request keep waiting for it: 5 s, as net/http's
// Shutdown does (a new connection is treated as idle once it is 5 s old).
const newConnGrace = 5 * time.Second

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
			err := <-h2err
			if err == nil {
				// After HTTP/2's connections, whose quiet reads it
				// ends; if some outlive ctx, it ends with the last.
				s.grace.stop()
			}
			return err
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
	s.endIdleConns()
}

// Close closes the listeners and every connection at once, without
// waiting for requests in progress. Prefer Shutdown.
func (s *Server) Close() error {
	s.mu.Lock()
	s.shutting.Store(true)
	s.closedAll = true
	s.closeListeners()
	s.closeConnsLocked()
	s.mu.Unlock()
	s.shutdownH2(context.Background(), true)
	s.connWG.Wait()
	s.closeParks()
	s.grace.stop()
	return nil
}

// closeParks stops the readiness sets once no connection is left, and
// the goroutines waiting to resume connections.
func (s *Server) closeParks() {
	s.mu.Lock()
	s.parksClosed = true // a Serve resolving its settings now makes none
	parks, quit := s.parks, s.parkQuit
	s.mu.Unlock()
	for _, ps := range parks {
		ps.Close()
	}
	if quit != nil {
		s.quitOnce.Do(func() { close(quit) })
	}
}

// shutdownQuiet is how long Shutdown lets an idle keep-alive connection
// wait for one more request before closing it. A client that got a
// keep-alive response may already have sent its next request; closing at
// once would lose it (the client sees EOF or a reset). Served within the
// quiet period, it is answered with "Connection: close". What remains is
// a request sent just as the quiet period ends: a client retry covers it
// (Go's Transport retries such a request on a reused connection).
const shutdownQuiet = 200 * time.Millisecond
