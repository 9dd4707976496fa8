package ws

import (
	"errors"
	"strconv"
)

// Sec-WebSocket-Extensions (RFC 6455 §9.1) is a comma-separated list of
// extensions, each a name and parameters:
//
//	permessage-deflate; client_max_window_bits, permessage-deflate
//
// A client lists the configurations it offers, most preferred first; the
// server answers with the one it accepts, or none.

// The errors of the extension parsers. A server that gets a malformed list
// declines every extension in it or answers 400; a client that gets a
// malformed answer fails the handshake.
var (
	ErrExtensionSyntax  = errors.New("ws: malformed Sec-WebSocket-Extensions list (RFC 6455 §9.1)")
	ErrDeflateParam     = errors.New("ws: unknown permessage-deflate parameter (RFC 7692 §7.1)")
	ErrDeflateDuplicate = errors.New("ws: permessage-deflate parameter given twice (RFC 7692 §7.1)")
	ErrDeflateValue     = errors.New("ws: invalid permessage-deflate parameter value (RFC 7692 §7.1)")
)

// DeflateName is the name of the permessage-deflate extension (RFC 7692).
const DeflateName = "permessage-deflate"

// Deflate is the parameters of one permessage-deflate offer or answer
// (RFC 7692 §7.1).
type Deflate struct {
	// ServerNoContextTakeover: the server resets its compressor after
	// each message (§7.1.1.1).
	ServerNoContextTakeover bool
	// ClientNoContextTakeover: the client resets its compressor after
	// each message (§7.1.1.2).
	ClientNoContextTakeover bool
	// ServerMaxWindowBits is server_max_window_bits, 8 to 15: the
	// largest LZ77 window, as a power of two, the server compresses with
	// (§7.1.2.1). 0 when absent: 15.
	ServerMaxWindowBits int
	// ClientMaxWindowBits is client_max_window_bits's value, 8 to 15
	// (§7.1.2.2); 0 when absent or given without a value.
	ClientMaxWindowBits int
	// ClientMaxWindowBitsParam says client_max_window_bits is present,
	// with or without a value. In an offer without a value, the client
	// supports a window the server picks; an answer must give a value.
	ClientMaxWindowBitsParam bool
}

// NextExtension reads the first extension of list, a
// Sec-WebSocket-Extensions value (or several joined with commas): its
// name, the text of its parameters (from the first ';' on, or empty), and
// the rest of the list. It skips empty elements and whitespace; at the end
// of the list it returns a nil name. The slices alias list. Tokens and
// quoted strings are checked (RFC 9110 §5.6.2, §5.6.4); a malformed
// element is [ErrExtensionSyntax].
func NextExtension(list []byte) (name, params, rest []byte, err error) {
	i := skipListSpace(list, 0)
	if i == len(list) {
		return nil, nil, nil, nil
	}
	j := scanToken(list, i)
	if j == i {
		return nil, nil, nil, ErrExtensionSyntax
	}
	name = list[i:j]
	start, end := -1, j // params run from the first ';' (start) to end
	for {
		k := skipOWS(list, end)
		if k == len(list) || list[k] == ',' {
			if k < len(list) {
				k++
			}
			if start < 0 {
				start = end
			}
			return name, list[start:end], list[k:], nil
		}
		if list[k] != ';' {
			return nil, nil, nil, ErrExtensionSyntax
		}
		_, _, _, end, err = scanParam(list, k)
		if err != nil {
			return nil, nil, nil, err
		}
		if start < 0 {
			start = k
		}
	}
}

// ParseDeflate reads the parameters of one permessage-deflate element,
// params as [NextExtension] returns them. An unknown parameter, one given
// twice, or a value out of its range (a window of 8 to 15 bits, written
// as a plain decimal; no value for the others) is an error: RFC 7692 §5
// has a server decline such an offer and a client fail the connection on
// such an answer.
func ParseDeflate(params []byte) (Deflate, error) {
	var d Deflate
	var seen uint8
	for i := skipOWS(params, 0); i < len(params); i = skipOWS(params, i) {
		if params[i] != ';' {
			return Deflate{}, ErrExtensionSyntax
		}
		key, val, hasVal, next, err := scanParam(params, i)
		if err != nil {
			return Deflate{}, err
		}
		i = next
		var bit uint8
		switch {
		case equalFold(key, "server_no_context_takeover"):
			bit = 1
			d.ServerNoContextTakeover = true
		case equalFold(key, "client_no_context_takeover"):
			bit = 2
			d.ClientNoContextTakeover = true
		case equalFold(key, "server_max_window_bits"):
			bit = 4
			if !hasVal {
				return Deflate{}, ErrDeflateValue
			}
			if d.ServerMaxWindowBits = windowBits(val); d.ServerMaxWindowBits == 0 {
				return Deflate{}, ErrDeflateValue
			}
		case equalFold(key, "client_max_window_bits"):
			bit = 8
			d.ClientMaxWindowBitsParam = true
			if hasVal {
				if d.ClientMaxWindowBits = windowBits(val); d.ClientMaxWindowBits == 0 {
					return Deflate{}, ErrDeflateValue
				}
			}
		default:
			return Deflate{}, ErrDeflateParam
		}
		if seen&bit != 0 {
			return Deflate{}, ErrDeflateDuplicate
		}
		seen |= bit
		if hasVal && bit&(1|2) != 0 {
			return Deflate{}, ErrDeflateValue
		}
	}
	return d, nil
}

// FirstDeflateOffer returns the first permessage-deflate offer of list (a
// client's Sec-WebSocket-Extensions) that [ParseDeflate] accepts, and
// true; or false if there is none. Offers it refuses are skipped, as RFC
// 7692 §5 has a server decline them. The error is [ErrExtensionSyntax],
// for a list that cannot be read at all.
func FirstDeflateOffer(list []byte) (Deflate, bool, error) {
	for {
		name, params, rest, err := NextExtension(list)
		if err != nil {
			return Deflate{}, false, err
		}
		if name == nil {
			return Deflate{}, false, nil
		}
		if equalFold(name, DeflateName) {
			if d, err := ParseDeflate(params); err == nil {
				return d, true, nil
			}
		}
		list = rest
	}
}

// AppendDeflate appends d as a permessage-deflate element to dst:
// "permessage-deflate" and its parameters, the form a server answers with
// or a client offers. A window of 0 bits is left out; an out-of-range one
// is a bug in the caller, and panics.
func AppendDeflate(dst []byte, d Deflate) []byte {
	dst = append(dst, DeflateName...)
	if d.ServerNoContextTakeover {
		dst = append(dst, "; server_no_context_takeover"...)
	}
	if d.ClientNoContextTakeover {
		dst = append(dst, "; client_no_context_takeover"...)
	}
	if d.ServerMaxWindowBits != 0 {
		dst = append(dst, "; server_max_window_bits="...)
		dst = appendWindowBits(dst, d.ServerMaxWindowBits)
	}
	if d.ClientMaxWindowBits != 0 {
		dst = append(dst, "; client_max_window_bits="...)
		dst = appendWindowBits(dst, d.ClientMaxWindowBits)
	} else if d.ClientMaxWindowBitsParam {
		dst = append(dst, "; client_max_window_bits"...)
	}
	return dst
}

func appendWindowBits(dst []byte, bits int) []byte {
	if bits < 8 || bits > 15 {
		panic("ws: permessage-deflate window bits " + strconv.Itoa(bits) + " outside 8..15")
	}
	return strconv.AppendInt(dst, int64(bits), 10)
}

// windowBits reads a window size, "8" to "15" (RFC 7692 §7.1.2: 1*DIGIT
// without a leading zero, after unquoting), or returns 0.
func windowBits(v []byte) int {
	switch {
	case len(v) == 1 && v[0] >= '8' && v[0] <= '9':
		return int(v[0] - '0')
	case len(v) == 2 && v[0] == '1' && v[1] >= '0' && v[1] <= '5':
		return 10 + int(v[1]-'0')
	}
	return 0
}

// scanParam reads one "; key[=value]" from b[i] (which is ';') with the
// whitespace around its parts, and returns the key, the value (a token,
// or a quoted string's content as unquoteDigits returns it), whether
// there was one, and where it ends.
func scanParam(b []byte, i int) (key, val []byte, hasVal bool, next int, err error) {
	i = skipOWS(b, i+1)
	j := scanToken(b, i)
	if j == i {
		return nil, nil, false, 0, ErrExtensionSyntax
	}
	key = b[i:j]
	k := skipOWS(b, j)
	if k == len(b) || b[k] != '=' {
		return key, nil, false, j, nil
	}
	k = skipOWS(b, k+1)
	if k < len(b) && b[k] == '"' {
		end, ok := scanQuoted(b, k)
		if !ok {
			return nil, nil, false, 0, ErrExtensionSyntax
		}
		return key, unquoteDigits(b[k+1 : end-1]), true, end, nil
	}
	e := scanToken(b, k)
	if e == k {
		return nil, nil, false, 0, ErrExtensionSyntax
	}
	return key, b[k:e], true, e, nil
}

// scanQuoted returns the end (past the closing quote) of the quoted string
// at b[i], or false if it does not close or holds a byte qdtext forbids.
func scanQuoted(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			i++
			if i == len(b) || !quotedPairByte(b[i]) {
				return 0, false
			}
		case !qdtextByte(c):
			return 0, false
		}
	}
	return 0, false
}

// unquoteDigits returns a quoted string's content for windowBits: the
// content itself when it has no quoted pair, which is every value a
// conforming peer sends; or, as a quoted pair can only stand for itself
// in a number, nil (no valid window), so "\1\0" is refused rather than
// unescaped into a copy.
func unquoteDigits(v []byte) []byte {
	for _, c := range v {
		if c == '\\' {
			return nil
		}
	}
	return v
}

func skipOWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// skipListSpace skips whitespace and empty list elements (RFC 9110 §5.6.1:
// a recipient accepts them).
func skipListSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == ',') {
		i++
	}
	return i
}

func scanToken(b []byte, i int) int {
	for i < len(b) && tokenByte(b[i]) {
		i++
	}
	return i
}

// tokenByte reports whether c is a tchar (RFC 9110 §5.6.2).
func tokenByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// qdtextByte reports whether c may appear unescaped in a quoted string
// (RFC 9110 §5.6.4).
func qdtextByte(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E) || c >= 0x80
}

func quotedPairByte(c byte) bool { return c == '\t' || (c >= 0x20 && c != 0x7F) }

// equalFold reports whether b is s in ASCII, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
