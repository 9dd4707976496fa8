package h2attack

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// dialOpts shapes a connection's client side.
type dialOpts struct {
	settings []h2.Setting // the client's SETTINGS
	connInc  uint32       // a connection WINDOW_UPDATE sent with them
	rate     int          // bytes a second the reader reads; 0: as fast as they come
	credit   bool         // give back flow-control credit for the DATA read
}

// conn is one attacking connection. Its reader goroutine reads every
// frame the server sends and records it; it never writes, so that a
// writer blocked on a server that stopped reading cannot stop it: the
// acknowledgements and WINDOW_UPDATEs it owes go through a flusher
// goroutine, which writes under wmu as every writer does.
type conn struct {
	r         *run
	nc        net.Conn
	opts      dialOpts
	scheme    string
	authority string
	letGo     atomic.Bool   // the attacker closed nc
	readDone  chan struct{} // closed when the reader ends
	flush     chan struct{} // wakes the flusher

	wmu     sync.Mutex // writes, and the fields below
	enc     h2.Encoder
	nextID  uint32
	scratch []byte

	mu          sync.Mutex // the reader's findings, and what it owes
	changed     chan struct{}
	gotSettings bool
	settings    []h2.Setting
	status      map[uint32]string
	ended       map[uint32]bool
	acked       map[[8]byte]bool
	goAway      bool
	closed      bool
	protoErr    error // the server's frames could not be read
	owedAcks    int
	sentAcks    int // SETTINGS acknowledgements written
	owedPings   [][8]byte
	connCredit  uint64
	credit      map[uint32]uint64
}

// dial opens an attacking connection: preface, SETTINGS, the server's
// SETTINGS acknowledged. The connection lives until c.close or ctx ends.
func (r *run) dial(ctx context.Context, opts dialOpts) (*conn, error) {
	reply := r.cfg.reply()
	d := net.Dialer{Timeout: reply}
	if r.cfg.LocalAddr != "" {
		ip := net.ParseIP(r.cfg.LocalAddr)
		if ip == nil {
			return nil, fmt.Errorf("h2attack: LocalAddr %q is not an IP address", r.cfg.LocalAddr)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	nc, err := d.DialContext(ctx, "tcp", r.cfg.Addr)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if r.cfg.TLS {
		scheme = "https"
		host, _, _ := net.SplitHostPort(r.cfg.Addr)
		tc := tls.Client(nc, &tls.Config{NextProtos: []string{"h2"}, InsecureSkipVerify: true, ServerName: host})
		hctx, cancel := context.WithTimeout(ctx, reply)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err == nil && tc.ConnectionState().NegotiatedProtocol != "h2" {
			err = fmt.Errorf("h2attack: %s negotiated ALPN %q, not h2", r.cfg.Addr, tc.ConnectionState().NegotiatedProtocol)
		}
		if err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	r.conns.Add(1)
	c := &conn{
		r:         r,
		nc:        nc,
		opts:      opts,
		scheme:    scheme,
		authority: r.cfg.Authority,
		readDone:  make(chan struct{}),
		flush:     make(chan struct{}, 1),
		nextID:    1,
		changed:   make(chan struct{}),
		status:    map[uint32]string{},
		ended:     map[uint32]bool{},
		acked:     map[[8]byte]bool{},
		credit:    map[uint32]uint64{},
	}
	if c.authority == "" {
		c.authority = r.cfg.Addr
	}
	// The preface goes out before the reader starts: over TLS the server's
	// SETTINGS may come first, and their acknowledgement must not.
	b := append([]byte(h2.ClientPreface), h2.AppendSettings(nil, opts.settings...)...)
	if opts.connInc > 0 {
		b = h2.AppendWindowUpdate(b, 0, opts.connInc)
	}
	nc.SetWriteDeadline(time.Now().Add(reply))
	err = c.write(b)
	nc.SetWriteDeadline(time.Time{})
	if err != nil {
		nc.Close()
		return nil, err
	}
	go c.readLoop()
	go c.flushLoop()
	go func() {
		select {
		case <-ctx.Done():
			c.close()
		case <-c.readDone:
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, reply)
	defer cancel()
	// The server's SETTINGS, acknowledged on the wire before the attack
	// writes a frame: an acknowledgement the flusher wrote later could
	// land inside a header block the attack leaves open (between HEADERS
	// and its CONTINUATIONs), which the server must reject.
	if !c.wait(wctx, func() bool { return c.gotSettings && c.sentAcks > 0 || c.closed }) || c.sentAcks == 0 {
		c.close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("h2attack: %s sent no SETTINGS within %v", r.cfg.Addr, reply)
	}
	if v, ok := c.setting(h2.SettingHeaderTableSize); ok {
		c.wmu.Lock()
		c.enc.SetMaxTableSize(v)
		c.wmu.Unlock()
	}
	return c, nil
}

// setting returns the value of a setting the server sent.
func (c *conn) setting(id h2.SettingID) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := uint32(0), false
	for _, s := range c.settings {
		if s.ID == id {
			v, ok = s.Val, true
		}
	}
	return v, ok
}

// close closes the connection from the attacker's side.
func (c *conn) close() {
	c.letGo.Store(true)
	c.nc.Close()
}

// closeWrite closes the attacker's side for writing (a TCP FIN, or
// TLS's close_notify), keeping it open for reading.
func (c *conn) closeWrite() error {
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// write writes b as one write, under wmu.
func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b)
}

func (c *conn) writeLocked(b []byte) error {
	n, err := c.nc.Write(b)
	c.r.sent.Add(int64(n))
	return err
}

// isClosed reports that the reader has ended: the server closed the
// connection, or the attacker did.
func (c *conn) isClosed() bool {
	select {
	case <-c.readDone:
		return true
	default:
		return false
	}
}

// err returns the protocol error the reader met, if any.
func (c *conn) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protoErr
}

// sawGoAway reports that the server sent GOAWAY.
func (c *conn) sawGoAway() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.goAway
}

// wait waits until cond, called with c.mu held, holds; false if ctx
// ended first.
func (c *conn) wait(ctx context.Context, cond func() bool) bool {
	for {
		c.mu.Lock()
		ok := cond()
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// waitFor is wait bounded by d as well as ctx.
func (c *conn) waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return c.wait(ctx, cond)
}

// request sends a request's HEADERS (and CONTINUATIONs): its
// pseudo-header fields encoded with the connection's encoder, then raw,
// fields encoded by hand that must leave the dynamic table alone. It
// returns the stream's identifier.
func (c *conn) request(method, path string, endStream bool, raw []byte) (uint32, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	id := c.nextID
	c.nextID += 2
	blk := append(c.requestBlockLocked(method, path), raw...)
	c.scratch = blk
	c.r.streams.Add(1)
	return id, c.writeLocked(h2.AppendHeaderBlock(nil, id, endStream, blk, h2.DefaultMaxFrameSize))
}

// requestBlockLocked encodes a request's pseudo-header fields into
// c.scratch.
func (c *conn) requestBlockLocked(method, path string) []byte {
	b := c.enc.StartBlock(c.scratch[:0])
	b = c.enc.AppendField(b, ":method", method)
	b = c.enc.AppendField(b, ":scheme", c.scheme)
	b = c.enc.AppendField(b, ":authority", c.authority)
	return c.enc.AppendField(b, ":path", path)
}

// readLoop reads and records the server's frames until the connection
// ends, at c.opts.rate bytes a second if set.
func (c *conn) readLoop() {
	var (
		buf      = make([]byte, 0, 64<<10)
		tmp      = make([]byte, 32<<10)
		dec      h2.Decoder
		block    []byte // a header block being joined from CONTINUATIONs
		consumed int64
		start    = time.Now()
		err      error
	)
	for {
		n := len(tmp)
		if rate := c.opts.rate; rate > 0 {
			n = min(n, max(rate/50, 1)) // 20 ms worth at a time
			due := start.Add(time.Duration(float64(consumed) / float64(rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		var k int
		k, err = c.nc.Read(tmp[:n])
		consumed += int64(k)
		c.r.read.Add(int64(k))
		buf = append(buf, tmp[:k]...)
		off := 0
		c.mu.Lock()
		for {
			f, m, ferr := h2.ReadFrame(buf[off:], h2.DefaultMaxFrameSize)
			if ferr == h2.ErrNeedMore {
				break
			}
			if m == 0 { // a connection error: the server broke the protocol
				c.protoErr = fmt.Errorf("h2attack: the server sent a bad frame: %w", ferr)
				err = c.protoErr
				break
			}
			off += m
			block = c.recordLocked(&f, &dec, block)
		}
		owed := c.owedAcks > 0 || len(c.owedPings) > 0 || c.connCredit >= h2.MinWindowUpdate || len(c.credit) > 0
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
		buf = buf[:copy(buf, buf[off:])]
		if owed {
			select {
			case c.flush <- struct{}{}:
			default:
			}
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	c.closed = true
	if !c.letGo.Load() {
		c.r.closed.Add(1)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	close(c.readDone)
}

// recordLocked records one frame from the server and notes what the
// client owes for it; it returns the header block being joined.
func (c *conn) recordLocked(f *h2.Frame, dec *h2.Decoder, block []byte) []byte {
	r := c.r
	r.frames.Add(1)
	switch f.Type {
	case h2.FrameSettings:
		if !f.Flags.Has(h2.FlagAck) {
			for i := range f.NumSettings() {
				c.settings = append(c.settings, f.Setting(i))
			}
			c.gotSettings = true
			c.owedAcks++
		}
	case h2.FramePing:
		if f.Flags.Has(h2.FlagAck) {
			c.acked[f.PingData()] = true
		} else if len(c.owedPings) < 16 {
			c.owedPings = append(c.owedPings, f.PingData())
		}
	case h2.FrameHeaders, h2.FrameContinuation:
		if f.Type == h2.FrameHeaders {
			block = block[:0]
		}
		block = append(block, f.BlockFragment()...)
		if f.Flags.Has(h2.FlagEndHeaders) {
			id := f.StreamID
			err := dec.Decode(block, func(fl h2.Field) {
				if string(fl.Name) == ":status" && (c.status[id] == "" || c.status[id][0] == '1') {
					c.status[id] = string(fl.Value)
					r.mu.Lock()
					if r.status == "" || r.status[0] == '1' {
						r.status = string(fl.Value)
					}
					r.mu.Unlock()
				}
			})
			if err != nil && c.protoErr == nil {
				c.protoErr = fmt.Errorf("h2attack: the server sent a bad header block: %w", err)
			}
		}
		if f.Type == h2.FrameHeaders && f.Flags.Has(h2.FlagEndStream) {
			c.ended[f.StreamID] = true
		}
	case h2.FrameData:
		r.data.Add(int64(len(f.Data())))
		if c.opts.credit && f.Length > 0 {
			c.connCredit += uint64(f.Length)
			if !f.Flags.Has(h2.FlagEndStream) {
				c.credit[f.StreamID] += uint64(f.Length)
			}
		}
		if f.Flags.Has(h2.FlagEndStream) {
			c.ended[f.StreamID] = true
			delete(c.credit, f.StreamID)
		}
	case h2.FrameRSTStream:
		r.resets.Add(1)
		c.ended[f.StreamID] = true
		delete(c.credit, f.StreamID)
	case h2.FrameGoAway:
		r.goAways.Add(1)
		c.goAway = true
		r.mu.Lock()
		r.code, r.debug = f.ErrCode(), string(f.DebugData())
		if r.firstGoAway.IsZero() {
			r.firstGoAway = time.Now()
		}
		r.mu.Unlock()
	}
	return block
}

// flushLoop writes what the reader owes the server: SETTINGS and PING
// acknowledgements, and WINDOW_UPDATEs for the DATA consumed (a stream's
// once it reaches h2.MinWindowUpdate, so that none is tiny).
func (c *conn) flushLoop() {
	var b []byte
	for {
		select {
		case <-c.flush:
		case <-c.readDone:
			return
		}
		b = b[:0]
		c.mu.Lock()
		acks := c.owedAcks
		for ; c.owedAcks > 0; c.owedAcks-- {
			b = h2.AppendSettingsAck(b)
		}
		for _, p := range c.owedPings {
			b = h2.AppendPing(b, h2.FlagAck, p)
		}
		c.owedPings = c.owedPings[:0]
		if c.connCredit >= h2.MinWindowUpdate {
			b = h2.AppendWindowUpdate(b, 0, uint32(min(c.connCredit, h2.MaxWindowSize)))
			c.connCredit = 0
		}
		for id, n := range c.credit {
			if n >= h2.MinWindowUpdate {
				b = h2.AppendWindowUpdate(b, id, uint32(min(n, h2.MaxWindowSize)))
				delete(c.credit, id)
			}
		}
		c.mu.Unlock()
		if len(b) > 0 && c.write(b) != nil {
			return
		}
		if acks > 0 {
			c.mu.Lock()
			c.sentAcks += acks
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		}
	}
}
