package server

// Handlers that outlive their connection ("orphans"), counted per client
// across connections, so that a client cannot start handlers without
// limit by reconnecting.
//
// Per connection, handlers are bounded: one at a time on HTTP/1.1, and on
// HTTP/2 MAX_CONCURRENT_STREAMS, counted until each handler returns (a
// stream the client or the server resets keeps its place, so Rapid Reset
// and MadeYouReset start no more). When the connection ends, its handlers
// run on until they return: net/http's do too, and a handler that ignores
// its context (a slow database call) may run for seconds. A client that
// opens a connection, starts 250 such handlers, closes it (or has the
// server cut it) and reconnects, starts 250 more each time: 1.2 million
// goroutines in 20 s on one core. The ledger counts those handlers per
// client address until they return; while a client has more than
// MaxOrphanedHandlersPerClient of them, or while the server has more than
// MaxOrphanedHandlers and the client has any, a new request from it is
// refused without running a handler: REFUSED_STREAM on HTTP/2 (clients
// retry it, and the reset budget soon ends an attacker's connection), 503
// with Retry-After on HTTP/1.1. Work on live connections is never
// refused: a client's refusals end as its orphans return.

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
)

// Defaults for the orphan bounds (see Server.MaxOrphanedHandlersPerClient
// and Server.MaxOrphanedHandlers).
const (
	// DefaultMaxOrphanedHandlersPerClient is four connections' worth of
	// HTTP/2 handlers at the default MAX_CONCURRENT_STREAMS (250).
	DefaultMaxOrphanedHandlersPerClient = 1000
	// DefaultMaxOrphanedHandlers bounds them server-wide.
	DefaultMaxOrphanedHandlers = 10000
)

// orphanRetryAfter is the Retry-After, in seconds, of the 503 an HTTP/1.1
// client over its orphan bound gets.
const orphanRetryAfter = "5"

// clientKey is who a connection's handlers are charged to: the client's IP
// address, an IPv6 one cut to its /64 (the block a single host or site is
// given, so that one client cannot spread itself over 2^64 keys). Every
// connection without an IP address (a Unix socket, an in-memory
// listener) shares the zero key.
type clientKey netip.Addr

// clientKeyOf returns the key of a connection's remote address.
func clientKeyOf(a net.Addr) clientKey {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case nil:
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap()
	if ip.Is6() {
		if p, err := ip.Prefix(64); err == nil {
			ip = p.Addr()
		}
	}
	return clientKey(ip)
}

// orphanLedger counts the orphaned handlers of a Server per client.
// admit costs one atomic load while no handler is orphaned.
type orphanLedger struct {
	total atomic.Int64 // orphans server-wide

	mu       sync.Mutex
	byClient map[clientKey]int
	// The bounds, resolved; 0 means none.
	perClient, max int
}

// init sets the bounds from the Server's fields (0: the default,
// negative: none).
func (l *orphanLedger) init(perClient, max int) {
	l.perClient = orphanBound(perClient, DefaultMaxOrphanedHandlersPerClient)
	l.max = orphanBound(max, DefaultMaxOrphanedHandlers)
}

func orphanBound(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0
	}
	return n
}

// add charges n handlers whose connection just ended to client k.
func (l *orphanLedger) add(k clientKey, n int) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	if l.byClient == nil {
		l.byClient = make(map[clientKey]int)
	}
	l.byClient[k] += n
	l.total.Add(int64(n))
	l.mu.Unlock()
}

// done records that one of client k's orphans returned.
func (l *orphanLedger) done(k clientKey) {
	l.mu.Lock()
	if n := l.byClient[k] - 1; n > 0 {
		l.byClient[k] = n
	} else {
		delete(l.byClient, k)
	}
	l.total.Add(-1)
	l.mu.Unlock()
}

// admit reports whether client k may start a handler now: false while it
// holds more orphans than perClient, or the server more than max and the
// client any.
func (l *orphanLedger) admit(k clientKey) bool {
	if l.total.Load() == 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.byClient[k]
	switch {
	case n == 0:
		return true
	case l.perClient > 0 && n >= l.perClient:
		return false
	case l.max > 0 && l.total.Load() >= int64(l.max):
		return false
	}
	return true
}

// OrphanedHandlers returns how many handlers are still running after
// their connection ended (see MaxOrphanedHandlersPerClient).
func (s *Server) OrphanedHandlers() int { return int(s.orphans.total.Load()) }
