package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// The fast engine's HTTP/2: h2 (TLS, ALPN "h2") and h2c (prior
// knowledge) on wire/h2's framer and HPACK codec.
//
// The runner's model holds: a slot sends one request at a time from its
// own goroutine, and Config.Streams consecutive slots (a group) share one
// connection. A slot that needs a stream takes the group's mutex, appends
// its HEADERS frame (and as much of its body as the windows allow) to the
// connection's write buffer and parks on its own channel. Each connection
// has a reader goroutine that reads many frames per read syscall into a
// 64 KiB buffer, handles them all under one hold of the mutex, wakes the
// slots whose responses are complete (with one clock reading per batch
// for their first-byte and end times), then yields until those slots have
// queued their next requests and writes them, with the batch's own
// frames (SETTINGS and PING acks, WINDOW_UPDATEs, RST_STREAMs), in one
// write: per batch one read and one write, as h2load. What no batch
// flushes (a connection's first requests, open-loop sends, long request
// bodies) wakes the connection's writer goroutine, which yields once, so
// that other runnable slots queue theirs too, and writes it all.
//
// Requests are rendered once per target as an HPACK block of static
// table references and literals without indexing, so the same bytes are
// valid whatever the decoder's state: only the stream ID in the frame
// header changes. The first block on a connection starts with a dynamic
// table size update to 0, so a server that lowers
// SETTINGS_HEADER_TABLE_SIZE finds nothing to ask for. Responses are
// decoded with the connection's h2.Decoder (its dynamic table in step
// with the server's encoder), DATA is counted and its flow-control
// credit returned in WINDOW_UPDATEs of half the 16 MiB windows. Steady
// state allocates nothing per request: the stream record is the slot's,
// the buffers and the stream table are the connection's.

const (
	h2ReadBuf    = 64 << 10  // the reader's buffer: many frames per read
	h2Window     = 16 << 20  // the receive windows this client grants, stream and connection
	h2PumpBudget = 256 << 10 // request body bytes queued per flush
	h2MaxRetries = 4         // sends of one request refused unprocessed (GOAWAY, REFUSED_STREAM)
)

// h2Engine holds what every HTTP/2 connection of a run shares.
type h2Engine struct {
	ctx      context.Context // the run's: a cancel cuts a dial short
	cfg      *Config
	addr     string      // resolved ip:port
	tls      *tls.Config // nil for h2c
	blocks   [][]byte    // each target's request field block, rendered once
	frames   [][]byte    // each target's HEADERS frame for stream 0, when its block fits one
	bodies   [][]byte    // each target's request body
	heads    []bool      // each target's is a HEAD: a content-length describes no body
	mismatch func(error) // called when the server does not speak HTTP/2
	proto    Proto

	made  int      // slots made so far
	group *h2Group // the last slot's: Config.Streams slots share one

	firstID uint32 // tests: the first stream ID of every connection (0 means 1)
}

func newH2Engine(ctx context.Context, cfg *Config, t *target, rec *recorder, mismatch func(error)) (*h2Engine, error) {
	e := &h2Engine{ctx: ctx, cfg: cfg, mismatch: mismatch, proto: cfg.Proto}
	scheme := "http"
	if t.tls {
		scheme = "https"
	}
	// An encoder whose table is 0 bytes indexes nothing: every field it
	// writes is a static reference or a literal without indexing.
	var enc h2.Encoder
	enc.SetMaxTableSize(0)
	enc.StartBlock(nil) // the size update: sent once per connection, by conn
	if m := cfg.mix; m != nil {
		for _, tg := range m.targets {
			b, err := renderH2(&enc, tg.Method, tg.url, scheme, tg.url.Host, tg.Header, tg.Body)
			if err != nil {
				return nil, err
			}
			e.blocks, e.bodies = append(e.blocks, b), append(e.bodies, tg.Body)
			e.heads = append(e.heads, tg.Method == http.MethodHead)
		}
	} else {
		b, err := renderH2(&enc, cfg.Method, t.url, scheme, t.host, cfg.Header, cfg.Body)
		if err != nil {
			return nil, err
		}
		e.blocks, e.bodies = [][]byte{b}, [][]byte{cfg.Body}
		e.heads = []bool{cfg.Method == http.MethodHead}
	}
	for i, b := range e.blocks {
		var f []byte
		if len(b) <= h2.DefaultMaxFrameSize {
			f = h2.AppendHeaderBlock(nil, 0, len(e.bodies[i]) == 0, b, h2.DefaultMaxFrameSize)
		}
		e.frames = append(e.frames, f)
	}
	addr, err := resolveOnce(ctx, t.addr, rec)
	if err != nil {
		return nil, err
	}
	e.addr = addr
	if t.tls {
		tc := cfg.TLS.Clone()
		if tc == nil {
			tc = &tls.Config{}
		}
		if tc.ServerName == "" {
			tc.ServerName = t.url.Hostname()
		}
		// http/1.1 too, so that a server without h2 answers the handshake
		// and the run fails as a protocol mismatch, not a TLS error.
		tc.NextProtos = []string{"h2", "http/1.1"}
		e.tls = tc
	}
	return e, nil
}

// renderH2 renders a request's field block with wire/h2's request
// encoder, as the client does: pseudo-header fields (Host, if the header
// sets it, as :authority), then header by the rules of RFC 9113 §8.2.2
// (lowercased, in sorted order so that a run's block is the same every
// time), then the body's content-length.
func renderH2(enc *h2.Encoder, method string, u *url.URL, scheme, host string, header http.Header, body []byte) ([]byte, error) {
	if h := header.Get("Host"); h != "" {
		host = h
	}
	b := enc.StartBlock(nil)
	b = enc.AppendRequestPseudo(b, method, scheme, host, []byte(u.RequestURI()), nil)
	names := make([]string, 0, len(header))
	for name := range header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !wire.ValidHeaderName(name) {
			return nil, fmt.Errorf("load: bad header name %q", name)
		}
		for _, v := range header[name] {
			if !wire.ValidHeaderValue(v) {
				return nil, fmt.Errorf("load: bad value for header %s: %q", name, v)
			}
		}
		b = enc.AppendRequestField(b, strings.ToLower(name), header[name], nil)
	}
	return enc.AppendContentLength(b, method, int64(len(body)), nil), nil
}

func (e *h2Engine) newSlot(rec *recorder) slot {
	if e.made++; e.group == nil || (e.made-1)%e.cfg.streams() == 0 {
		e.group = &h2Group{e: e, rec: rec}
	}
	g := e.group
	g.slots++
	return &h2Slot{g: g, st: h2Stream{wake: make(chan struct{}, 1)}}
}

// h2Group is the connection that Config.Streams slots share: the one new
// streams go to, and any still draining after a GOAWAY. Its mutex guards
// the state of its connections too (streams, windows, write buffer):
// the reader takes it once per read batch, a slot once per request.
type h2Group struct {
	e   *h2Engine
	rec *recorder

	mu       sync.Mutex
	cur      *h2Conn     // where new streams go; nil: the next slot dials
	conns    []*h2Conn   // connections whose goroutines run
	dialing  bool        // a slot is dialing cur
	dialWait []*h2Stream // slots waiting for that dial
	stopped  bool        // stop or the last close: no more dials
	slots    int         // slots not yet closed
	wg       sync.WaitGroup
}

// h2Slot is one slot of the HTTP/2 engine: one request at a time.
type h2Slot struct {
	g  *h2Group
	st h2Stream
}

// h2Stream is a slot's request in flight: what the slot waits for, what
// the reader fills. Reused from request to request.
type h2Stream struct {
	wake chan struct{} // one token per wait: stream done, room granted, dial done

	id      uint32
	target  uint16
	start   time.Time // the sample's: timeouts count from it
	granted bool      // room on the connection was reserved for this waiter
	timeout bool      // the wait for room ran out

	body     []byte    // request body still to send
	sendWin  h2.Window // stream send window
	in       h2.Inflow // stream receive window
	queued   bool      // in the connection's sending list
	final    bool      // the final response head arrived
	retry    bool      // refused unprocessed: send again
	status   int
	first    time.Time
	end      time.Time
	bytesIn  int64 // frame bytes of the stream's HEADERS, CONTINUATION, DATA
	bytesOut int64
	bodyIn   int64 // DATA bytes, for the body modes
	declared int64 // the response's content-length; -1 when none, or it describes no body (HEAD, 204, 304)
	failed   bool
	err      errKind
}

func (sl *h2Slot) stop()  { sl.g.stop() }
func (sl *h2Slot) close() { sl.g.release() }

// do sends one request and waits for its response.
func (sl *h2Slot) do(s *sample) {
	s.start = time.Now()
	s.proto = protoHTTP2
	g, st := sl.g, &sl.st
	st.start = s.start
	for try := 0; ; try++ {
		c, kind := g.acquire(st)
		if c == nil {
			s.failed, s.err, s.end = true, kind, time.Now()
			return
		}
		s.reused = c.open(st, s.target)
		g.mu.Unlock()
		<-st.wake
		if st.retry && try+1 < h2MaxRetries {
			continue
		}
		s.firstByte, s.end, s.status = st.first, st.end, st.status
		s.bytesIn, s.bytesOut = st.bytesIn, st.bytesOut
		if st.failed {
			s.failed, s.err, s.status = true, st.err, 0
		}
		return
	}
}

// acquire returns a connection with room for one more stream, that room
// reserved, and g.mu held; or nil and why the request fails, g.mu not
// held. It dials when the group has no usable connection, and waits for
// room under the server's MAX_CONCURRENT_STREAMS (and for its first
// SETTINGS, which says what that is).
func (g *h2Group) acquire(st *h2Stream) (*h2Conn, errKind) {
	g.mu.Lock()
	for {
		if g.stopped {
			g.mu.Unlock()
			return nil, errCanceled
		}
		c := g.cur
		if c == nil {
			if g.dialing {
				g.dialWait = append(g.dialWait, st)
				g.mu.Unlock()
				<-st.wake
				g.mu.Lock()
				continue
			}
			g.dialing = true
			g.mu.Unlock()
			c, kind := g.dial()
			g.mu.Lock()
			g.dialing = false
			for _, w := range g.dialWait {
				w.wake <- struct{}{}
			}
			clear(g.dialWait)
			g.dialWait = g.dialWait[:0]
			if c == nil {
				g.mu.Unlock()
				return nil, kind
			}
			if g.stopped {
				c.raw.Close()
				g.mu.Unlock()
				return nil, errCanceled
			}
			g.cur = c
			g.conns = append(g.conns, c)
			g.wg.Add(2)
			go c.readLoop()
			go c.writeLoop()
			continue
		}
		if c.room() && c.ids.Reserve(c.peer.MaxConcurrentStreams) {
			return c, 0
		}
		st.granted, st.timeout = false, false
		c.roomWait = append(c.roomWait, st)
		g.mu.Unlock()
		<-st.wake
		g.mu.Lock()
		switch {
		case st.timeout:
			g.mu.Unlock()
			return nil, errTimeout
		case c.failed && !c.retiredWell:
			// The connection this request waited on failed: so does
			// the request (a server that never speaks HTTP/2 costs one
			// error per waiting slot, not a dial loop). One that retired
			// first (GOAWAY, then the server closed it) was healthy: its
			// waiters, granted room or not, were never sent and go on to
			// the next.
			g.mu.Unlock()
			return nil, c.failKind
		case st.granted && c.mayOpenGranted():
			return c, 0
		case st.granted && !c.dead:
			c.ids.Done(0) // retired since: give the room back
			c.drained()
		}
		// Retired (GOAWAY, one request per connection, stream IDs spent
		// before room was granted): try the next connection.
	}
}

// dial opens a connection: TCP, TLS with ALPN for h2, the preface queued.
func (g *h2Group) dial() (*h2Conn, errKind) {
	e := g.e
	t0 := time.Now()
	d := net.Dialer{Timeout: e.cfg.Timeout}
	raw, err := d.DialContext(e.ctx, "tcp", e.addr)
	if err != nil {
		if e.ctx.Err() != nil {
			return nil, errCanceled
		}
		return nil, classifyDial(err)
	}
	connect := time.Since(t0)
	nc := raw
	var hs time.Duration
	if e.tls != nil {
		t1 := time.Now()
		tc := tls.Client(raw, e.tls)
		ctx, cancel := context.WithTimeout(e.ctx, e.cfg.Timeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			raw.Close()
			switch {
			case e.ctx.Err() != nil:
				return nil, errCanceled
			case isTLSError(err):
				return nil, errTLS
			case errors.Is(err, context.DeadlineExceeded):
				return nil, errTimeout
			}
			return nil, classify(err, errTLS)
		}
		hs = time.Since(t1)
		if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
			g.rec.addConn(0, connect, hs)
			raw.Close()
			e.mismatch(protocolError(e.proto, "HTTP/1.1"))
			return nil, errProtocol
		}
		nc = tc
	}
	g.rec.addConn(0, connect, hs)
	return newH2Conn(g, raw, nc), 0
}

// stop aborts the group's I/O in progress and keeps it from dialing.
func (g *h2Group) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.stopped = true
	for _, c := range g.conns {
		c.raw.SetDeadline(time.Unix(1, 0))
	}
}

// release is a slot's close: the last of the group's slots closes its
// connections and waits for their goroutines.
func (g *h2Group) release() {
	g.mu.Lock()
	g.slots--
	last := g.slots == 0
	if last {
		g.stopped = true
		for _, c := range g.conns {
			c.shutLocked()
		}
	}
	g.mu.Unlock()
	if last {
		g.wg.Wait()
	}
}
