package h2

// Field validation for request header blocks (RFC 9113 §8).

import (
	"bytes"
	"encoding/binary"

	"github.com/hotpathhq/hotpath/wire"
)

// Malformed requests (RFC 9113 §8.1.1): stream errors with PROTOCOL_ERROR.
var (
	ErrUppercaseName     = streamError(ErrCodeProtocol, "field name contains an uppercase letter (§8.2.1)")
	ErrBadFieldName      = streamError(ErrCodeProtocol, "field name is empty or contains a byte that is not a token character (§8.2.1)")
	ErrBadFieldValue     = streamError(ErrCodeProtocol, "field value contains NUL, CR, LF or another control byte (§8.2.1, RFC 9110 §5.5)")
	ErrConnectionField   = streamError(ErrCodeProtocol, "connection-specific field (connection, keep-alive, proxy-connection, transfer-encoding or upgrade) in HTTP/2 (§8.2.2)")
	ErrBadTE             = streamError(ErrCodeProtocol, `TE field with a value other than "trailers" (§8.2.2)`)
	ErrUnknownPseudo     = streamError(ErrCodeProtocol, "unknown or response pseudo-header field in a request (§8.3)")
	ErrPseudoAfterField  = streamError(ErrCodeProtocol, "pseudo-header field after a regular field (§8.3)")
	ErrDuplicatePseudo   = streamError(ErrCodeProtocol, "duplicate pseudo-header field (§8.3.1)")
	ErrPseudoInTrailers  = streamError(ErrCodeProtocol, "pseudo-header field in trailers (§8.1)")
	ErrMissingPseudo     = streamError(ErrCodeProtocol, "request without :method, :scheme or :path (§8.3.1)")
	ErrConnectPseudo     = streamError(ErrCodeProtocol, "CONNECT request with :scheme or :path, or without :authority (§8.5)")
	ErrProtocolPseudo    = streamError(ErrCodeProtocol, ":protocol without extended CONNECT (RFC 8441 §4), or on a method other than CONNECT")
	ErrBadMethod         = streamError(ErrCodeProtocol, ":method is not a token (§8.3.1)")
	ErrBadAuthority      = streamError(ErrCodeProtocol, ":authority carries userinfo (\"user@host\"), which §8.3.1 forbids")
	ErrBadPath           = streamError(ErrCodeProtocol, `:path is empty, or neither starts with "/" nor is "*" (§8.3.1)`)
	ErrBadContentLength  = streamError(ErrCodeProtocol, "content-length is not a decimal number, or repeated with a different value (§8.1.1)")
	ErrContentLengthData = streamError(ErrCodeProtocol, "DATA frames do not add up to the content-length (§8.1.1)")
)

// RequestValidator checks the fields of one request header block, or of
// one trailer block, against RFC 9113 §8 as they are decoded, and keeps
// the pseudo-header fields. Feed it each field with Field, then call End.
// Reuse one per stream, or per connection, with Reset.
//
// Its slices alias the fields it was given (see [Decoder.Decode] for
// their lifetime).
//
// It rejects: uppercase or non-token field names; values with NUL, CR, LF
// or another control byte but HTAB (as net/http does), or with leading or
// trailing whitespace; connection-specific fields;
// TE other than "trailers"; unknown, response, duplicate or late
// pseudo-header fields, and any in trailers; a request without :method,
// :scheme or :path, or, for CONNECT, with :scheme or :path or without
// :authority; :protocol unless ExtendedConnect; a :path that is empty or
// does not start with "/" (but "*", the asterisk form: RFC 9113 names it
// for OPTIONS; like HTTP/1.1 here and net/http's HTTP/2, any method may
// use it, and the handler decides); an :authority with
// userinfo (CONNECT's included); a malformed or
// conflicting content-length. It does not check that Host agrees with
// :authority (a SHOULD, §8.3.1), nor anything about the body but through
// [CheckContentLength].
type RequestValidator struct {
	// ExtendedConnect allows :protocol on CONNECT requests: set it when
	// this server sent SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 (RFC 8441).
	ExtendedConnect bool

	Method, Scheme, Authority, Path, Protocol []byte
	// ContentLength is the content-length field's value, or -1 when the
	// block has none.
	ContentLength int64

	trailers bool
	regular  bool // a regular field was seen: no pseudo-header may follow
}

// Reset prepares v for a new block; trailers says it is a trailer block.
// ExtendedConnect is kept.
func (v *RequestValidator) Reset(trailers bool) {
	*v = RequestValidator{ExtendedConnect: v.ExtendedConnect, ContentLength: -1, trailers: trailers}
}

// Field checks one field, in the order of the block.
func (v *RequestValidator) Field(f Field) error {
	if err := v.field(f.Name, f.Value); err != nil {
		return err
	}
	return nil
}

func (v *RequestValidator) field(name, value []byte) *Error {
	if err := checkValue(value); err != nil {
		return err
	}
	if len(name) > 0 && name[0] == ':' {
		return v.pseudo(name, value)
	}
	v.regular = true
	if err := checkName(name); err != nil {
		return err
	}
	if ConnectionSpecific(name) {
		return ErrConnectionField
	}
	switch string(name) {
	case "te":
		if string(value) != "trailers" {
			return ErrBadTE
		}
	case "content-length":
		if v.trailers {
			break // a trailer's content-length says nothing of this body
		}
		n, err := wire.ParseContentLength(value)
		if err != nil || v.ContentLength >= 0 && v.ContentLength != n {
			return ErrBadContentLength
		}
		v.ContentLength = n
	}
	return nil
}

func (v *RequestValidator) pseudo(name, value []byte) *Error {
	if v.trailers {
		return ErrPseudoInTrailers
	}
	if v.regular {
		return ErrPseudoAfterField
	}
	var p *[]byte
	switch string(name) {
	case ":method":
		p = &v.Method
	case ":scheme":
		p = &v.Scheme
	case ":authority":
		p = &v.Authority
	case ":path":
		p = &v.Path
	case ":protocol":
		if !v.ExtendedConnect {
			return ErrProtocolPseudo
		}
		p = &v.Protocol
	default:
		return ErrUnknownPseudo
	}
	if *p != nil {
		return ErrDuplicatePseudo
	}
	if value == nil {
		value = []byte{} // present, if empty
	}
	*p = value
	return nil
}

// End checks what only the whole block shows: the pseudo-header fields a
// request needs (§8.3.1, §8.5, RFC 8441 §4).
func (v *RequestValidator) End() error {
	if v.trailers {
		return nil
	}
	if err := v.end(); err != nil {
		return err
	}
	return nil
}

func (v *RequestValidator) end() *Error {
	if v.Method == nil {
		return ErrMissingPseudo
	}
	if !isToken(v.Method) {
		return ErrBadMethod
	}
	connect := string(v.Method) == "CONNECT"
	if v.Protocol != nil && !connect {
		return ErrProtocolPseudo
	}
	if connect && v.Protocol == nil {
		// Plain CONNECT (§8.5): only :method and :authority.
		if v.Scheme != nil || v.Path != nil || len(v.Authority) == 0 {
			return ErrConnectPseudo
		}
		if bytes.IndexByte(v.Authority, '@') >= 0 {
			return ErrBadAuthority
		}
		return nil
	}
	if v.Scheme == nil || v.Path == nil {
		return ErrMissingPseudo
	}
	if len(v.Path) == 0 || v.Path[0] != '/' && string(v.Path) != "*" {
		return ErrBadPath
	}
	if bytes.IndexByte(v.Authority, '@') >= 0 {
		return ErrBadAuthority
	}
	return nil
}

// ValidateRequest checks a whole request header block (trailers false) or
// trailer block (trailers true) with a fresh RequestValidator.
func ValidateRequest(fields []Field, trailers, extendedConnect bool) (RequestValidator, error) {
	v := RequestValidator{ExtendedConnect: extendedConnect}
	v.Reset(trailers)
	for _, f := range fields {
		if err := v.field(f.Name, f.Value); err != nil {
			return v, err
		}
	}
	if err := v.End(); err != nil {
		return v, err
	}
	return v, nil
}

// CheckContentLength checks a stream's DATA against its content-length
// (§8.1.1): received is the sum of the DATA payloads so far (padding
// excluded), ended whether END_STREAM was seen; declared is
// RequestValidator.ContentLength (-1: none, nothing to check). Call it
// after each DATA frame: it fails as soon as received passes declared,
// and at the end if they differ.
func CheckContentLength(declared, received int64, ended bool) error {
	if declared < 0 {
		return nil
	}
	if received > declared || ended && received != declared {
		return ErrContentLengthData
	}
	return nil
}

// checkName checks a regular field name (§8.2.1): non-empty, token
// characters only, no uppercase.
func checkName(name []byte) *Error {
	if len(name) == 0 {
		return ErrBadFieldName
	}
	for _, c := range name {
		if !nameChar[c] {
			if 'A' <= c && c <= 'Z' {
				return ErrUppercaseName
			}
			return ErrBadFieldName
		}
	}
	return nil
}

// checkValue checks a field value: no NUL, CR or LF (§8.2.1), nor any
// other control byte but HTAB, as net/http refuses them (RFC 9110 §5.5
// lets a recipient). Whitespace at either end, which §8.2.1 also calls
// malformed, is accepted, as net/http's HTTP/2 server accepts it: Go's
// own client sends header values as given, and it retries a stream reset
// with PROTOCOL_ERROR on a new connection, again and again, so refusing
// them turned one padded header into a storm of reconnections. Values
// are most of a block's bytes, so it looks at eight at a time for a byte
// below 0x20 or equal to 0x7f, and at single bytes only where it finds
// one.
func checkValue(value []byte) *Error {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(value); i += 8 {
		x := binary.LittleEndian.Uint64(value[i:])
		del := x ^ lo*0x7f // a zero byte where x has DEL
		if (x-lo*0x20)&^x&hi == 0 && (del-lo)&^del&hi == 0 {
			continue // nothing below 0x20, no DEL
		}
		if hasCTL(value[i : i+8]) {
			return ErrBadFieldValue
		}
	}
	if hasCTL(value[i:]) {
		return ErrBadFieldValue
	}
	return nil
}

// hasCTL reports a control byte other than HTAB in b.
func hasCTL(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !tokenChar[c] {
			return false
		}
	}
	return true
}

// nameChar marks the bytes of a regular HTTP/2 field name: tchar without
// uppercase letters.
var nameChar = func() (t [256]bool) {
	t = tokenChar
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = false
	}
	return t
}()

// tokenChar marks the tchar bytes of RFC 9110 §5.6.2.
var tokenChar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// ConnectionSpecific reports whether name, in lower case, is one of the
// fields RFC 9113 §8.2.2 forbids in HTTP/2: connection, keep-alive,
// proxy-connection, transfer-encoding, upgrade ("te" is allowed with the
// value "trailers" only, and checked apart). The module's one list: the
// HTTP/2 server, client and load generator all ask it.
func ConnectionSpecific[T string | []byte](name T) bool {
	switch string(name) {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}

// ConnectionSpecificKeys are the same fields as net/http's canonical
// header keys, for a writer that leaves them out of a header map.
var ConnectionSpecificKeys = [...]string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Upgrade"}
