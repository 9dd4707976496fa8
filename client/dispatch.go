package client

// Which engine carries a request: RoundTrip sends it to a registered
// protocol, to Fallback, or on the Transport's own path; there roundTrip
// takes a stream on a pooled HTTP/2 connection or an HTTP/1.1
// connection, idle or dialed, and a dial's outcome (ALPN, h2c) says which.
// This is the one shared file that names both engines' declarations
// (internal/layout's TestEnginesMeetOnlyInDispatch).

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"
)

// RoundTrip implements [http.RoundTripper].
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if s := t.Stats; s != nil {
		start := time.Now()
		resp, err := t.roundTripAny(req)
		s.request(start, err)
		return resp, err
	}
	return t.roundTripAny(req)
}

// roundTripAny sends req where it goes: a registered protocol, Fallback,
// or this Transport's own path.
func (t *Transport) roundTripAny(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeRequestBody(req)
		return nil, errors.New("client: nil Request.URL")
	}
	if alt := t.altProto.Load(); alt != nil {
		if rt := (*alt)[req.URL.Scheme]; rt != nil {
			resp, err := rt.RoundTrip(req)
			if err != http.ErrSkipAltProtocol {
				return resp, err
			}
			if req, err = rewindBody(req); err != nil {
				return nil, err
			}
		}
	}
	if why := t.fallbackReason(req); why != fastPath {
		if t.Stats != nil {
			t.Stats.paths[why].Add(1)
		}
		return t.roundTripFallback(req)
	}
	if t.Stats != nil {
		t.Stats.paths[fastPath].Add(1)
	}
	if req.URL.Host == "" {
		closeRequestBody(req)
		return nil, errors.New("http: no Host in request URL") // net/http's words, which callers match
	}
	if err := validateRequest(req); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	//lint:ignore SA1019 honouring the deprecated Request.Cancel is the point: older code still closes it
	if req.Cancel != nil {
		return bodyErrorAsIs(t.roundTripLegacyCancel(req))
	}
	return bodyErrorAsIs(t.roundTrip(req, req.Context()))
}

// roundTrip sends a valid request on the Transport's own path, under ctx.
func (t *Transport) roundTrip(req *http.Request, ctx context.Context) (*http.Response, error) {
	var deadline time.Time
	if t.Timeout > 0 {
		deadline = time.Now().Add(t.Timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
	}
	check := !replayable(req)
	key := connKey{req.URL.Host, req.URL.Scheme == "https"}
	trace := httptrace.ContextClientTrace(ctx) // nil unless the caller traces (trace.go)
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(hostPort(key))
		}
		var cc *h2Conn
		var dialTok chan struct{}
		var err error
		reusedH2 := false
		if t.mayUseH2(key) {
			cc, dialTok, err = t.takeH2(ctx, key, deadline)
			if err != nil {
				closeRequestBody(req)
				return nil, err
			}
			reusedH2 = cc != nil
		}
		var c *conn
		if cc == nil {
			c, cc, err = t.getConn(ctx, key, check, deadline)
		}
		if dialTok != nil {
			t.endH2Dial(key, dialTok)
		}
		if err != nil {
			if errors.Is(err, errH2Retry) && attempt < 3 && ctx.Err() == nil {
				// A new HTTP/2 connection's GOAWAY came before the
				// request took its stream: nothing of it was sent, and
				// its body is untouched.
				continue
			}
			closeRequestBody(req)
			return nil, err
		}
		if trace != nil {
			traceGotConn(trace, c, cc, reusedH2)
			if c != nil {
				c.trace = trace
			}
		}
		if cc != nil {
			resp, bodyClosed, err := cc.send(req, ctx, deadline)
			if err == nil {
				return resp, nil
			}
			if errors.Is(err, errH2Retry) && attempt < 3 && ctx.Err() == nil {
				// The server did not process it: on another connection
				// (what rewind allows for a request none of whose bytes
				// were taken).
				if next, ok := rewind(req, true, !bodyClosed); ok {
					req = next
					continue
				}
			}
			if !bodyClosed {
				closeRequestBody(req)
			}
			return nil, err
		}
		resp, err := c.roundTrip(req, ctx, deadline)
		if err == nil {
			return resp, nil
		}
		c.close()
		if c.reused && !c.gotBytes && attempt < 3 && ctx.Err() == nil && connWasDead(err) && !errors.Is(err, errRequestBody) {
			if next, ok := rewind(req, !c.wrote, true); ok {
				req = next
				continue
			}
		}
		closeRequestBody(req)
		return nil, err
	}
}

// CloseIdleConnections closes every idle connection, the fallback's too.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, stack := range idle {
		for _, c := range stack {
			c.idleTimer.Stop()
			c.close()
		}
	}
	t.closeIdleH2()
	if f, ok := t.fallbackRT().(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

// staleCheckAfter: a connection idle longer than this is checked before it
// is used, for a close by the server or bytes it sent unasked (a late
// extra body, a 408): net/http's reader goroutine sees both while the
// connection is idle; this Transport has none and looks once, with one
// non-blocking peek. Connections reused within it (the steady state under
// load) skip the syscall, which costs about 9% of a request's CPU; there
// the window is the same race net/http has between a late byte and the
// next request.
const staleCheckAfter = time.Millisecond

// getConn pops the newest idle connection to host, or dials one. With
// check (a request that could not be retried), or when the connection has
// been idle over staleCheckAfter, it first makes sure the server has
// neither closed it nor written to it. A dial that ends in HTTP/2 (ALPN
// chose h2, or h2c) returns the new HTTP/2 connection instead, with a
// stream reserved for the request.
func (t *Transport) getConn(ctx context.Context, key connKey, check bool, deadline time.Time) (*conn, *h2Conn, error) {
	t.mu.Lock()
	stack := t.idle[key]
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack[len(stack)-1] = nil
		stack = stack[:len(stack)-1]
		t.idle[key] = stack
		idle := time.Since(c.idleSince)
		t.mu.Unlock()
		if idle >= t.idleTimeout() {
			c.close() // its timer is about to close it anyway
		} else if (check || idle > staleCheckAfter) && !c.clearDeadline().alive() {
			c.close()
		} else {
			c.reused = true
			return c, nil, nil
		}
		t.mu.Lock()
		stack = t.idle[key]
	}
	// None idle: a place to dial under MaxConnsPerHost, or wait for one.
	counted := t.MaxConnsPerHost > 0
	var w *connWaiter
	if counted && t.conns[key] >= t.MaxConnsPerHost {
		w = t.enqueueLocked(key)
		t.mu.Unlock()
		c, err := t.await(ctx, key, w, deadline)
		if err != nil || c != nil {
			return c, nil, err
		}
		// A place was given: dial.
	} else {
		if counted {
			if t.conns == nil {
				t.conns = make(map[connKey]int)
			}
			t.conns[key]++
		}
		t.mu.Unlock()
	}
	if err := ctx.Err(); err != nil {
		if counted {
			t.releasePlace(key)
		}
		return nil, nil, err
	}
	return t.dialOrTake(ctx, key, deadline, counted, t.lateBinding(key))
}

// dial makes a new connection to key, under deadline: HTTP/1.1, or
// HTTP/2 (ALPN chose h2, or h2c).
func (t *Transport) dial(ctx context.Context, key connKey, deadline time.Time) (*conn, *h2Conn, error) {
	dial := t.DialContext
	if dial == nil {
		dial = defaultDialer.DialContext
	}
	if !deadline.IsZero() {
		if d, ok := ctx.Deadline(); !ok || deadline.Before(d) {
			// The dial is part of the request: it ends by the deadline.
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
	}
	var nc net.Conn
	var err error
	h2 := false
	if key.tls && t.DialTLSContext != nil {
		nc, err = t.Stats.dial(ctx, t.DialTLSContext, "tcp", hostPort(key))
		if err == nil {
			nc, h2, err = t.dialedTLS(ctx, key.host, nc)
		}
	} else {
		nc, err = t.Stats.dial(ctx, dial, "tcp", hostPort(key))
		h2 = err == nil && !key.tls && t.h2Cleartext()
		if err == nil && key.tls {
			nc, h2, err = t.handshake(ctx, key.host, nc)
		}
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(deadline) && !deadline.IsZero() {
			return nil, nil, errRequestTimeout
		}
		return nil, nil, err
	}
	if h2 {
		cc, err := t.startH2(key, nc)
		return nil, cc, err
	}
	if key.tls {
		t.mu.Lock()
		t.noteProtocolLocked(key, false)
		t.mu.Unlock()
	}
	return newConn(t, key, nc), nil, nil
}

// lateBinding reports whether a dial to key runs beside the queue: for
// hosts spoken to in HTTP/1.1 (a dial that may end in HTTP/2 is waited
// for, so that concurrent first requests share it).
func (t *Transport) lateBinding(key connKey) bool {
	if !t.mayUseH2(key) {
		return true
	}
	if !key.tls {
		return false
	}
	t.mu.Lock()
	h2, known := t.h2hosts[key]
	t.mu.Unlock()
	return known && !h2
}

type dialResult struct {
	c   *conn
	cc  *h2Conn
	err error
}

// dialOrTake dials key on a goroutine of its own, so that the request
// can give up (its context, its deadline) while a dialer that ignores
// its context still runs; with queue, it waits in key's queue meanwhile:
// the first of the dial's connection and one handed over is the
// request's. A connection the request did not take goes to the pool.
// counted says the dial holds a place under MaxConnsPerHost.
func (t *Transport) dialOrTake(ctx context.Context, key connKey, deadline time.Time, counted, queue bool) (*conn, *h2Conn, error) {
	w := &connWaiter{} // nil channel: nothing is handed over
	if queue {
		t.mu.Lock()
		w = t.enqueueLocked(key)
		t.mu.Unlock()
	}
	done := make(chan dialResult, 1)
	go func() {
		c, cc, err := t.dial(ctx, key, deadline)
		if c != nil {
			c.counted = counted
		} else if counted {
			t.releasePlace(key)
		}
		done <- dialResult{c, cc, err}
	}()
	// The dial's result, once the request has taken another connection.
	orphan := func() {
		r := <-done
		if r.c != nil {
			t.passOn(key, r.c)
		}
		if r.cc != nil {
			r.cc.mu.Lock()
			r.cc.releaseLocked(0) // the stream reserved for this request
			r.cc.mu.Unlock()
		}
	}
	timeout, stop := deadlineTimer(deadline)
	defer stop()
	for {
		select {
		case r := <-done:
			t.leaveQueue(key, w, queue)
			return r.c, r.cc, r.err
		case <-ctx.Done():
			// The request gives up; its dial, canceled too, may still
			// bring a connection (a dialer that ignores its context):
			// the pool's.
			t.leaveQueue(key, w, queue)
			go orphan()
			return nil, nil, ctx.Err()
		case <-timeout:
			t.leaveQueue(key, w, queue)
			go orphan()
			return nil, nil, errRequestTimeout
		case c := <-w.ch:
			if c == nil {
				// A place freed while this request already holds one.
				t.releasePlace(key)
				t.mu.Lock()
				w = t.enqueueLocked(key)
				t.mu.Unlock()
				continue
			}
			c.reused = true
			go orphan()
			return c, nil, nil
		}
	}
}

// traceGotConn reports the connection a request got: c on HTTP/1.1, cc on
// HTTP/2 (reused: it was in the pool, not dialed for this request).
func traceGotConn(trace *httptrace.ClientTrace, c *conn, cc *h2Conn, reusedH2 bool) {
	if trace.GotConn == nil {
		return
	}
	if c != nil {
		info := httptrace.GotConnInfo{Conn: c.nc, Reused: c.reused}
		if c.reused {
			info.WasIdle, info.IdleTime = true, time.Since(c.idleSince)
		}
		trace.GotConn(info)
		return
	}
	// As net/http's: idle if no other stream was open (this one is
	// reserved already), for as long as the last one has been done.
	info := httptrace.GotConnInfo{Conn: cc.nc, Reused: reusedH2}
	cc.mu.Lock()
	if reusedH2 && cc.ids.Active() == 1 {
		info.WasIdle = true
		if !cc.idleSince.IsZero() {
			info.IdleTime = time.Since(cc.idleSince)
		}
	}
	cc.mu.Unlock()
	trace.GotConn(info)
}
