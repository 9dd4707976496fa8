package h2

import (
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// fields parses "name: value" lines; a value may be empty.
func fields(lines ...string) []Field {
	var fs []Field
	for _, l := range lines {
		i := strings.Index(l[1:], ":") + 1 // a pseudo-header's name starts with ':'
		name, value := l[:i], l[i+1:]
		value = strings.TrimPrefix(value, " ")
		fs = append(fs, Field{Name: []byte(name), Value: []byte(value)})
	}
	return fs
}

var getReq = []string{":method: GET", ":scheme: https", ":path: /", ":authority: example.com"}

func with(extra ...string) []string { return append(append([]string(nil), getReq...), extra...) }

func TestValidateRequest(t *testing.T) {
	tests := []struct {
		name     string
		fields   []string
		trailers bool
		extended bool
		err      error
	}{
		{"plain GET", getReq, false, false, nil},
		{"without :authority (§8.3.1 allows it)", getReq[:3], false, false, nil},
		{"regular fields", with("user-agent: x", "accept: */*", "te: trailers", "content-length: 0"), false, false, nil},
		// §8.2.1 field names and values
		{"uppercase name", with("User-Agent: x"), false, false, ErrUppercaseName},
		{"space in name", with("user agent: x"), false, false, ErrBadFieldName},
		{"empty name", with(": x"), false, false, ErrBadFieldName},
		{"non-ASCII name", with("\xffname: x"), false, false, ErrBadFieldName},
		{"NUL in value", with("x-a: a\x00b"), false, false, ErrBadFieldValue},
		{"CR in value", with("x-a: a\rb"), false, false, ErrBadFieldValue},
		{"LF in value", with("x-a: a\nb"), false, false, ErrBadFieldValue},
		// accepted, as by net/http's server (see checkValue)
		{"leading space in value", with("x-a:  a"), false, false, nil},
		{"trailing tab in value", with("x-a: a\t"), false, false, nil},
		{"inner whitespace and obs-text are fine", with("x-a: a b\t\x80c"), false, false, nil},
		{"other control byte in value", with("x-a: a\x01b"), false, false, ErrBadFieldValue},
		{"DEL in value", with("x-a: a\x7fb"), false, false, ErrBadFieldValue},
		{"empty value", with("x-a:"), false, false, nil},
		// §8.2.2 connection-specific fields
		{"connection", with("connection: keep-alive"), false, false, ErrConnectionField},
		{"keep-alive", with("keep-alive: 5"), false, false, ErrConnectionField},
		{"proxy-connection", with("proxy-connection: close"), false, false, ErrConnectionField},
		{"transfer-encoding", with("transfer-encoding: chunked"), false, false, ErrConnectionField},
		{"upgrade", with("upgrade: h2c"), false, false, ErrConnectionField},
		{"te gzip", with("te: gzip"), false, false, ErrBadTE},
		{"te trailers, gzip", with("te: trailers, gzip"), false, false, ErrBadTE},
		// §8.3 pseudo-header fields
		{"unknown pseudo", with(":foo: bar"), false, false, ErrUnknownPseudo},
		{"unknown pseudo after a regular field", with("x-a: b", ":foo: bar"), false, false, ErrPseudoAfterField},
		{"unknown pseudo first", append([]string{":foo: bar"}, getReq...), false, false, ErrUnknownPseudo},
		{"response pseudo in a request", append([]string{":status: 200"}, getReq...), false, false, ErrUnknownPseudo},
		{"pseudo after a regular field", []string{":method: GET", ":scheme: https", "x-a: b", ":path: /"}, false, false, ErrPseudoAfterField},
		{"duplicate :method", append([]string{":method: GET"}, getReq...), false, false, ErrDuplicatePseudo},
		{"duplicate :path", []string{":method: GET", ":scheme: https", ":path: /", ":path: /"}, false, false, ErrDuplicatePseudo},
		{"duplicate empty :authority", []string{":authority:", ":authority:", ":method: GET", ":scheme: https", ":path: /"}, false, false, ErrDuplicatePseudo},
		{"missing :method", getReq[1:], false, false, ErrMissingPseudo},
		{"missing :scheme", []string{":method: GET", ":path: /"}, false, false, ErrMissingPseudo},
		{"missing :path", []string{":method: GET", ":scheme: https"}, false, false, ErrMissingPseudo},
		{"empty :path", []string{":method: GET", ":scheme: https", ":path:"}, false, false, ErrBadPath},
		{"relative :path", []string{":method: GET", ":scheme: https", ":path: a/b"}, false, false, ErrBadPath},
		{"* on OPTIONS", []string{":method: OPTIONS", ":scheme: https", ":path: *"}, false, false, nil},
		{"* on another method, as HTTP/1.1 and net/http", []string{":method: FOO", ":scheme: https", ":path: *"}, false, false, nil},
		{"userinfo in :authority", []string{":method: GET", ":scheme: https", ":path: /", ":authority: user:pw@example.com"}, false, false, ErrBadAuthority},
		{"userinfo in CONNECT's :authority", []string{":method: CONNECT", ":authority: u@example.com:443"}, false, false, ErrBadAuthority},
		{"bad method", []string{":method: G T", ":scheme: https", ":path: /"}, false, false, ErrBadMethod},
		{"empty method", []string{":method:", ":scheme: https", ":path: /"}, false, false, ErrBadMethod},
		// §8.5 CONNECT; RFC 8441 extended CONNECT
		{"CONNECT", []string{":method: CONNECT", ":authority: example.com:443"}, false, false, nil},
		{"CONNECT with :path", []string{":method: CONNECT", ":authority: example.com:443", ":path: /"}, false, false, ErrConnectPseudo},
		{"CONNECT with :scheme", []string{":method: CONNECT", ":authority: example.com:443", ":scheme: https"}, false, false, ErrConnectPseudo},
		{"CONNECT without :authority", []string{":method: CONNECT"}, false, false, ErrConnectPseudo},
		{":protocol without extended CONNECT", []string{":method: CONNECT", ":protocol: websocket", ":scheme: https", ":path: /chat", ":authority: a"}, false, false, ErrProtocolPseudo},
		{"extended CONNECT", []string{":method: CONNECT", ":protocol: websocket", ":scheme: https", ":path: /chat", ":authority: a"}, false, true, nil},
		{"extended CONNECT without :path", []string{":method: CONNECT", ":protocol: websocket", ":scheme: https", ":authority: a"}, false, true, ErrMissingPseudo},
		{":protocol on GET", []string{":method: GET", ":protocol: websocket", ":scheme: https", ":path: /chat"}, false, true, ErrProtocolPseudo},
		// §8.1 trailers
		{"trailers", []string{"x-checksum: abc"}, true, false, nil},
		{"pseudo in trailers", []string{":method: GET"}, true, false, ErrPseudoInTrailers},
		{"connection field in trailers", []string{"connection: close"}, true, false, ErrConnectionField},
		{"uppercase in trailers", []string{"X-Checksum: abc"}, true, false, ErrUppercaseName},
		// §8.1.1 content-length
		{"content-length twice, same", with("content-length: 5", "content-length: 5"), false, false, nil},
		{"content-length twice, different", with("content-length: 5", "content-length: 6"), false, false, ErrBadContentLength},
		{"content-length not a number", with("content-length: 5a"), false, false, ErrBadContentLength},
		{"content-length negative", with("content-length: -1"), false, false, ErrBadContentLength},
		{"content-length empty", with("content-length:"), false, false, ErrBadContentLength},
		{"content-length list", with("content-length: 5, 5"), false, false, ErrBadContentLength},
		{"content-length 19 digits", with("content-length: 1000000000000000000"), false, false, ErrBadContentLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ValidateRequest(fields(tt.fields...), tt.trailers, tt.extended)
			if err != tt.err {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			if e, ok := err.(*Error); ok && (!e.Stream || e.Code != ErrCodeProtocol) {
				t.Fatalf("%v is not a stream error with PROTOCOL_ERROR", e)
			}
			if err == nil && !tt.trailers && len(v.Method) == 0 {
				t.Fatal("no :method kept")
			}
		})
	}
}

func TestValidatorKeepsPseudoHeaders(t *testing.T) {
	v, err := ValidateRequest(fields(":method: POST", ":scheme: https", ":path: /upload?x=1", ":authority: example.com", "content-length: 42"), false, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(v.Method) != "POST" || string(v.Scheme) != "https" || string(v.Path) != "/upload?x=1" || string(v.Authority) != "example.com" || v.ContentLength != 42 || v.Protocol != nil {
		t.Fatalf("%+v", v)
	}
	v.Reset(false)
	if v.ContentLength != -1 || v.Method != nil {
		t.Fatalf("after Reset: %+v", v)
	}
}

func TestCheckContentLength(t *testing.T) {
	tests := []struct {
		declared, received int64
		ended              bool
		ok                 bool
	}{
		{-1, 100, true, true},
		{10, 5, false, true},
		{10, 10, true, true},
		{10, 11, false, false}, // fails before the end
		{10, 9, true, false},
		{0, 0, true, true},
		{0, 1, false, false},
	}
	for _, tt := range tests {
		err := CheckContentLength(tt.declared, tt.received, tt.ended)
		if (err == nil) != tt.ok || err != nil && err != ErrContentLengthData {
			t.Errorf("CheckContentLength(%d, %d, %v) = %v", tt.declared, tt.received, tt.ended, err)
		}
	}
}

// checkValue's word-at-a-time scan must find a bad byte at every offset,
// and pass every other byte at every offset; and it agrees with the rule
// x/net's HTTP/2 framer applies (httpguts.ValidHeaderFieldValue).
// checkName agrees with x/net's name rule plus
// §8.2.1's lowercase rule.
func TestFieldBytesEveryOffset(t *testing.T) {
	for n := 1; n <= 40; n++ {
		for i := range n {
			for c := range 256 {
				v := []byte(strings.Repeat("a", n))
				v[i] = byte(c)
				var want *Error
				switch {
				case !httpguts.ValidHeaderFieldValue(string(v)):
					want = ErrBadFieldValue
				}
				if err := checkValue(v); err != want {
					t.Fatalf("value %q: %v, want %v", v, err, want)
				}
				want = nil
				switch {
				case !httpguts.ValidHeaderFieldName(string(v)):
					want = ErrBadFieldName
				case 'A' <= c && c <= 'Z':
					want = ErrUppercaseName
				}
				if err := checkName(v); err != want {
					t.Fatalf("name %q: %v, want %v", v, err, want)
				}
			}
		}
	}
}

// ConnectionSpecific is the module's one §8.2.2 list: the same answer for
// a string and for bytes, without allocating, and ConnectionSpecificKeys
// are its canonical spellings.
func TestConnectionSpecific(t *testing.T) {
	for name, want := range map[string]bool{
		"connection": true, "keep-alive": true, "proxy-connection": true, "transfer-encoding": true, "upgrade": true,
		"te": false, "content-length": false, "host": false, "Connection": false, "": false,
	} {
		if ConnectionSpecific(name) != want || ConnectionSpecific([]byte(name)) != want {
			t.Errorf("%q: want %v", name, want)
		}
	}
	for _, k := range ConnectionSpecificKeys {
		if !ConnectionSpecific(strings.ToLower(k)) {
			t.Errorf("%s is in ConnectionSpecificKeys, not in the list", k)
		}
	}
	b := []byte("transfer-encoding")
	if a := testing.AllocsPerRun(100, func() { ConnectionSpecific(b) }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}
