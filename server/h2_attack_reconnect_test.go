//go:build unix

package server

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/h2attack"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The attacks that start handlers and reconnect (MadeYouReset's six
// primitives, CVE-2025-8671; the plain reconnect; Rapid Reset), and the
// floods of frames the server answers with resets: a client cannot start
// more handlers than its connections hold plus its orphans
// (MaxOrphanedHandlersPerClient), and a connection whose frames keep
// calling for resets is cut within a second.

const (
	// reconnectAttack is how long each reconnecting attack runs at
	// least, and reconnectHandler how long its handlers sleep, ignoring
	// their context: past the attack, so that none returns while it
	// runs, on a machine that keeps up. On one that does not, the server
	// may not have cut a connection yet at reconnectAttack (it reads the
	// attacker's frames slower than they come): the attack goes on until
	// it has, at most reconnectAttackMax, so that the bound across
	// connections is tried.
	reconnectAttack    = 1500 * time.Millisecond
	reconnectAttackMax = 15 * time.Second
	reconnectHandler   = 2500 * time.Millisecond
	reconnectConns     = 2
)

// underReconnectingAttack runs attack from 127.0.0.1 on reconnectConns
// connections for reconnectAttack, against /delay handlers that outlive
// it, with a probe from another address halfway. It checks that, with
// the defaults, the server's orphans stay within
// MaxOrphanedHandlersPerClient plus what the live connections may hold,
// that the goroutines stay within the same bound, that other clients are
// served, and that once the handlers return nothing is left.
func underReconnectingAttack(t *testing.T, attack func(context.Context, h2attack.Config) (h2attack.Result, error), s *Server, cfg h2attack.Config) h2attack.Result {
	t.Helper()
	const live = reconnectConns * h2.DefaultMaxConcurrentStreams
	const slack = 200 // the attacker's own goroutines (3 a connection), the probe's, the servers'
	// The handlers of an earlier attack end first: the bound is counted
	// from what runs before this one.
	base := waitGoroutines(100, 2*reconnectHandler)
	maxOrphans := DefaultMaxOrphanedHandlersPerClient + live
	bound := base + DefaultMaxOrphanedHandlersPerClient + live + slack
	cfg.Conns, cfg.Path = reconnectConns, "/delay/"+strconv.Itoa(int(reconnectHandler/time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), reconnectAttackMax)
	defer cancel()
	start := time.Now()
	var peak, peakOrphans atomic.Int64
	var sampling sync.WaitGroup
	sampling.Go(func() {
		var ended time.Time // when a handler was first seen outliving its connection
		for ctx.Err() == nil {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			orphans := int64(s.OrphanedHandlers())
			if orphans > peakOrphans.Load() {
				peakOrphans.Store(orphans)
			}
			if peak.Load() > 5*int64(bound) {
				cancel() // far past the bound: no need to go on
				return
			}
			if orphans > 0 && ended.IsZero() {
				// A handler outlives its connection: one ended (the
				// server cut it, or, in the plain reconnect, the
				// attacker closed it). The attacker reconnects within
				// a third of reconnectAttack, as the check below wants.
				ended = time.Now()
			}
			if !ended.IsZero() && time.Since(start) >= reconnectAttack && time.Since(ended) >= reconnectAttack/3 {
				cancel()
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
	})
	var probing sync.WaitGroup
	probing.Go(func() {
		time.Sleep(reconnectAttack / 2)
		if ctx.Err() == nil {
			probeDuring(t, cfg, "the attack")
		}
	})
	r, err := attack(ctx, cfg)
	sampling.Wait()
	probing.Wait()
	end := time.Now()
	if err != nil {
		t.Fatalf("attack: %v (%v)", err, r)
	}
	t.Logf("peak %d goroutines (%d before, bound %d), %d orphaned handlers (bound %d); %v",
		peak.Load(), base, bound, peakOrphans.Load(), maxOrphans, r)
	if p := int(peak.Load()); p > bound {
		t.Errorf("%d goroutines during the attack (%d before), want at most %d: MaxOrphanedHandlersPerClient (%d) + %d connections x %d streams + %d",
			p, base, bound, DefaultMaxOrphanedHandlersPerClient, reconnectConns, h2.DefaultMaxConcurrentStreams, slack)
	}
	if p := int(peakOrphans.Load()); p > maxOrphans {
		t.Errorf("%d handlers running past their connections, want at most %d", p, maxOrphans)
	}
	if r.Conns <= reconnectConns {
		t.Errorf("the attacker made %d connections: it was never cut, so the bound across connections was not tried", r.Conns)
	}
	// The handlers return reconnectHandler after they started; then the
	// client owes nothing, and is served again.
	deadline := end.Add(reconnectHandler + 4*time.Second)
	for s.OrphanedHandlers() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.OrphanedHandlers(); n != 0 {
		t.Errorf("%d orphaned handlers %v after the attack ended, its handlers sleeping %v", n, time.Since(end), reconnectHandler)
	}
	if n := waitGoroutines(base+20, time.Until(deadline)); n > base+20 {
		t.Errorf("%d goroutines after the handlers returned, %d before the attack", n, base)
	}
	cfg.LocalAddr = "" // the attacker's own address
	if _, err := h2attack.Probe(context.Background(), cfg); err != nil {
		t.Errorf("the attacker's address is not served once its handlers returned: %v", err)
	}
	return r
}

// MadeYouReset (CVE-2025-8671), its six primitives: each request is
// followed by a frame that makes the server reset the stream while its
// handler runs on. The server counts the handler until it returns, cuts
// the connection after 100 resets (GOAWAY ENHANCE_YOUR_CALM), and counts
// the handlers past the connection: the attacker, reconnecting, is
// refused once it has MaxOrphanedHandlersPerClient of them.
//
// Modes: hotpath's HTTP/2 engine, both APIs, h2c and TLS
// (forAttackServers): an HTTP/2 attack shape; HTTP/1.1 has none and the
// hand-off's HTTP/2 is net/http's.
func TestH2AttackMadeYouReset(t *testing.T) {
	for _, name := range []string{
		"made-you-reset-window-update-zero", "made-you-reset-priority-length",
		"made-you-reset-priority-self", "made-you-reset-window-overflow",
		"made-you-reset-headers-after-end", "made-you-reset-data-after-end",
	} {
		a, ok := h2attack.Lookup(name)
		if !ok {
			t.Fatalf("no attack %q", name)
		}
		t.Run(name, func(t *testing.T) {
			forAttackServers(t, name == "made-you-reset-window-update-zero", func(t *testing.T, s *Server, cfg h2attack.Config) {
				r := underReconnectingAttack(t, a.Run, s, cfg)
				if r.GoAways == 0 || r.GoAwayCode != h2.ErrCodeEnhanceYourCalm {
					t.Errorf("want GOAWAY ENHANCE_YOUR_CALM: %v", r)
				}
			})
		})
	}
}

// The plain reconnect, the control: no reset at all, only as many slow
// requests as a connection may have, then a close, then again. Its
// handlers are bounded the same way.
//
// Modes: hotpath's HTTP/2 engine, both APIs, h2c and TLS
// (forAttackServers): an HTTP/2 attack shape; HTTP/1.1 has none and the
// hand-off's HTTP/2 is net/http's.
func TestH2AttackReconnect(t *testing.T) {
	forAttackServers(t, true, func(t *testing.T, s *Server, cfg h2attack.Config) {
		r := underReconnectingAttack(t, h2attack.Reconnect, s, cfg)
		if r.Streams < DefaultMaxOrphanedHandlersPerClient {
			t.Errorf("only %d streams opened: the attack did not reach the bound", r.Streams)
		}
	})
}

// Floods of frames the server must answer with a reset (streams past
// MAX_CONCURRENT_STREAMS; DATA after END_STREAM) end in GOAWAY
// ENHANCE_YOUR_CALM within a second: the server counts the resets it
// sends.
//
// Modes: hotpath's HTTP/2 engine, both APIs (forAttackTargets,
// internal/h2attack): an HTTP/2 attack shape; HTTP/1.1 has none and the
// hand-off's HTTP/2 is net/http's.
func TestH2AttackServerResetFloods(t *testing.T) {
	for _, name := range []string{"refused-stream-flood", "data-after-end-flood"} {
		a, ok := h2attack.Lookup(name)
		if !ok {
			t.Fatalf("no attack %q", name)
		}
		t.Run(name, func(t *testing.T) {
			forAttackTargets(t, false, func(t *testing.T, cfg h2attack.Config) {
				cfg.Path = "/delay/1000"
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				r, err := a.Run(ctx, cfg)
				if err != nil {
					t.Fatalf("attack: %v (%v)", err, r)
				}
				if msg := wantGoAway(r, h2.ErrCodeEnhanceYourCalm); msg != "" {
					t.Fatalf("%s: %v", msg, r)
				}
				if r.GoAwayAfter > time.Second {
					t.Errorf("GOAWAY %v after the flood started, want within a second: %v", r.GoAwayAfter, r)
				}
				if r.Resets > 2*h2MaxSentResets {
					t.Errorf("%d resets before the GOAWAY, want about %d", r.Resets, h2MaxSentResets)
				}
				t.Logf("GOAWAY after %v: %v", r.GoAwayAfter, r)
			})
		})
	}
}
