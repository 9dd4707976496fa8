package client

// The HTTP/1.1 response head as an http.Response: status, header map
// and trailer keys cut from one copy of the head, its body framed.

import (
	"net/http"
	"net/textproto"
	"strings"

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
	// resp.Close says what the response said (net/http's meaning);
	// whether the connection is kept is the body's keep.
	resp.Close = p.Close || framing == wire.CloseBody
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
	b.keep = !resp.Close && !closeAfter
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

// canonicalKey returns the canonical form of a header name taken from the
// head string, without allocating when it already is canonical.
func canonicalKey(s string) string { return textproto.CanonicalMIMEHeaderKey(s) }
