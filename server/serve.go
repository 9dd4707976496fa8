package server

// Accepting: ListenAndServe, Serve and the listeners and connections a
// Server tracks; the package-level functions of net/http's API.

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// ListenAndServe listens on s.Addr and serves until Shutdown or Close.
// It always returns a non-nil error; after Shutdown or Close it is
// ErrServerClosed.
func (s *Server) ListenAndServe() error {
	if s.shutting.Load() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":http"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln and serves each on its own goroutine.
// It closes ln when it returns, and returns ErrServerClosed after Shutdown
// or Close.
func (s *Server) Serve(ln net.Listener) error {
	if s.Native != nil && s.Handler != nil {
		ln.Close()
		return errors.New("server: set one of Server.Native and Server.Handler, not both")
	}
	s.resolve()
	base := context.Background()
	if s.BaseContext != nil {
		if base = s.BaseContext(ln); base == nil {
			panic("server: BaseContext returned a nil context")
		}
	}
	base = context.WithValue(base, http.ServerContextKey, s.httpServer)
	ln = &onceCloseListener{Listener: ln} // Shutdown and Serve's return both close it
	if !s.trackListener(&ln, true) {
		ln.Close()
		return ErrServerClosed
	}
	defer s.trackListener(&ln, false)
	defer ln.Close()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.shutting.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("server: accept error: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		if cfg := s.currentTLS(); cfg != nil {
			nc = tls.Server(nc, cfg)
		}
		ctx := base
		if s.ConnContext != nil {
			if ctx = s.ConnContext(ctx, nc); ctx == nil {
				panic("server: ConnContext returned a nil context")
			}
		}
		if !s.startConn(nc, ctx) {
			nc.Close()
			return ErrServerClosed
		}
	}
}

// onceCloseListener closes its listener once, however many times Close is
// called, as net/http's does: a listener wrapper that counts or logs its
// closes sees one.
type onceCloseListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}

// isTemporary reports accept errors worth retrying, such as running out
// of file descriptors (EMFILE), which net/http also retries.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary() || errors.Is(err, os.ErrDeadlineExceeded)
}

func (s *Server) currentTLS() *tls.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tlsConfig
}

func (s *Server) trackListener(ln *net.Listener, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.shutting.Load() {
			return false
		}
		if s.listeners == nil {
			s.listeners = make(map[*net.Listener]struct{})
		}
		s.listeners[ln] = struct{}{}
	} else {
		delete(s.listeners, ln)
	}
	return true
}

func (s *Server) closeListeners() {
	for ln := range s.listeners {
		(*ln).Close()
	}
}

// ListenAndServe listens on addr and serves handler (nil:
// http.DefaultServeMux) with a Server's defaults, as net/http's function
// of the name.
func ListenAndServe(addr string, handler http.Handler) error {
	return (&Server{Addr: addr, Handler: handler}).ListenAndServe()
}

// ListenAndServeTLS is ListenAndServe over TLS, as net/http's.
func ListenAndServeTLS(addr, certFile, keyFile string, handler http.Handler) error {
	return (&Server{Addr: addr, Handler: handler}).ListenAndServeTLS(certFile, keyFile)
}

// Serve serves handler (nil: http.DefaultServeMux) on l's connections
// with a Server's defaults, as net/http's function of the name.
func Serve(l net.Listener, handler http.Handler) error {
	return (&Server{Handler: handler}).Serve(l)
}

// ServeTLS is Serve over TLS, as net/http's.
func ServeTLS(l net.Listener, handler http.Handler, certFile, keyFile string) error {
	return (&Server{Handler: handler}).ServeTLS(l, certFile, keyFile)
}
