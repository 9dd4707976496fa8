package wire

// Response is a parsed response head, the client side of the codec. Reuse
// one Response per connection: Parse resets it and keeps the capacity of
// Headers, so steady state allocates nothing. All byte slices alias the
// buffer given to Parse.
type Response struct {
	Proto []byte // "HTTP/1.1" or "HTTP/1.0"
	// ProtoMinor is 1 for HTTP/1.1 and 0 for HTTP/1.0.
	ProtoMinor int
	// StatusCode is the three-digit status, 100 to 999.
	StatusCode int
	// Reason is the reason phrase, possibly empty.
	Reason []byte

	// Headers holds every field in order of arrival, the framing fields
	// included.
	Headers []Header

	// ContentLength is the declared body length, or -1 when none was
	// declared (chunked, close-delimited, or a status without a body).
	ContentLength int64
	// Chunked reports Transfer-Encoding: chunked.
	Chunked bool
	// Close reports that the server will close the connection after this
	// response: "Connection: close", or HTTP/1.0 without "keep-alive".
	Close bool
}

// Framing says how a response body is delimited (RFC 9112 §6.3).
type Framing uint8

// The framings, in the order RFC 9112 §6.3 decides them.
const (
	// NoBody: a response to HEAD, a 1xx, 204 or 304.
	NoBody Framing = iota
	// ChunkedBody: Transfer-Encoding: chunked, read with a [ChunkedDecoder].
	ChunkedBody
	// LengthBody: exactly ContentLength bytes.
	LengthBody
	// CloseBody: everything until the server closes the connection.
	CloseBody
)

// Response-only protocol errors. Status is 502, what a proxy would answer
// for an upstream that sent them.
var (
	ErrBadStatusLine = newError(502, "malformed status line")
	ErrBadStatusCode = newError(502, "malformed status code")
)

// Reset clears r for reuse, keeping the Headers capacity.
func (r *Response) Reset() {
	*r = Response{Headers: r.Headers[:0], ContentLength: -1}
}

// Header returns the value of the first field named name (compared without
// regard to case), or nil. It does not allocate.
func (r *Response) Header(name string) []byte { return lookup(r.Headers, name) }

// Framing reports how the body that follows the head is delimited. head
// is true when the request was HEAD.
func (r *Response) Framing(head bool) Framing {
	switch {
	case head || r.StatusCode < 200 || r.StatusCode == 204 || r.StatusCode == 304:
		return NoBody
	case r.Chunked:
		return ChunkedBody
	case r.ContentLength >= 0:
		return LengthBody
	}
	return CloseBody
}

// Parse parses one response head from the start of buf. On success it
// returns the number of bytes the head occupies, including the empty line
// that ends it; the body, if any, starts at buf[n:]. If buf holds no
// complete head yet and no limit is exceeded it returns [ErrNeedMore]. Any
// other error is an [*Error]. A 1xx head parses like any other: the caller
// skips it and parses the next. lim must have its defaults applied;
// MaxRequestLineBytes bounds the status line, MaxBodyBytes is not used
// (the caller streams the body).
//
// Parse is as strict as the request parser where framing is at stake: a
// Content-Length beside Transfer-Encoding, conflicting lengths, a transfer
// coding other than chunked, obs-fold and bare CRs are errors, so a
// response can never be read two ways.
func (r *Response) Parse(buf []byte, lim *Limits) (int, error) {
	r.Reset()
	line, pos, err := readLine(buf, 0, lim.MaxRequestLineBytes, ErrBadStatusLine)
	if err != nil {
		return 0, err
	}
	if err := r.parseStatusLine(line); err != nil {
		return 0, err
	}

	var ff framingFields
	for {
		name, value, next, err := readField(buf, pos, 0, lim.MaxHeaderBytes, true)
		if err != nil {
			return 0, err
		}
		pos = next
		if name == nil {
			break
		}
		if len(r.Headers) == lim.MaxHeaders {
			return 0, ErrTooManyHeaders
		}
		r.Headers = append(r.Headers, Header{Name: name, Value: value})
		switch {
		case EqualFold(name, "Content-Length"):
			if err := ff.contentLength(value); err != nil {
				return 0, err
			}
		case EqualFold(name, "Connection"):
			ff.connection(value)
		case EqualFold(name, "Transfer-Encoding"):
			if err := ff.transferEncoding(value); err != nil {
				return 0, err
			}
		}
	}
	if err := ff.check(r.ProtoMinor); err != nil {
		return 0, err
	}
	if ff.lengthSeen {
		r.ContentLength = ff.length
	}
	r.Chunked = ff.chunked
	r.Close = ff.closes(r.ProtoMinor)
	return pos, nil
}

// parseStatusLine splits "HTTP/1.x SP 3DIGIT SP reason" into r. The space
// and reason may be absent ("HTTP/1.1 200"), as net/http allows.
func (r *Response) parseStatusLine(line []byte) error {
	if len(line) < 12 || line[8] != ' ' {
		return ErrBadStatusLine
	}
	minor, err := parseVersion(line[:8])
	if err != nil {
		return err
	}
	code := line[9:12]
	if !isDigit(code[0]) || !isDigit(code[1]) || !isDigit(code[2]) || code[0] == '0' {
		return ErrBadStatusCode
	}
	reason := line[12:]
	if len(reason) > 0 {
		if reason[0] != ' ' {
			return ErrBadStatusCode
		}
		reason = reason[1:]
	}
	for _, c := range reason {
		if ctlInValue(c) {
			return ErrBadStatusLine
		}
	}
	r.Proto, r.ProtoMinor, r.Reason = line[:8], minor, reason
	r.StatusCode = int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')
	return nil
}
