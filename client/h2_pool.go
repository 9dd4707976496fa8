package client

// The Transport's HTTP/2 connections (h2_*.go) in its pools: any number
// per host, a request taking a stream on the first with one free, and a
// new connection dialed when none has (x/net's client keeps one per host,
// and its lock and window become the ceiling).

import (
	"context"
	"net"
	"time"
)

// h2Pools are the Transport's HTTP/2 pools, under its mu: the
// connections by pool, the dial in progress per pool, what each TLS host
// chose by ALPN, the sweep of idle connections and what it saw idle last
// time.
type h2Pools struct {
	h2conns    map[connKey][]*h2Conn
	h2dials    map[connKey]chan struct{}
	h2hosts    map[connKey]bool
	h2sweep    *time.Timer
	h2idleSeen map[*h2Conn]bool
	// testHookH2Started, set by tests only, runs in startH2 between a
	// new connection's start and the reservation of its first stream,
	// with no lock held.
	testHookH2Started func(*h2Conn)
}

// h2Cleartext reports whether http:// requests use HTTP/2 with prior
// knowledge (Protocols with UnencryptedHTTP2 and without HTTP1), unless
// GODEBUG has http2client=0.
func (t *Transport) h2Cleartext() bool {
	p := t.Protocols
	return p != nil && p.UnencryptedHTTP2() && !p.HTTP1() && !t.http2Off()
}

// mayUseH2 reports whether a request to key may go over HTTP/2: h2c, or
// TLS with HTTP/2 allowed (takeH2 then looks at what the host chose).
func (t *Transport) mayUseH2(key connKey) bool {
	if !key.tls {
		return t.h2Cleartext()
	}
	return t.offersHTTP2()
}

// takeH2 reserves a stream on a pooled HTTP/2 connection to key. With
// none free it waits for a dial of that host in progress, or, when there
// is none, returns a dial token: the caller dials (getConn) and then
// calls endH2Dial with the token, so that a burst of requests to a new
// host makes one connection, not one each.
func (t *Transport) takeH2(ctx context.Context, key connKey, deadline time.Time) (cc *h2Conn, dialTok chan struct{}, err error) {
	var timer *time.Timer // one for all the waits: the deadline does not move
	var timeout <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		t.mu.Lock()
		if h2, known := t.h2hosts[key]; known && !h2 {
			t.mu.Unlock()
			return nil, nil, nil // it answered on HTTP/1.1: dial that
		}
		conns := t.h2conns[key]
		for i := 0; i < len(conns); {
			c := conns[i]
			if c.reserve() {
				t.mu.Unlock()
				return c, nil, nil
			}
			if !c.usable() { // not full but gone: out of the pool
				conns = append(conns[:i], conns[i+1:]...)
				t.h2conns[key] = conns
				delete(t.h2idleSeen, c)
				continue
			}
			i++
		}
		wait := t.h2dials[key]
		if wait == nil {
			dialTok = make(chan struct{})
			if t.h2dials == nil {
				t.h2dials = make(map[connKey]chan struct{})
			}
			t.h2dials[key] = dialTok
			t.mu.Unlock()
			return nil, dialTok, nil
		}
		t.mu.Unlock()
		if !deadline.IsZero() && timer == nil {
			timer = time.NewTimer(time.Until(deadline))
			timeout = timer.C
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-timeout:
			return nil, nil, errRequestTimeout
		}
	}
}

// endH2Dial ends the dial takeH2 handed out: the requests waiting for it
// look at the pool again.
func (t *Transport) endH2Dial(key connKey, tok chan struct{}) {
	t.mu.Lock()
	if t.h2dials[key] == tok {
		delete(t.h2dials, key)
	}
	t.mu.Unlock()
	close(tok)
}

// startH2 runs HTTP/2 on a connection just dialed to key (ALPN chose h2,
// or h2c), puts it in the pool and reserves a stream on it for the
// request that dialed it.
func (t *Transport) startH2(key connKey, nc net.Conn) (*h2Conn, error) {
	cc, err := newH2Conn(t, key, nc)
	if err != nil {
		return nil, err
	}
	if h := t.testHookH2Started; h != nil {
		h(cc)
	}
	if !cc.reserve() { // a new connection has room for one stream, unless it ended already
		// The read loop ended it before the request could take its
		// stream, and nothing was reserved to give back. After the
		// server's GOAWAY the request, never sent, goes to another
		// connection (errH2Retry), as net/http's does (the GOAWAY
		// marks its connection dead: ErrNoCachedConn); otherwise (the
		// server's first bytes were not HTTP/2's, or it closed the
		// connection) it fails with the connection's error, as
		// net/http fails the first request of a connection that closed
		// (errClientConnNotEstablished).
		cc.mu.Lock()
		err := cc.err
		if cc.ids.GoingAway() {
			err = &h2RetryError{cause: errH2GoAway}
		}
		cc.mu.Unlock()
		cc.close()
		if err == nil {
			err = errH2Closed
		}
		return nil, err
	}
	t.mu.Lock()
	if t.h2conns == nil {
		t.h2conns = make(map[connKey][]*h2Conn)
		t.h2idleSeen = make(map[*h2Conn]bool)
	}
	t.h2conns[key] = append(t.h2conns[key], cc)
	t.noteProtocolLocked(key, true)
	if t.h2sweep == nil {
		t.h2sweep = time.AfterFunc(t.idleTimeout()/2, t.sweepH2)
	}
	t.mu.Unlock()
	return cc, nil
}

// noteProtocolLocked remembers whether key's server chose HTTP/2, so that
// requests to a host that speaks HTTP/1.1 only stop waiting for HTTP/2
// dials.
func (t *Transport) noteProtocolLocked(key connKey, h2 bool) {
	if !key.tls {
		return
	}
	if t.h2hosts == nil {
		t.h2hosts = make(map[connKey]bool)
	}
	t.h2hosts[key] = h2
}

// sweepH2 closes the HTTP/2 connections idle at two sweeps in a row,
// half an IdleConnTimeout apart, and comes again while any is left.
func (t *Transport) sweepH2() {
	t.mu.Lock()
	closing, left := t.dropH2Locked(func(cc *h2Conn, idle bool) bool {
		if idle && t.h2idleSeen[cc] {
			return true
		}
		t.h2idleSeen[cc] = idle
		return false
	})
	if left > 0 {
		t.h2sweep.Reset(t.idleTimeout() / 2)
	} else {
		t.h2sweep = nil
	}
	t.mu.Unlock()
	for _, cc := range closing {
		cc.close()
	}
}

// closeIdleH2 closes the HTTP/2 connections with no stream open.
func (t *Transport) closeIdleH2() {
	t.mu.Lock()
	closing, _ := t.dropH2Locked(func(_ *h2Conn, idle bool) bool { return idle })
	t.mu.Unlock()
	for _, cc := range closing {
		cc.close()
	}
}

// dropH2Locked takes out of the pools the HTTP/2 connections that take
// no new streams and those drop picks (given whether each is idle), and
// returns the latter, for the caller to close outside t.mu, and how many
// connections are left.
func (t *Transport) dropH2Locked(drop func(cc *h2Conn, idle bool) bool) (closing []*h2Conn, left int) {
	for key, conns := range t.h2conns {
		kept := conns[:0]
		for _, cc := range conns {
			switch {
			case !cc.usable():
				delete(t.h2idleSeen, cc)
			case drop(cc, cc.idle()):
				delete(t.h2idleSeen, cc)
				closing = append(closing, cc)
			default:
				kept = append(kept, cc)
			}
		}
		clear(conns[len(kept):])
		if len(kept) == 0 {
			delete(t.h2conns, key)
		} else {
			t.h2conns[key] = kept
		}
		left += len(kept)
	}
	return closing, left
}

// usable reports whether the connection may still take new streams.
func (cc *h2Conn) usable() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return !cc.closed && !cc.ids.GoingAway() && !cc.spent
}
