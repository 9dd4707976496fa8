package client

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// response is an http.Response, its body and the backing of its header
// values (for heads of up to 8 fields) in one allocation.
type response struct {
	http.Response
	body body
	vals [8]string
}

// newResponse builds the http.Response for the head of n bytes at c.r. The
// header strings are cut from one copy of the head: one allocation for all
// of them.
func (c *conn) newResponse(req *http.Request, n int, gzipped, closeAfter bool, stop func() bool) (*http.Response, error) {
	raw := c.rbuf[c.r : c.r+n]
	head := string(raw)
	at := func(b []byte) string { // b aliases raw
		off := cap(raw) - cap(b)
		return head[off : off+len(b)]
	}
	p := &c.resp
	r := &response{}
	resp := &r.Response
	resp.StatusCode = p.StatusCode
	switch s := statusText[min(p.StatusCode, len(statusText)-1)]; {
	case s != "" && http.StatusText(p.StatusCode) == at(p.Reason):
		resp.Status = s
	case len(p.Reason) == 0:
		resp.Status = head[9:12] // as net/http: no trailing space
	default:
		resp.Status = head[9:12] + " " + at(p.Reason)
	}
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	if p.ProtoMinor == 0 {
		resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
	}
	resp.Request = req
	resp.TLS = c.tlsState

	vals := r.vals[:]
	if len(p.Headers) > len(vals) {
		vals = make([]string, len(p.Headers))
	}
	h := make(http.Header, len(p.Headers))
	var trailerKeys []string
	for i, f := range p.Headers {
		key := canonicalKey(at(f.Name))
		v := at(f.Value)
		switch key {
		case "Transfer-Encoding":
			vals[i] = "chunked"
			resp.TransferEncoding = vals[i : i+1 : i+1]
			continue
		case "Trailer":
			// net/http moves the announcement into resp.Trailer's keys.
			trailerKeys = append(trailerKeys, v)
			if p.Chunked {
				continue
			}
		}
		if old, ok := h[key]; ok {
			h[key] = append(old, v)
		} else {
			vals[i] = v
			h[key] = vals[i : i+1 : i+1]
		}
	}
	resp.Header = h
	c.r += n

	framing := p.Framing(req.Method == http.MethodHead)
	resp.Close = p.Close || closeAfter || framing == wire.CloseBody
	switch {
	case req.Method == http.MethodHead:
		resp.ContentLength = p.ContentLength
	case framing == wire.NoBody:
		resp.ContentLength = 0
	default:
		resp.ContentLength = p.ContentLength
	}
	if framing == wire.LengthBody && p.ContentLength == 0 {
		framing = wire.NoBody
	}
	if framing == wire.ChunkedBody {
		resp.ContentLength = -1
		if len(trailerKeys) > 0 {
			resp.Trailer = make(http.Header)
			for _, list := range trailerKeys {
				for _, k := range splitList(list) {
					resp.Trailer[canonicalKey(k)] = nil
				}
			}
		}
	}

	b := &r.body
	b.c, b.resp, b.framing, b.stop = c, resp, framing, stop
	b.keep = !resp.Close
	if framing == wire.NoBody {
		resp.Body = http.NoBody
		b.finish(true)
		return resp, nil
	}
	c.body.Reset(framing, p.ContentLength)
	if framing == wire.ChunkedBody {
		c.body.Chunked.OnTrailer = b.onTrailer
	}
	resp.Body = b
	if gzipped && framing != wire.NoBody && strings.EqualFold(h.Get("Content-Encoding"), "gzip") {
		h.Del("Content-Encoding")
		h.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipBody{body: b}
	}
	return resp, nil
}

// splitList splits a comma-separated field value, trimming whitespace.
func splitList(v string) []string {
	var out []string
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if s := trimOWS(v[:i]); s != "" {
			out = append(out, s)
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return out
}

// body streams a response body off its connection. When it is read to
// its end the connection goes back to the pool; Close before the end
// drains what is left within the Transport's caps, so the connection is
// kept, or closes it. Read and Close may be called concurrently: a Close
// during a Read aborts the Read and closes the connection.
type body struct {
	mu      sync.Mutex
	c       *conn // nil once released
	resp    *http.Response
	framing wire.Framing
	pending []byte      // decoded body bytes a short Read left
	stop    func() bool // the context watch, if any
	keep    bool        // the connection may be reused
	reading bool
	closed  bool
	err     error // sticky: io.EOF or the error that broke the body
}

// Read implements io.Reader.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, errClosedBody
	}
	if b.err != nil {
		b.mu.Unlock()
		return 0, b.err
	}
	if b.reading {
		b.mu.Unlock()
		return 0, errors.New("client: concurrent Read on a response body")
	}
	b.reading = true
	c := b.c
	b.mu.Unlock()

	n, err := b.read(c, p)

	b.mu.Lock()
	defer b.mu.Unlock()
	b.reading = false
	if b.closed {
		// Close came during this Read and interrupted the socket: the
		// connection is spent whatever the Read returned.
		b.finish(false)
		if err == nil || err == io.EOF {
			return n, err
		}
		return n, errClosedBody
	}
	if err != nil {
		if err != io.EOF {
			if b.stop != nil && !b.stop() || b.closed {
				// The context was canceled, or Close interrupted us.
				if cerr := b.resp.Request.Context().Err(); cerr != nil {
					err = cerr
				} else if b.closed {
					err = errClosedBody
				}
			} else if c != nil && errors.Is(err, os.ErrDeadlineExceeded) && c.pastDeadline() {
				err = errRequestTimeout
			}
			b.stop = nil
		}
		b.err = err
		b.finish(err == io.EOF)
	}
	return n, err
}

// read reads body bytes from c per the framing (c.body decodes it). Body
// bytes due next with nothing buffered go straight from the socket into
// p. It runs without b.mu.
func (b *body) read(c *conn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	d := &c.body
	for {
		if len(b.pending) > 0 {
			n := copy(p, b.pending)
			b.pending = b.pending[n:]
			if len(b.pending) == 0 && d.Done() {
				return n, io.EOF
			}
			return n, nil
		}
		if c.r == c.w {
			if left := d.DataLeft(); left > 0 {
				if int64(len(p)) > left {
					p = p[:left]
				}
				n, err := c.nc.Read(p)
				d.SkipData(int64(n))
				switch {
				case n > 0 && d.Done():
					return n, io.EOF
				case n > 0:
					return n, nil
				case err == io.EOF:
					if err := d.EOF(); err != nil {
						return 0, err
					}
				}
				return 0, err
			}
		}
		data, used, err := d.Decode(c.rbuf[c.r:c.w])
		c.r += used
		if len(data) > 0 {
			n := copy(p, data)
			b.pending = data[n:]
			if err == io.EOF && len(b.pending) == 0 {
				return n, io.EOF
			}
			return n, nil
		}
		switch err {
		case nil:
			continue
		case io.EOF:
			return 0, io.EOF
		case wire.ErrNeedMore:
			if ferr := c.fill(); ferr != nil {
				return 0, ferr // an end of input here cuts the body short
			}
		default:
			return 0, err
		}
	}
}

func (b *body) onTrailer(name, value []byte) {
	if b.resp.Trailer == nil {
		b.resp.Trailer = make(http.Header)
	}
	b.resp.Trailer.Add(string(name), string(value))
}

// finish releases the connection: back to the pool when the body ended
// cleanly (ok) and the connection may be reused, else closed. Called with
// b.mu held, or before b is shared.
func (b *body) finish(ok bool) {
	c := b.c
	if c == nil {
		return
	}
	b.c = nil
	c.body.Chunked.OnTrailer = nil
	if up := c.upload; up != nil {
		c.upload = nil
		if !up.settle(c) {
			ok = false // the request's body was not written whole
		}
	}
	if b.stop != nil && !b.stop() {
		ok = false // the context fired: the socket has a past deadline
	}
	b.stop = nil
	if ok && b.keep && c.r == c.w && b.framing != wire.CloseBody {
		trace := c.trace
		err := c.t.putIdle(c)
		if trace != nil && trace.PutIdleConn != nil && err != errKeepAlivesOff {
			trace.PutIdleConn(err) // as net/http's: not when keep-alives are off
		}
		return
	}
	c.trace = nil
	c.close()
}

// Close implements io.Closer.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if b.c == nil {
		return nil
	}
	if b.reading {
		// A Read is blocked on the socket: wake it; it closes the conn.
		b.c.interrupt()
		return nil
	}
	b.finish(b.drain())
	return nil
}

// drain reads the rest of the body within the Transport's caps and reports
// whether it reached the end.
func (b *body) drain() bool {
	c := b.c
	max := c.t.DrainMaxBytes
	if max == 0 {
		max = DefaultDrainMaxBytes
	}
	if max < 0 || !b.keep || b.framing == wire.CloseBody {
		return false
	}
	if b.framing == wire.LengthBody && c.body.DataLeft() > max {
		return false
	}
	wait := c.t.DrainTimeout
	if wait <= 0 {
		wait = DefaultDrainTimeout
	}
	ctx := b.resp.Request.Context()
	if c.setReadDeadline(ctx, time.Now().Add(wait)) != nil {
		return false
	}
	var buf [512]byte
	var total int64
	for total <= max {
		n, err := b.read(c, buf[:])
		total += int64(n)
		if err == io.EOF {
			return c.setReadDeadline(ctx, time.Time{}) == nil
		}
		if err != nil {
			return false
		}
	}
	return false
}

// gzipBody decompresses a gzip body on its first Read, as http.Transport
// does for the gzip it asked for, on either protocol; a body closed unread
// costs no decompressor.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipBody) Close() error { return g.body.Close() }
