package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// The fast engine: cleartext HTTP/1.1 on the wire package. Each connection
// slot is one goroutine that writes a request rendered once at start,
// reads into a buffer of its own, parses the head in place with
// wire.Response and skips the body by its framing. Steady state it
// allocates nothing per request: the request bytes, the buffer, the
// parsed head's header slice and the chunked decoder are reused.

// fastReadBuf is each connection's read buffer: a response head must fit
// (wire's default MaxHeaderBytes is 16 KiB); bodies stream through it.
const fastReadBuf = 32 << 10

// fastEngine holds what all fast connections share.
type fastEngine struct {
	ctx   context.Context // the run's: a cancel cuts a dial short
	cfg   *Config
	addr  string   // resolved ip:port
	reqs  [][]byte // the request of each target (one without a mix), rendered once
	heads []bool   // HEAD requests have no response body
	// replay: the request may be sent again when a reused connection
	// turns out closed (see do).
	replay []bool
	lim    wire.Limits
}

// resolveOnce resolves addr's host before the run, for the engines that
// dial by address: the run measures the server, not the resolver. The
// lookup's time is the one DNS sample. It returns ip:port.
func resolveOnce(ctx context.Context, addr string, rec *recorder) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("load: bad address %q: %v", addr, err)
	}
	t0 := time.Now()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("load: cannot resolve %q: %w", host, err)
	}
	rec.dnsSample(time.Since(t0))
	return net.JoinHostPort(ips[0].Unmap().String(), port), nil
}

// renderRequest renders cfg's request for HTTP/1.1.
func renderRequest(cfg *Config, t *target) ([]byte, error) {
	return renderHTTP1(cfg.Method, t.url, t.host, cfg.Header, cfg.Body, cfg.DisableKeepAlive)
}

// renderHTTP1 renders one request for HTTP/1.1.
func renderHTTP1(method string, u *url.URL, host string, header http.Header, body []byte, closeConn bool) ([]byte, error) {
	path := u.RequestURI()
	b := wire.AppendRequestLine(nil, method, path)
	if h := header.Get("Host"); h != "" {
		host = h
	}
	b = wire.AppendHeader(b, "Host", []byte(host))
	for name, vs := range header {
		if http.CanonicalHeaderKey(name) == "Host" {
			continue
		}
		if !wire.ValidHeaderName(name) {
			return nil, fmt.Errorf("load: bad header name %q", name)
		}
		for _, v := range vs {
			if !wire.ValidHeaderValue(v) {
				return nil, fmt.Errorf("load: bad value for header %s: %q", name, v)
			}
			b = wire.AppendHeader(b, name, []byte(v))
		}
	}
	if len(body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		b = wire.AppendContentLength(b, int64(len(body)))
	}
	if closeConn {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, '\r', '\n')
	return append(b, body...), nil
}

func newFastEngine(ctx context.Context, cfg *Config, t *target, rec *recorder) (*fastEngine, error) {
	var reqs [][]byte
	var heads, replay []bool
	if m := cfg.mix; m != nil {
		for _, tg := range m.targets {
			b, err := renderHTTP1(tg.Method, tg.url, tg.url.Host, tg.Header, tg.Body, cfg.DisableKeepAlive)
			if err != nil {
				return nil, err
			}
			reqs, heads = append(reqs, b), append(heads, tg.Method == http.MethodHead)
			replay = append(replay, replayable(tg.Method, tg.Header))
		}
	} else {
		b, err := renderRequest(cfg, t)
		if err != nil {
			return nil, err
		}
		reqs, heads = [][]byte{b}, []bool{cfg.Method == http.MethodHead}
		replay = []bool{replayable(cfg.Method, cfg.Header)}
	}
	addr, err := resolveOnce(ctx, t.addr, rec)
	if err != nil {
		return nil, err
	}
	return &fastEngine{
		ctx:    ctx,
		cfg:    cfg,
		addr:   addr,
		reqs:   reqs,
		heads:  heads,
		replay: replay,
		lim:    wire.DefaultLimits(),
	}, nil
}

func (e *fastEngine) newSlot(rec *recorder) slot {
	return &fastConn{e: e, rec: rec, buf: make([]byte, fastReadBuf)}
}

// fastConn is one connection slot of the fast engine.
type fastConn struct {
	e    *fastEngine
	rec  *recorder
	buf  []byte
	rsp  wire.Response
	body wire.BodyDecoder
	kept []byte // the body, with Config.CheckResponse
	// full: the last read filled the buffer to its end, so more may wait
	// in the socket (see readBody).
	full bool

	raw    syscall.RawConn // conn's, for peek; made once per connection
	peekFn func(fd uintptr) bool
	peeked int

	mu        sync.Mutex // guards conn against stop
	conn      net.Conn
	stopped   bool
	served    int       // responses on this connection
	refreshAt time.Time // when the I/O deadline must move on
}

// stop unblocks any I/O in progress and keeps the slot from dialing again.
func (c *fastConn) stop() {
	c.mu.Lock()
	c.stopped = true
	if c.conn != nil {
		c.conn.SetDeadline(time.Unix(1, 0))
	}
	c.mu.Unlock()
}

func (c *fastConn) close() {
	c.mu.Lock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	c.mu.Unlock()
}

// dial opens the slot's connection.
func (c *fastConn) dial() error {
	t0 := time.Now()
	d := net.Dialer{Timeout: c.e.cfg.Timeout}
	conn, err := d.DialContext(c.e.ctx, "tcp", c.e.addr)
	if err != nil {
		if c.e.ctx.Err() != nil {
			return context.Canceled
		}
		return err
	}
	c.rec.addConn(0, time.Since(t0), 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		conn.Close()
		return context.Canceled
	}
	c.conn, c.served, c.refreshAt, c.raw = conn, 0, time.Time{}, nil
	return nil
}

// refreshDeadline moves the connection's I/O deadline to now+Timeout once
// half of Timeout has passed since the last move, so each request has at
// least Timeout/2 and at most Timeout, for one deadline update every
// Timeout/2 instead of one per request.
func (c *fastConn) refreshDeadline(now time.Time) {
	if now.Before(c.refreshAt) {
		return
	}
	c.mu.Lock()
	if !c.stopped {
		c.conn.SetDeadline(now.Add(c.e.cfg.Timeout))
	}
	c.mu.Unlock()
	c.refreshAt = now.Add(c.e.cfg.Timeout / 2)
}

// fail ends s with kind k and drops the connection. A request cut short
// by stop (the run canceled: Ctrl-C) is "canceled", not the timeout its
// past deadline looks like.
func (c *fastConn) fail(s *sample, k errKind) {
	c.mu.Lock()
	if c.stopped {
		k = errCanceled
	}
	c.mu.Unlock()
	s.failed, s.err, s.end = true, k, time.Now()
	c.close()
}

// replayable is net/http's rule for a request its transport sends again
// on a new connection: an idempotent method without side effects, or an
// idempotency key.
func replayable(method string, h http.Header) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return h.Get("Idempotency-Key") != "" || h.Get("X-Idempotency-Key") != ""
}

// do sends one request and reads its response into s. A request that got
// no byte of response on a reused connection, because the server had
// closed it (while it was idle, or right after the last response, without
// "Connection: close"), is sent once more on a new connection if it is
// replayable, as net/http's transport does; the time spent stays in its
// latency.
func (c *fastConn) do(s *sample) {
	s.start = time.Now()
	for {
		reused := c.conn != nil && c.served > 0
		c.exchange(s)
		if !s.failed || !reused || !s.firstByte.IsZero() || s.err != errClosed && s.err != errReset || !c.e.replay[s.target] {
			return
		}
		s.failed, s.err, s.end = false, 0, time.Time{}
	}
}

// exchange sends one request, from s.start on, and reads its response
// into s.
func (c *fastConn) exchange(s *sample) {
	s.proto = protoHTTP11
	if c.conn == nil {
		if err := c.dial(); err != nil {
			k := classifyDial(err)
			if errors.Is(err, context.Canceled) {
				k = errCanceled
			}
			c.fail(s, k)
			return
		}
	}
	s.reused = c.served > 0
	c.refreshDeadline(s.start)
	req := c.e.reqs[s.target]
	// A write that fails may have failed because the server answered
	// before it read the whole request (a 413 for a body too large) and
	// closed: that answer is read, as net/http's transport and wrk do.
	// Without one, the write's error is the request's.
	wn, werr := c.conn.Write(req)
	s.bytesOut += int64(wn)

	// The head. 1xx interim responses are skipped.
	n := 0
	var hn int
	for {
		var err error
		hn, err = c.rsp.Parse(c.buf[:n], &c.e.lim)
		if err == wire.ErrNeedMore {
			if n == len(c.buf) {
				c.fail(s, errParse)
				return
			}
			m, rerr := c.conn.Read(c.buf[n:])
			if m > 0 && s.firstByte.IsZero() {
				s.firstByte = time.Now()
			}
			n += m
			c.full = n == len(c.buf)
			s.bytesIn += int64(m)
			if rerr != nil && m == 0 {
				k := classify(rerr, errRead)
				if werr != nil && s.firstByte.IsZero() {
					k = classify(werr, errWrite)
				}
				c.fail(s, k)
				return
			}
			continue
		}
		if err != nil {
			c.fail(s, errParse)
			return
		}
		if c.rsp.StatusCode >= 200 || c.rsp.StatusCode == 101 {
			break
		}
		n = copy(c.buf, c.buf[hn:n])
	}
	s.status = c.rsp.StatusCode
	if c.rsp.ProtoMinor == 0 {
		s.proto = protoHTTP10
	}
	keep := !c.rsp.Close && !c.e.cfg.DisableKeepAlive && c.rsp.StatusCode != 101 && werr == nil
	c.body.Reset(c.rsp.Framing(c.e.heads[s.target]), c.rsp.ContentLength)
	c.kept = c.kept[:0]
	ok, keep := c.readBody(s, hn, n, keep)
	if !ok {
		if s.failed {
			return
		}
		c.fail(s, errParse) // bytes after the body: the framing is wrong
		return
	}
	s.end = time.Now()
	c.served++
	if check := c.e.cfg.CheckResponse; check != nil && check(s.status, c.kept) != nil {
		s.failed, s.err = true, errCheck
	}
	if !keep {
		c.close()
	}
}

// budget returns how many body bytes the body mode lets the generator
// read before it gives the body up, and the connection with it (HTTP/1.1
// cannot skip the rest).
func (c *fastConn) budget() int64 {
	switch c.e.cfg.ResponseBody.Mode {
	case CloseBody:
		return 0
	case LimitBody:
		return c.e.cfg.ResponseBody.Limit
	}
	return 1<<63 - 1
}

// readBody reads the response body whose first bytes are buf[p:end],
// decoded by c.body (whatever its framing), up to the body mode's budget.
// It reports whether the framing held (no bytes after the body) and
// whether the connection can be kept.
func (c *fastConn) readBody(s *sample, p, end int, keep bool) (ok, keepOut bool) {
	d := &c.body
	budget := c.budget()
	var body int64
	for {
		data, m, err := d.Decode(c.buf[p:end])
		p += m
		body += int64(len(data))
		if c.e.cfg.CheckResponse != nil {
			c.kept = append(c.kept, data...)
		}
		if body > budget && (err == nil || err == io.EOF || err == wire.ErrNeedMore) {
			return true, false // past the budget: given up, the connection goes
		}
		switch {
		case err == io.EOF:
			keep = keep && d.Framing() != wire.CloseBody
			if p != end {
				return false, false
			}
			if keep && c.full {
				// The last read filled the buffer: bytes behind the body
				// may wait in the socket, where the next request would
				// read them as its answer (a desync). A read with room to
				// spare took all there was.
				data, closed := c.peek()
				if data {
					return false, false
				}
				keep = !closed
			}
			return true, keep
		case err == wire.ErrNeedMore:
			if budget == 0 {
				return true, false // the rest is left unread: the connection goes
			}
			end = copy(c.buf, c.buf[p:end])
			p = 0
			if end == len(c.buf) {
				return false, false // a chunk-size line or trailer that big
			}
			r, rerr := c.conn.Read(c.buf[end:])
			s.bytesIn += int64(r)
			end += r
			c.full = end == len(c.buf)
			if rerr != nil && r == 0 {
				if rerr == io.EOF && d.EOF() == nil {
					return true, false // a close-delimited body's end
				}
				c.fail(s, classify(rerr, errRead))
				return false, false
			}
		case err != nil:
			return false, false
		}
	}
}
