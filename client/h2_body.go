package client

// HTTP/2 responses: the head built from decoded fields on the read loop,
// trailers, and the body the caller reads from the stream's buffer,
// giving flow-control credit back as it goes.

import (
	"io"
	"net/http"
	"net/textproto"
	"strconv"

	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// errH2Malformed is a response the client refuses (RFC 9113 §8.1.1): the
// stream is reset with PROTOCOL_ERROR and the request fails with it.
type errH2Malformed string

// Error says what in the response broke RFC 9113.
func (e errH2Malformed) Error() string { return "client: malformed HTTP/2 response: " + string(e) }

// h2LengthError reports DATA past the content-length (a body that ends
// short reads io.ErrUnexpectedEOF instead, see endLocked).
type h2LengthError struct{ declared, received int64 }

// Error gives both lengths, for the log of whoever sees it.
func (e *h2LengthError) Error() string {
	return "client: HTTP/2 response body of " + strconv.FormatInt(e.received, 10) +
		" bytes or more does not match its content-length " + strconv.FormatInt(e.declared, 10)
}

// h2FieldsAsWire copies HTTP/2 fields as wire.Headers, for trace1xx.
func h2FieldsAsWire(fields []h2.Field) []wire.Header {
	out := make([]wire.Header, len(fields))
	for i, f := range fields {
		out[i] = wire.Header{Name: f.Name, Value: f.Value}
	}
	return out
}

// lengthError reports the stream's body against its content-length.
func (s *h2Stream) lengthError() error {
	return &h2LengthError{declared: s.declared, received: s.received}
}

// informationalSize adds a 1xx head's fields to the size of the ones
// before it on s, as SETTINGS_MAX_HEADER_LIST_SIZE counts a field (its
// name and value and 32), and returns the sum.
func informationalSize(s *h2Stream, fields []h2.Field) int {
	for _, f := range fields {
		s.informational += len(f.Name) + len(f.Value) + 32
	}
	return s.informational
}

// onResponseHead builds the response from a head's fields and hands it to
// the waiting send. 1xx heads are skipped. All the field values are
// cut from one string, and the names of common fields are interned: a
// head costs a few allocations whatever its size.
func (cc *h2Conn) onResponseHead(s *h2Stream, fields []h2.Field, end bool) error {
	if tr := s.trace; tr != nil && !s.firstByte {
		s.firstByte = true
		if tr.GotFirstResponseByte != nil {
			tr.GotFirstResponseByte()
		}
	}
	status, rest, err := responseStatus(fields)
	if err == nil && status < 200 {
		switch {
		case status == 101:
			err = errH2Malformed("101 Switching Protocols is not allowed in HTTP/2 (§8.6)")
		case end:
			err = errH2Malformed("1xx response with END_STREAM")
		case (s.trace == nil || s.trace.Got1xxResponse == nil) && informationalSize(s, rest) > cc.maxHeaderList:
			// 1xx heads handed to Got1xxResponse are the caller's to
			// limit, as in net/http; the others may take
			// MaxResponseHeaderBytes in all, counted as
			// SETTINGS_MAX_HEADER_LIST_SIZE counts.
			err = errTooMany1xx
		default:
			// Informational: the final head is still to come.
			cc.mu.Lock()
			waiting := s.await100
			if status == 100 && !s.got100 {
				s.got100 = true
				s.cond.Broadcast()
			}
			cc.mu.Unlock()
			if s.trace != nil {
				if err := trace1xx(s.trace, status, h2FieldsAsWire(rest), waiting); err != nil {
					return cc.streamError(s, err)
				}
			}
			return nil
		}
	}
	if err != nil {
		return cc.streamError(s, err)
	}

	// The values, in one string.
	vals := cc.vals[:0]
	for _, f := range rest {
		if len(f.Name) == 0 || f.Name[0] == ':' {
			return cc.streamError(s, errH2Malformed("pseudo-header field after a regular one, or a second :status (§8.3)"))
		}
		if !validResponseName(f.Name) || !wire.ValidHeaderValue(f.Value) {
			return cc.streamError(s, errH2Malformed("invalid field name or value (§8.2.1)"))
		}
		if h2.ConnectionSpecific(f.Name) { // malformed, whatever a proxy behind might make of it (§8.2.2)
			return cc.streamError(s, errH2Malformed("connection-specific field "+string(f.Name)+" (§8.2.2)"))
		}
		vals = append(vals, f.Value...)
	}
	cc.vals = vals
	all := string(vals)

	resp := &s.resp
	h := make(http.Header, len(rest))
	var strs []string
	if len(rest) <= len(s.vals) {
		strs = s.vals[:len(rest)]
	} else {
		strs = make([]string, len(rest))
	}
	off := 0
	for i, f := range rest {
		v := all[off : off+len(f.Value)]
		off += len(f.Value)
		switch string(f.Name) {
		case "content-length":
			n, err := wire.ParseContentLength(v)
			if err != nil || s.declared >= 0 && n != s.declared {
				return cc.streamError(s, errH2Malformed("bad or conflicting content-length (§8.1.1)"))
			}
			s.declared = n
		case "trailer":
			// As net/http: announced trailers become resp.Trailer's keys.
			if resp.Trailer == nil {
				resp.Trailer = make(http.Header)
			}
			for _, k := range splitList(v) {
				resp.Trailer[textproto.CanonicalMIMEHeaderKey(k)] = nil
			}
			continue
		}
		key := cc.canonicalName(f.Name)
		if old, ok := h[key]; ok {
			h[key] = append(old, v)
		} else {
			strs[i] = v
			h[key] = strs[i : i+1 : i+1]
		}
	}

	resp.StatusCode = status
	if st := statusText[status]; st != "" {
		resp.Status = st
	} else {
		resp.Status = strconv.Itoa(status) + " "
	}
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/2.0", 2, 0
	resp.Header = h
	resp.Request = s.req
	resp.TLS = cc.tlsState
	s.noBody = s.isHead || status == http.StatusNoContent || status == http.StatusNotModified
	resp.ContentLength = s.declared
	if !s.isHead && (s.noBody || s.declared < 0 && end) {
		// A 204 or 304 has no content, as over HTTP/1.1, whatever its
		// content-length says (a 304's is the representation's).
		resp.ContentLength = 0
	}
	if s.noBody || end && s.declared <= 0 {
		resp.Body = http.NoBody
	} else {
		resp.Body = s
	}

	cc.mu.Lock()
	defer cc.mu.Unlock()
	if s.closed {
		return nil // canceled meanwhile
	}
	s.gotHead = true
	s.headInLocked()
	if status > 299 && !s.sentEnd {
		// As net/http: an error answer does not want the rest of the
		// request body (a 1xx or 2xx may, as in full duplex).
		s.stopBody = true
	}
	if end {
		s.endLocked()
	}
	s.cond.Broadcast()
	return nil
}

// streamError resets a stream whose response is malformed.
func (cc *h2Conn) streamError(s *h2Stream, err error) error {
	cc.mu.Lock()
	s.resetLocked(h2.ErrCodeProtocol, err)
	cc.mu.Unlock()
	return nil
}

// responseStatus reads the :status pseudo-header field a response head
// starts with, and returns the fields after it.
func responseStatus(fields []h2.Field) (int, []h2.Field, error) {
	if len(fields) == 0 || string(fields[0].Name) != ":status" {
		return 0, nil, errH2Malformed("no :status (§8.3.2)")
	}
	v := fields[0].Value
	if len(v) != 3 || v[0] < '1' || v[0] > '5' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		return 0, nil, errH2Malformed("bad :status " + strconv.Quote(string(v)))
	}
	return int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0'), fields[1:], nil
}

// onTrailers keeps the trailers that end a response, for the body's
// reader to move into resp.Trailer when it meets EOF: as net/http does,
// so that resp.Trailer is only ever written by the goroutine reading it.
func (cc *h2Conn) onTrailers(s *h2Stream, fields []h2.Field, end bool) error {
	if !end {
		return cc.streamError(s, errH2Malformed("trailers without END_STREAM (§8.1)"))
	}
	for _, f := range fields {
		if len(f.Name) == 0 || f.Name[0] == ':' || !validResponseName(f.Name) || !wire.ValidHeaderValue(f.Value) {
			return cc.streamError(s, errH2Malformed("invalid trailer field (§8.1, §8.2.1)"))
		}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if s.closed {
		return nil
	}
	tr := make(http.Header, len(fields))
	s.trailer = tr
	for _, f := range fields {
		key := cc.canonicalName(f.Name)
		tr[key] = append(tr[key], string(f.Value))
	}
	s.endLocked()
	s.cond.Broadcast()
	return nil
}

// Read reads the response body: bytes the read loop has buffered, waiting
// for more while the stream is open. The credit of what it takes goes
// back to the server in batches (wire/h2's Inflow: half a window at a
// time), so a reader that stops stops the server after one window.
func (s *h2Stream) Read(p []byte) (int, error) {
	cc := s.cc
	cc.mu.Lock()
	for s.off == len(s.buf) || s.bodyClosed {
		var err error
		switch {
		case s.bodyClosed:
			err = errClosedBody
		case s.err != nil:
			err = s.err
		case s.recvEnd:
			err = io.EOF
			s.moveTrailersLocked()
		case len(p) == 0:
		default:
			s.cond.Wait()
			continue
		}
		cc.mu.Unlock()
		return 0, err
	}
	queued := len(cc.wbuf)
	n := copy(p, s.buf[s.off:])
	s.off += n
	if s.off == len(s.buf) {
		s.buf, s.off = s.buf[:0], 0
	}
	if !s.recvEnd {
		if inc := s.inflow.Release(uint32(n)); inc > 0 {
			cc.wbuf = h2.AppendWindowUpdate(cc.wbuf, s.id, inc)
		}
	}
	if inc := cc.inflow.Release(uint32(n)); inc > 0 {
		cc.wbuf = h2.AppendWindowUpdate(cc.wbuf, 0, inc)
	}
	var err error
	if s.off == len(s.buf) && s.recvEnd {
		if s.err != nil {
			err = s.err
		} else {
			err = io.EOF
			s.buf = nil // the response is whole: nothing more to hold
			s.moveTrailersLocked()
		}
	}
	if len(cc.wbuf) > queued {
		// Only for frames of our own: others' are their writers' to
		// flush, maybe batched on purpose (see send).
		cc.flushLocked(s)
	}
	cc.mu.Unlock()
	return n, err
}

// moveTrailersLocked puts the trailers received into resp.Trailer, on
// the reader's goroutine as it returns EOF.
func (s *h2Stream) moveTrailersLocked() {
	if s.trailer == nil {
		return
	}
	if s.resp.Trailer == nil {
		s.resp.Trailer = make(http.Header, len(s.trailer))
	}
	for k, vv := range s.trailer {
		s.resp.Trailer[k] = vv
	}
	s.trailer = nil
}

// Close ends the body. Before the response's end it resets the stream
// (CANCEL), so the server stops sending; either way the unread bytes'
// credit goes back to the connection. A Read blocked meanwhile returns.
func (s *h2Stream) Close() error {
	cc := s.cc
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if s.bodyClosed {
		return nil
	}
	s.bodyClosed = true
	queued := len(cc.wbuf)
	if !s.closed {
		s.resetLocked(h2.ErrCodeCancel, errClosedBody)
	} else {
		s.dropBufLocked()
	}
	s.cond.Broadcast()
	if len(cc.wbuf) > queued {
		cc.flushLocked(s)
	}
	return nil
}
