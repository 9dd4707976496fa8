package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/client"
)

// The net/http engine: one http.Transport per connection slot (so -c
// means c connections for HTTP/1.1 and HTTP/2 alike, and the slots never
// contend on a shared Transport's locks), and an httptrace.ClientTrace
// that times DNS, connect, TLS and the first response byte and sees
// whether each request reused a connection.

type netHTTPEngine struct {
	cfg *Config
	t   *target
	// mismatch is called with the first response of the wrong protocol.
	mismatch func(error)

	made  int           // slots made so far
	tr    roundTripper  // the last slot's: Config.Streams slots share one
	dials *dialCount    // tr's dials, with EngineHotpath
	ready chan struct{} // closed once tr's first request has its answer
	all   []*dialCount  // every slot transport's, with EngineHotpath
}

// clientPaths sums the paths the hotpath engine's transports took; nil
// for net/http's.
func (e *netHTTPEngine) clientPaths() *ClientPaths {
	if e.cfg.Engine != EngineHotpath {
		return nil
	}
	p := &ClientPaths{}
	for _, dc := range e.all {
		snap := dc.stats.Snapshot()
		p.add(&ClientPaths{Fast: snap.Fast, Fallback: snap.Fallback})
	}
	return p
}

// roundTripper is a transport a slot sends through and closes.
type roundTripper interface {
	http.RoundTripper
	CloseIdleConnections()
}

// dialCount counts a transport's dials and keeps the connect time of the
// last, for EngineHotpath, whose transport has no httptrace hooks: a
// request during which the count moved opened a connection.
type dialCount struct {
	n       atomic.Int64
	connect atomic.Int64 // ns, of the dial not yet reported
	stats   client.Stats // the transport's, for its TLS handshake times
	tlsSum  atomic.Int64 // ns, the handshake times already reported
}

// lastTLS returns the handshake time the transport added since the last
// call (the TLS phase of the connection a request opened).
func (dc *dialCount) lastTLS() time.Duration {
	s := dc.stats.TLS.Summary()
	sum := int64(s.Mean) * s.Count
	return time.Duration(max(sum-dc.tlsSum.Swap(sum), 0))
}

// dial wraps d to count and time its dials.
func (dc *dialCount) dial(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			dc.connect.Store(int64(time.Since(start)))
			dc.n.Add(1)
		}
		return nc, err
	}
}

func (e *netHTTPEngine) newSlot(rec *recorder) slot {
	if e.made++; e.tr != nil && (e.made-1)%e.cfg.streams() != 0 {
		// A stream of the last connection: its first request waits for
		// the connection's first answer, or net/http would dial a
		// connection per stream.
		ctx, cancel := context.WithCancel(context.Background())
		return &netHTTPConn{e: e, rec: rec, client: &http.Client{Transport: e.tr, Timeout: e.cfg.Timeout}, tr: e.tr, dials: e.dials, ctx: ctx, cancel: cancel, wait: e.ready}
	}
	if e.cfg.Engine == EngineHotpath {
		return e.newHotpathSlot(rec)
	}
	d := &net.Dialer{Timeout: e.cfg.Timeout, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if e.cfg.ResponseBody.Mode != DrainBody {
		dial = dialSignalingClose(d) // for awaitClose; draining runs keep net/http's own connections
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         dial,
		TLSClientConfig:     e.cfg.TLS.Clone(),
		TLSHandshakeTimeout: e.cfg.Timeout,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		DisableKeepAlives:   e.cfg.DisableKeepAlive,
		DisableCompression:  true,
		Protocols:           e.cfg.Proto.protocols(),
	}
	e.tr, e.dials, e.ready = tr, nil, make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	return &netHTTPConn{e: e, rec: rec, client: &http.Client{Transport: tr, Timeout: e.cfg.Timeout}, tr: tr, ctx: ctx, cancel: cancel, opened: e.ready}
}

// newHotpathSlot is newSlot for EngineHotpath: a client.Transport of the
// slot's own (shared by a connection's Config.Streams slots).
func (e *netHTTPEngine) newHotpathSlot(rec *recorder) slot {
	dials := new(dialCount)
	tr := &client.Transport{
		DialContext:         dials.dial(&net.Dialer{Timeout: e.cfg.Timeout, KeepAlive: 30 * time.Second}),
		TLSClientConfig:     e.cfg.TLS.Clone(),
		TLSHandshakeTimeout: e.cfg.Timeout,
		MaxIdleConnsPerHost: 1,
		DisableKeepAlives:   e.cfg.DisableKeepAlive,
		DisableCompression:  true,
		DrainMaxBytes:       -1, // an unread body costs its connection, as on the other engines
		Stats:               &dials.stats,
		Protocols:           e.cfg.Proto.protocols(),
	}
	e.tr, e.dials, e.ready = tr, dials, make(chan struct{})
	e.all = append(e.all, dials)
	ctx, cancel := context.WithCancel(context.Background())
	return &netHTTPConn{e: e, rec: rec, client: &http.Client{Transport: tr, Timeout: e.cfg.Timeout}, tr: tr, dials: dials, ctx: ctx, cancel: cancel, opened: e.ready}
}

// reqTrace is what the httptrace hooks of one request saw. A dial can
// outlive the request that started it (net/http dials in a goroutine of
// its own), so each request gets a fresh reqTrace and the hooks lock it.
type reqTrace struct {
	mu                            sync.Mutex
	dnsStart, connStart, tlsStart time.Time
	dns, connect, tls             time.Duration
	reused                        bool
	conn                          net.Conn // the connection GotConn reported
	firstByte                     time.Time
}

func (rt *reqTrace) set(f func()) {
	rt.mu.Lock()
	f()
	rt.mu.Unlock()
}

func (rt *reqTrace) clientTrace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		DNSStart:             func(httptrace.DNSStartInfo) { rt.set(func() { rt.dnsStart = time.Now() }) },
		DNSDone:              func(httptrace.DNSDoneInfo) { rt.set(func() { rt.dns = time.Since(rt.dnsStart) }) },
		ConnectStart:         func(string, string) { rt.set(func() { rt.connStart = time.Now() }) },
		ConnectDone:          func(string, string, error) { rt.set(func() { rt.connect = time.Since(rt.connStart) }) },
		TLSHandshakeStart:    func() { rt.set(func() { rt.tlsStart = time.Now() }) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { rt.set(func() { rt.tls = time.Since(rt.tlsStart) }) },
		GotConn:              func(i httptrace.GotConnInfo) { rt.set(func() { rt.reused, rt.conn = i.Reused, i.Conn }) },
		GotFirstResponseByte: func() { rt.set(func() { rt.firstByte = time.Now() }) },
	}
}

// netHTTPConn is one connection slot of the net/http engine.
type netHTTPConn struct {
	e      *netHTTPEngine
	rec    *recorder
	client *http.Client
	tr     roundTripper
	dials  *dialCount // with EngineHotpath: the transport's dials
	ctx    context.Context
	cancel context.CancelFunc
	// With Config.Streams: the first slot of a connection closes opened
	// after its first request; the others wait for it before their first.
	opened, wait chan struct{}
}

func (c *netHTTPConn) stop()  { c.cancel() }
func (c *netHTTPConn) close() { c.tr.CloseIdleConnections() }

func (c *netHTTPConn) do(s *sample) {
	if c.wait != nil {
		select {
		case <-c.wait:
		case <-c.ctx.Done():
		}
		c.wait = nil
	}
	if c.opened != nil {
		defer func(ch chan struct{}) { close(ch) }(c.opened)
		c.opened = nil
	}
	rt := &reqTrace{}
	method, target, reqBody, header := c.e.cfg.Method, c.e.t.url.String(), c.e.cfg.Body, c.e.cfg.Header
	if m := c.e.cfg.mix; m != nil {
		tg := &m.targets[s.target]
		method, target, reqBody, header = tg.Method, tg.URL, tg.Body, tg.Header
	}
	var body io.Reader
	if len(reqBody) > 0 {
		body = bytes.NewReader(reqBody)
	}
	ctx := c.ctx
	var cancel context.CancelFunc
	if c.e.cfg.ResponseBody.Mode != DrainBody {
		// Closing a body unread must cost its HTTP/1.1 connection, as
		// seed 002's A/B means it to: Go 1.27's transport would drain
		// the rest itself (after Close) and keep the connection, unless
		// the request's context ends first.
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	if c.dials == nil {
		ctx = httptrace.WithClientTrace(ctx, rt.clientTrace())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		s.failed, s.err, s.end = true, errOther, time.Now()
		return
	}
	for k, v := range header {
		if http.CanonicalHeaderKey(k) == "Host" {
			req.Host = v[0]
			continue
		}
		req.Header[k] = v
	}
	s.start = time.Now()
	var dials int64
	if c.dials != nil {
		dials = c.dials.n.Load()
	}
	resp, err := c.client.Do(req)
	if c.dials != nil {
		// No trace hooks: the head came when Do returned, and a request
		// during which the transport dialed opened a connection.
		s.firstByte, s.reused = time.Now(), c.dials.n.Load() == dials
		if connect := c.dials.connect.Swap(0); !s.reused && connect > 0 {
			c.rec.addConn(0, time.Duration(connect), c.dials.lastTLS())
		}
	} else {
		rt.mu.Lock()
		s.firstByte, s.reused = rt.firstByte, rt.reused
		if !rt.reused && (rt.connect > 0 || rt.tls > 0) {
			c.rec.addConn(rt.dns, rt.connect, rt.tls)
		}
		rt.mu.Unlock()
	}
	s.bytesOut = int64(len(reqBody))
	if err != nil {
		s.failed, s.err, s.end = true, c.classify(err), time.Now()
		return
	}
	s.status = resp.StatusCode
	switch {
	case resp.ProtoMajor == 2:
		s.proto = protoHTTP2
	case resp.ProtoMinor == 0:
		s.proto = protoHTTP10
	default:
		s.proto = protoHTTP11
	}
	var n int64
	switch c.e.cfg.ResponseBody.Mode {
	case DrainBody:
		n, err = io.Copy(io.Discard, resp.Body)
	case LimitBody:
		n, err = io.CopyN(io.Discard, resp.Body, c.e.cfg.ResponseBody.Limit)
		if err == io.EOF {
			err = nil
			cancel = nil // read to its end: the connection stays
		}
	}
	if cancel != nil && resp.ContentLength != 0 && n != resp.ContentLength {
		cancel() // unread bytes remain (or may): the connection closes
		if resp.ProtoMajor == 1 {
			rt.mu.Lock()
			conn := rt.conn
			rt.mu.Unlock()
			awaitClose(conn)
		}
	}
	resp.Body.Close()
	s.bytesIn = n
	s.end = time.Now()
	if err != nil {
		s.failed, s.err = true, c.classify(err)
		return
	}
	if want := c.e.cfg.Proto.major(); resp.ProtoMajor != want {
		s.failed, s.err = true, errProtocol
		c.e.mismatch(protocolError(c.e.cfg.Proto, resp.Proto))
	}
}

func (c *netHTTPConn) classify(err error) errKind {
	switch {
	case errors.Is(err, context.Canceled):
		return errCanceled
	case isTLSError(err):
		return errTLS
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return classifyDial(err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, http.ErrHandlerTimeout) {
		return errTimeout
	}
	return classify(err, errOther)
}

// isTLSError reports whether err is a failed TLS handshake: a certificate
// the client refused, an alert from the server, or a server that does not
// speak TLS at all.
func isTLSError(err error) bool {
	var (
		rec     tls.RecordHeaderError
		alert   tls.AlertError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	return errors.As(err, &rec) || errors.As(err, &alert) || errors.As(err, &verify) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid)
}

// protocols is what a transport may speak for p. For h2, HTTP/1.1 stays
// allowed so that a server without h2 in ALPN answers, and the run fails
// with a clear message rather than a handshake error.
func (p Proto) protocols() *http.Protocols {
	ps := new(http.Protocols)
	switch p {
	case H1:
		ps.SetHTTP1(true)
	case H2:
		ps.SetHTTP1(true)
		ps.SetHTTP2(true)
	case H2C:
		ps.SetUnencryptedHTTP2(true)
	}
	return ps
}

// major returns the HTTP major version p means.
func (p Proto) major() int {
	if p == H1 {
		return 1
	}
	return 2
}

// protocolError explains a response that came back in the wrong protocol.
func protocolError(want Proto, got string) error {
	hint := ""
	switch want {
	case H2:
		hint = ": the server did not offer h2 in the TLS handshake (ALPN); enable HTTP/2 on it, or measure HTTP/1.1 with --proto h1"
	case H2C:
		hint = ": the server does not speak cleartext HTTP/2 with prior knowledge; enable h2c on it, or use --proto h1"
	case H1:
		hint = ": use --proto h2 or h2c to measure HTTP/2"
	}
	return fmt.Errorf("load: protocol mismatch: asked for %s (--proto %s) but the response came over %s%s", want.httpName(), want, got, hint)
}

// noResponseError explains an HTTP/2 run in which no request got a
// response at all.
func noResponseError(want Proto, errs string) error {
	return fmt.Errorf("load: protocol mismatch: asked for %s (--proto %s) and no request got a response (errors: %s): the server likely does not speak %s%s",
		want.httpName(), want, errs, want.httpName(), map[Proto]string{H2C: " with prior knowledge (h2c); enable it, or use --proto h1", H2: "; check its TLS and ALPN, or use --proto h1"}[want])
}

func (p Proto) httpName() string {
	if p == H1 {
		return "HTTP/1.1"
	}
	return "HTTP/2"
}

// signalingConn is a net/http engine's connection that says when it is
// closed.
type signalingConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *signalingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// dialSignalingClose dials with d connections that say when they close,
// for awaitClose.
func dialSignalingClose(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &signalingConn{Conn: c, closed: make(chan struct{})}, nil
	}
}

// awaitClose waits until net/http's transport closed conn, an HTTP/1.1
// connection whose request's context was just canceled with its body
// unread, before that body's Close. The transport's read loop waits for
// either; given both, as when it reaches its wait after the cancel, it
// may take the Close, and Go 1.27 then drains a small body itself and
// keeps the connection (85 of 3,000 runs of
// TestFastEngineFraming/body_close under -race), which CloseBody must
// not. Once the cancel alone is ready, the loop closes the connection.
// It waits a second at most, should a transport ever keep it.
func awaitClose(conn net.Conn) {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(*signalingConn)
	if !ok {
		return
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-sc.closed:
	case <-t.C:
	}
}
