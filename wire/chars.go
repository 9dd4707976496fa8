package wire

// byteSet returns the table of ASCII letters, digits and the bytes of extra.
func byteSet(extra string) (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range extra {
		t[c] = true
	}
	return t
}

// tokenByte reports whether b is a tchar (RFC 9110 §5.6.2), the bytes
// allowed in methods and header field names.
var tokenByte = byteSet("!#$%&'*+-.^_`|~")

// hostByte lists the bytes allowed in a Host header value: those of
// uri-host and port (RFC 3986), as net/http's httpguts.ValidHostHeader.
var hostByte = byteSet("!$%&'()*+,-.:;=[]_~")

// regNameByte lists the bytes of a reg-name in a request target: unreserved
// and sub-delims (RFC 3986 §3.2.2), without pct-encoded, which net/url
// allows only for non-ASCII bytes.
var regNameByte = byteSet("-._~!$&'()*+,;=")

// ctlInValue reports whether b may not appear in a field value: every
// control byte except HTAB, and DEL (RFC 9110 §5.5). Bytes ≥ 0x80
// (obs-text) are allowed, as net/http allows them.
func ctlInValue(b byte) bool { return (b < 0x20 && b != '\t') || b == 0x7f }

// indexCtlInValue returns the index of the first byte of v for which
// ctlInValue holds, or -1. Field values are most of a request head and
// every byte of them is checked, so sixteen bytes are tested at a time,
// as two words: a stretch with no byte below 0x20 and no DEL is skipped
// whole; once a word may hold one (an HTAB, say), the rest is looked at
// byte by byte. The last 4 to 15 bytes are tested as two words that
// overlap (of 32 bits below 8 bytes) rather than one at a time.
func indexCtlInValue[T string | []byte](v T) int {
	n, i := len(v), 0
	for ; n-i >= 16; i += 16 {
		if ctlBits(load64(v, i))|ctlBits(load64(v, i+8)) != 0 {
			return indexCtlFrom(v, i, n)
		}
	}
	switch r := n - i; {
	case r >= 8:
		if ctlBits(load64(v, i))|ctlBits(load64(v, n-8)) == 0 {
			return -1
		}
	case r >= 4:
		if ctlBits(uint64(load32(v, i))|uint64(load32(v, n-4))<<32) == 0 {
			return -1
		}
	}
	return indexCtlFrom(v, i, n)
}

// ctlBits is not zero when a word of eight value bytes may hold a byte
// for which ctlInValue holds: never zero when one does; not zero for
// HTAB too (and possibly for the bytes after a flagged one), which the
// byte test then clears.
func ctlBits(w uint64) uint64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// A byte's high bit is set in (x-k)&^x&highs if that byte of x is
	// below k (k ≤ 0x80), and also possibly in bytes after it; never
	// when all are ≥ k. DEL is the zero byte of w^0x7f….
	del := w ^ 0x7f*ones
	return ((w-0x20*ones)&^w | (del-ones)&^del) & highs
}

// load64 reads v[i:i+8] as a little-endian word (one load once
// compiled).
func load64[T string | []byte](v T, i int) uint64 {
	b := v[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// load32 reads v[i:i+4] as a little-endian word.
func load32[T string | []byte](v T, i int) uint32 {
	b := v[i : i+4]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// indexCtlFrom is indexCtlInValue's byte-by-byte test of v[from:to].
func indexCtlFrom[T string | []byte](v T, from, to int) int {
	for j := from; j < to; j++ {
		if ctlInValue(v[j]) {
			return j
		}
	}
	return -1
}

// lower returns the ASCII lower-case of b.
func lower(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

// EqualFold reports whether the ASCII strings a and b are equal ignoring
// case. It is the comparison header names need, without allocating.
func EqualFold(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// isOWS reports whether b is optional whitespace (SP or HTAB).
func isOWS(b byte) bool { return b == ' ' || b == '\t' }

// TrimOWS removes leading and trailing SP and HTAB: the optional
// whitespace around a field value (RFC 9110 §5.5, §5.6.3). The module's
// one trim: the parsers here, the client's HTTP/1.1 and HTTP/2 heads and
// wire/h2's request encoder use it.
func TrimOWS[T string | []byte](b T) T {
	for len(b) > 0 && isOWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isOWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// HasToken reports whether the comma-separated list v contains token,
// compared without regard to case (Connection: keep-alive, Upgrade).
func HasToken(v []byte, token string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if EqualFold(TrimOWS(v[:i]), token) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

// ListLen counts the non-empty elements of the comma-separated list v
// (RFC 9110 §5.6.1: empty elements do not count).
func ListLen(v []byte) int {
	n := 0
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if len(TrimOWS(v[:i])) > 0 {
			n++
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return n
}
