package wire

import "bytes"

// Header is one header field. Name and Value alias the parsed buffer;
// Value has its surrounding whitespace removed.
type Header struct {
	Name, Value []byte
}

// Request is a parsed request head. Reuse one Request for every request on
// a connection: Parse resets it and keeps the capacity of Headers, so steady
// state allocates nothing. All byte slices alias the buffer given to Parse.
type Request struct {
	Method []byte // e.g. "GET"
	Target []byte // request-target as sent: "/path?q", "*", "http://h/p" or "host:port"
	Proto  []byte // "HTTP/1.1" or "HTTP/1.0"
	// ProtoMinor is 1 for HTTP/1.1 and 0 for HTTP/1.0.
	ProtoMinor int

	// Headers holds every field in order of arrival, Host and the framing
	// fields included.
	Headers []Header

	// Host is the Host header value (empty when absent, allowed on HTTP/1.0).
	Host []byte
	// ContentLength is the declared body length; 0 when the request has no
	// body, and -1 when the body is chunked.
	ContentLength int64
	// Chunked reports Transfer-Encoding: chunked.
	Chunked bool
	// Close reports that the connection must close after the response:
	// "Connection: close", or HTTP/1.0 without "Connection: keep-alive".
	Close bool
	// Expect100 reports "Expect: 100-continue" on an HTTP/1.1 request.
	Expect100 bool
	// Upgrade reports a Connection header listing "upgrade".
	Upgrade bool
}

// Reset clears r for reuse, keeping the Headers capacity.
func (r *Request) Reset() {
	*r = Request{Headers: r.Headers[:0]}
}

// Header returns the value of the first field named name (compared without
// regard to case), or nil. It does not allocate.
func (r *Request) Header(name string) []byte { return lookup(r.Headers, name) }

// lookup returns the value of the first field in hs named name, or nil.
func lookup(hs []Header, name string) []byte {
	for i := range hs {
		if EqualFold(hs[i].Name, name) {
			return hs[i].Value
		}
	}
	return nil
}

// Path returns the target's path: up to the query ('?'), and for an
// absolute-form target ("http://host/p?q") without the scheme and
// authority, "/" when the path is empty, so that a proxy-style request
// routes like its origin-form twin.
func (r *Request) Path() []byte {
	t := r.Target
	if len(t) > 0 && t[0] != '/' && hasSchemePrefix(t) {
		t = t[bytes.IndexByte(t, ':')+3:] // after "://"
		i := bytes.IndexAny(t, "/?")
		if i < 0 || t[i] == '?' {
			return slash
		}
		t = t[i:]
	}
	if i := bytes.IndexByte(t, '?'); i >= 0 {
		return t[:i]
	}
	return t
}

// slash is the path of an absolute-form target with none.
var slash = []byte("/")

// Query returns the target after the first '?', without it, or nil.
func (r *Request) Query() []byte {
	if i := bytes.IndexByte(r.Target, '?'); i >= 0 {
		return r.Target[i+1:]
	}
	return nil
}

// maxLeadingEmptyLines bounds the empty lines tolerated before a request
// line (RFC 9112 §2.2 asks servers to ignore at least one).
const maxLeadingEmptyLines = 8

// Parse parses one request head from the start of buf. On success it
// returns the number of bytes the head occupies, including the empty line
// that ends it; the body, if any, starts at buf[n:]. If buf holds no
// complete head yet and no limit is exceeded it returns [ErrNeedMore]; the
// caller reads more and calls Parse again with the longer buffer. Any
// other error is an [*Error] saying which status to send. lim must have its
// defaults applied (see [Limits.WithDefaults]).
func (r *Request) Parse(buf []byte, lim *Limits) (int, error) {
	r.Reset()
	pos := 0
	// Tolerate a few empty lines before the request line.
	for skipped := 0; pos < len(buf) && (buf[pos] == '\r' || buf[pos] == '\n'); skipped++ {
		if skipped == maxLeadingEmptyLines {
			return 0, ErrMalformedLine
		}
		if buf[pos] == '\r' {
			if pos+1 == len(buf) {
				return 0, ErrNeedMore
			}
			if buf[pos+1] != '\n' {
				return 0, ErrBareCR
			}
			pos++
		}
		pos++
	}
	start := pos

	line, next, err := readLine(buf, pos, lim.MaxRequestLineBytes, ErrRequestLineTooLong)
	if err != nil {
		return 0, err
	}
	if err := r.parseRequestLine(line); err != nil {
		return 0, err
	}
	pos = next

	var hostSeen, framingTrailer bool
	declared := 0 // names a Trailer field declares beyond its first
	var ff framingFields
	maxHead := lim.MaxHeaderBytes
	for {
		name, value, next, err := readField(buf, pos, start, maxHead, false)
		if err != nil {
			return 0, err
		}
		pos = next
		if name == nil {
			break
		}
		if len(r.Headers)+declared >= lim.MaxHeaders {
			return 0, ErrTooManyHeaders
		}
		r.Headers = append(r.Headers, Header{Name: name, Value: value})

		// The fields that decide framing and routing.
		switch lower(name[0]) {
		case 'h':
			if EqualFold(name, "Host") {
				if hostSeen {
					return 0, ErrDuplicateHost
				}
				hostSeen = true
				for _, c := range value {
					if !hostByte[c] {
						return 0, ErrBadHost
					}
				}
				r.Host = value
			}
		case 'c':
			if EqualFold(name, "Content-Length") {
				if err := ff.contentLength(value); err != nil {
					return 0, err
				}
			} else if EqualFold(name, "Connection") {
				ff.connection(value)
			}
		case 't':
			if EqualFold(name, "Transfer-Encoding") {
				if err := ff.transferEncoding(value); err != nil {
					return 0, err
				}
			} else if EqualFold(name, "Trailer") {
				framingTrailer = framingTrailer || HasToken(value, "Content-Length") ||
					HasToken(value, "Transfer-Encoding") || HasToken(value, "Trailer")
				// Each name it declares counts as a field, as on
				// net/http (Go 1.27): each becomes a key of the
				// request's Trailer.
				if k := ListLen(value); k > 1 {
					declared += k - 1
					if len(r.Headers)+declared > lim.MaxHeaders {
						return 0, ErrTooManyHeaders
					}
				}
			}
		case 'e':
			// An empty Expect expects nothing, as on net/http.
			if EqualFold(name, "Expect") && len(value) > 0 {
				if !EqualFold(value, "100-continue") {
					return 0, ErrExpectation
				}
				r.Expect100 = r.ProtoMinor == 1
			}
		}
	}

	// CONNECT names its host in its target: net/http accepts it without
	// Host (golang.org/issue/18215), and so do we.
	if r.ProtoMinor == 1 && !hostSeen && string(r.Method) != "CONNECT" {
		return 0, ErrMissingHost
	}
	if err := ff.check(r.ProtoMinor); err != nil {
		return 0, err
	}
	r.ContentLength = ff.length
	if ff.chunked {
		if framingTrailer {
			return 0, ErrFramingTrailer
		}
		r.Chunked = true
		r.ContentLength = -1
	}
	r.Close = ff.closes(r.ProtoMinor)
	r.Upgrade = ff.upgradeTok
	if lim.MaxBodyBytes >= 0 && r.ContentLength > lim.MaxBodyBytes {
		return 0, ErrBodyTooLarge
	}
	return pos, nil
}

// readField reads the header field line at buf[pos] of a head that began
// at start and may span maxHead bytes. It returns the field's name and its
// value without surrounding whitespace, and the position after the line; at
// the empty line that ends the head it returns a nil name. Fields are held
// to RFC 9112 §5: a token name right before the colon, no obs-fold, no
// control bytes in the value. With spaceBeforeColon (responses), a name
// followed by spaces before the colon is kept, spaces included,
// as net/http's client keeps it: a field no one matches by name (RFC 9112
// §5.1 asks servers to reject it in requests, where it can smuggle);
// except for the framing fields, always an error.
func readField(buf []byte, pos, start, maxHead int, spaceBeforeColon bool) (name, value []byte, next int, err error) {
	// The budget covers line endings too: a line and its LF must fit in
	// what is left, and its CRLF is checked once it has arrived.
	limit := maxHead - (pos - start)
	if limit <= 0 {
		return nil, nil, 0, ErrHeaderTooLarge
	}
	line, next, err := readLine(buf, pos, limit-1, ErrHeaderTooLarge)
	if err != nil {
		return nil, nil, 0, err
	}
	if next-start > maxHead {
		return nil, nil, 0, ErrHeaderTooLarge
	}
	if len(line) == 0 {
		return nil, nil, next, nil
	}
	if isOWS(line[0]) {
		return nil, nil, 0, ErrObsFold
	}
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return nil, nil, 0, ErrMissingColon
	}
	name = line[:colon]
	if len(name) == 0 {
		return nil, nil, 0, ErrBadHeaderName
	}
	for i, c := range name {
		if !tokenByte[c] {
			if spaceBeforeColon && i > 0 && onlySpaces(name[i:]) && !framingName(name[:i]) {
				break
			}
			return nil, nil, 0, ErrBadHeaderName
		}
	}
	value = TrimOWS(line[colon+1:])
	if i := indexCtlInValue(value); i >= 0 {
		if value[i] == '\r' {
			return nil, nil, 0, ErrBareCR
		}
		return nil, nil, 0, ErrBadHeaderValue
	}
	return name, value, next, nil
}

// onlySpaces reports whether b is spaces (SP only: net/http's reader
// refuses a tab there).
func onlySpaces(b []byte) bool {
	for _, c := range b {
		if c != ' ' {
			return false
		}
	}
	return true
}

// framingName reports whether name is a field that frames a message
// (Content-Length, Transfer-Encoding): one written "Content-Length :"
// stays an error, so that no reader can take it for the real one.
func framingName(name []byte) bool {
	return bytes.EqualFold(name, []byte("Content-Length")) || bytes.EqualFold(name, []byte("Transfer-Encoding"))
}

// readLine returns the line starting at buf[pos] without its ending (CRLF
// or a lone LF) and the position after the ending. A line longer than max
// yields tooLong; a line not yet terminated yields ErrNeedMore.
func readLine(buf []byte, pos, max int, tooLong error) (line []byte, next int, err error) {
	rest := buf[pos:]
	if len(rest) > max+2 {
		rest = rest[:max+2]
	}
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		if len(rest) > max+1 || (len(rest) == max+1 && rest[max] != '\r') {
			return nil, 0, tooLong
		}
		return nil, 0, ErrNeedMore
	}
	line = rest[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if len(line) > max {
		return nil, 0, tooLong
	}
	return line, pos + nl + 1, nil
}

// parseRequestLine splits "METHOD SP target SP HTTP/1.x" into r.
func (r *Request) parseRequestLine(line []byte) error {
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 < 0 {
		return ErrMalformedLine
	}
	method := line[:sp1]
	if len(method) == 0 {
		return ErrBadMethod
	}
	for _, c := range method {
		if !tokenByte[c] {
			return ErrBadMethod
		}
	}
	rest := line[sp1+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 < 0 {
		return ErrMalformedLine
	}
	target, proto := rest[:sp2], rest[sp2+1:]
	if err := checkTarget(method, target); err != nil {
		return err
	}
	minor, err := parseVersion(proto)
	if err != nil {
		return err
	}
	r.Method, r.Target, r.Proto, r.ProtoMinor = method, target, proto, minor
	return nil
}

// parseVersion accepts "HTTP/1.1" and "HTTP/1.0". Any other well-formed
// "HTTP/d.d" is ErrVersionUnsupported (505); anything else ErrBadVersion.
func parseVersion(p []byte) (int, error) {
	if len(p) != 8 || string(p[:5]) != "HTTP/" || p[6] != '.' || !isDigit(p[5]) || !isDigit(p[7]) {
		return 0, ErrBadVersion
	}
	if p[5] == '1' {
		switch p[7] {
		case '1':
			return 1, nil
		case '0':
			return 0, nil
		}
	}
	return 0, ErrVersionUnsupported
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || 'a' <= lower(c) && lower(c) <= 'f' }

// ParseContentLength parses a Content-Length value as every package of
// this module reads one (RFC 9110 §8.6): 1*DIGIT and nothing else (no
// sign, no spaces inside, no hex, no list such as "5, 5", no empty
// value), at most 18 digits. A longer run of digits is
// ErrContentLengthTooBig; anything else is ErrBadContentLength. One
// parser, so that no two readers of a message can disagree on its length.
func ParseContentLength[T string | []byte](v T) (int64, error) {
	if len(v) == 0 {
		return 0, ErrBadContentLength
	}
	var n int64
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !isDigit(c) {
			return 0, ErrBadContentLength
		}
		n = n*10 + int64(c-'0') // 18 digits cannot overflow; more are refused below
	}
	if len(v) > 18 { // 10^18-1 fits in int64 with room to spare
		return 0, ErrContentLengthTooBig
	}
	return n, nil
}
