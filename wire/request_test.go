package wire_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/hotpathhq/hotpath/wire"
)

// wrkGET is what wrk sends by default.
const wrkGET = "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"

// browserGET is a browser navigation with the fields a browser sends.
const browserGET = "GET /search?q=hotpath&lang=en HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"Connection: keep-alive\r\n" +
	"Cache-Control: max-age=0\r\n" +
	"sec-ch-ua: \"Chromium\";v=\"124\", \"Google Chrome\";v=\"124\", \"Not-A.Brand\";v=\"99\"\r\n" +
	"sec-ch-ua-mobile: ?0\r\n" +
	"sec-ch-ua-platform: \"Linux\"\r\n" +
	"Upgrade-Insecure-Requests: 1\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
	"Sec-Fetch-Site: same-origin\r\n" +
	"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"Cookie: session=4f1c2a9b7e; theme=dark\r\n" +
	"\r\n"

func TestParseFields(t *testing.T) {
	tests := []struct {
		raw                    string
		method, target, proto  string
		minor                  int
		host                   string
		cl                     int64
		chunked, close, expect bool
		upgrade                bool
		path, query            string
		fields                 int
	}{
		{raw: wrkGET, method: "GET", target: "/", proto: "HTTP/1.1", minor: 1, host: "127.0.0.1:8080",
			path: "/", fields: 1},
		{raw: browserGET, method: "GET", target: "/search?q=hotpath&lang=en", proto: "HTTP/1.1", minor: 1,
			host: "www.example.com", path: "/search", query: "q=hotpath&lang=en", fields: 13},
		{raw: "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\nExpect: 100-continue\r\n\r\n",
			method: "POST", target: "/up", proto: "HTTP/1.1", minor: 1, host: "h", cl: 12, expect: true, path: "/up", fields: 3},
		{raw: "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
			method: "PUT", target: "/c", proto: "HTTP/1.1", minor: 1, host: "h", cl: -1, chunked: true, close: true, path: "/c", fields: 3},
		{raw: "GET /old HTTP/1.0\r\n\r\n", method: "GET", target: "/old", proto: "HTTP/1.0", close: true, path: "/old"},
		{raw: "GET /ka HTTP/1.0\r\nConnection: Keep-Alive\r\nExpect: 100-continue\r\n\r\n", method: "GET", target: "/ka",
			proto: "HTTP/1.0", path: "/ka", fields: 2},
		{raw: "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n",
			method: "GET", target: "/ws", proto: "HTTP/1.1", minor: 1, host: "h", upgrade: true, path: "/ws", fields: 3},
		{raw: "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", method: "OPTIONS", target: "*", proto: "HTTP/1.1", minor: 1,
			host: "h", path: "*", fields: 1},
		{raw: "GET /q? HTTP/1.1\r\nHost: h\r\n\r\n", method: "GET", target: "/q?", proto: "HTTP/1.1", minor: 1,
			host: "h", path: "/q", fields: 1},
	}
	for _, tt := range tests {
		var r wire.Request
		lim := wire.DefaultLimits()
		n, err := r.Parse([]byte(tt.raw), &lim)
		if err != nil || n != len(tt.raw) {
			t.Errorf("%q: Parse = %d, %v", tt.raw, n, err)
			continue
		}
		got := []any{string(r.Method), string(r.Target), string(r.Proto), r.ProtoMinor, string(r.Host), r.ContentLength,
			r.Chunked, r.Close, r.Expect100, r.Upgrade, string(r.Path()), string(r.Query()), len(r.Headers)}
		want := []any{tt.method, tt.target, tt.proto, tt.minor, tt.host, tt.cl,
			tt.chunked, tt.close, tt.expect, tt.upgrade, tt.path, tt.query, tt.fields}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: field %d = %v, want %v", tt.raw, i, got[i], want[i])
			}
		}
	}
}

func TestParseIsZeroCopy(t *testing.T) {
	buf := []byte(browserGET)
	var r wire.Request
	lim := wire.DefaultLimits()
	if _, err := r.Parse(buf, &lim); err != nil {
		t.Fatal(err)
	}
	inside := func(b []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		start := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
		return p >= start && p+uintptr(len(b)) <= start+uintptr(len(buf))
	}
	all := [][]byte{r.Method, r.Target, r.Proto, r.Host}
	for _, h := range r.Headers {
		all = append(all, h.Name, h.Value)
	}
	for _, b := range all {
		if !inside(b) {
			t.Errorf("%q does not point into the parsed buffer", b)
		}
	}
}

func TestHeaderLookup(t *testing.T) {
	var r wire.Request
	lim := wire.DefaultLimits()
	raw := "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nEmpty:\r\n\r\n"
	if _, err := r.Parse([]byte(raw), &lim); err != nil {
		t.Fatal(err)
	}
	if got := string(r.Header("X-a")); got != "1" {
		t.Errorf("Header(X-a) = %q, want the first, 1", got)
	}
	if got := r.Header("empty"); got == nil || len(got) != 0 {
		t.Errorf("Header(empty) = %q, want empty and non-nil", got)
	}
	if got := r.Header("missing"); got != nil {
		t.Errorf("Header(missing) = %q, want nil", got)
	}
}

// TestParseReuse parses different requests into one Request: nothing may
// leak from one to the next, and the Headers array is reused.
func TestParseReuse(t *testing.T) {
	var r wire.Request
	lim := wire.DefaultLimits()
	first := "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nConnection: close, upgrade\r\nExpect: 100-continue\r\n\r\n"
	if _, err := r.Parse([]byte(first), &lim); err != nil {
		t.Fatal(err)
	}
	capBefore := cap(r.Headers)
	if _, err := r.Parse([]byte("GET /b HTTP/1.1\r\nHost: b\r\n\r\n"), &lim); err != nil {
		t.Fatal(err)
	}
	if r.Chunked || r.Close || r.Expect100 || r.Upgrade || r.ContentLength != 0 || len(r.Headers) != 1 || string(r.Host) != "b" {
		t.Errorf("state leaked from the previous request: %s", summary(&r))
	}
	if cap(r.Headers) != capBefore {
		t.Errorf("Headers capacity %d, want %d kept", cap(r.Headers), capBefore)
	}
	// A failed parse leaves no half-parsed state that looks valid.
	if _, err := r.Parse([]byte("GET /c HTTP/1.1\r\nHost: c\r\nBad Name: x\r\n\r\n"), &lim); err == nil {
		t.Fatal("accepted a bad field name")
	}
	if _, err := r.Parse([]byte("GET /d HTTP/1.0\r\n\r\n"), &lim); err != nil || r.Host != nil || len(r.Headers) != 0 {
		t.Errorf("after a failed parse: %v, %s", err, summary(&r))
	}
}

// TestParseErrors pins the error for inputs that could be read two ways.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		raw  string
		want *wire.Error
	}{
		{"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", wire.ErrLengthAndChunked},
		{"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", wire.ErrLengthAndChunked},
		{"GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", wire.ErrTEOnHTTP10},
		{"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", wire.ErrUnsupportedTE},
		{"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", wire.ErrConflictingLength},
		{"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 01\r\n\r\n", wire.ErrConflictingLength},
		{"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 1\r\n\r\n", wire.ErrBadContentLength},
		{"GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n", wire.ErrContentLengthTooBig},
		{"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n", wire.ErrFramingTrailer},
		{"GET / HTTP/1.1\r\nHost: h\r\nFoo: a\r\n b\r\n\r\n", wire.ErrObsFold},
		{"GET / HTTP/1.1\r\nHost : h\r\n\r\n", wire.ErrBadHeaderName},
		{"GET / HTTP/1.1\r\nHost: h\r\nFoo: a\rb\r\n\r\n", wire.ErrBareCR},
		{"GET / HTTP/1.1\r\nHost: h\r\nFoo: a\x00b\r\n\r\n", wire.ErrBadHeaderValue},
		{"GET / HTTP/1.1\r\nHost: h\r\nFoo\r\n\r\n", wire.ErrMissingColon},
		{"GET / HTTP/1.1\r\n\r\n", wire.ErrMissingHost},
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", wire.ErrDuplicateHost},
		{"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", wire.ErrBadHost},
		{"GET / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\n\r\n", wire.ErrExpectation},
		{"G@T / HTTP/1.1\r\nHost: h\r\n\r\n", wire.ErrBadMethod},
		{"GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n", wire.ErrBadTarget},
		{"GET http://u@h/ HTTP/1.1\r\nHost: h\r\n\r\n", wire.ErrBadTarget},
		{"CONNECT h HTTP/1.1\r\nHost: h\r\n\r\n", wire.ErrBadTarget},
		{"GET / HTTP/1.1x\r\nHost: h\r\n\r\n", wire.ErrBadVersion},
		{"GET / HTTP/2.0\r\nHost: h\r\n\r\n", wire.ErrVersionUnsupported},
		{"GET /\r\n\r\n", wire.ErrMalformedLine},
		{"\r\r\n", wire.ErrBareCR},
	}
	for _, tt := range tests {
		_, n, err := parse([]byte(tt.raw))
		if err != tt.want {
			t.Errorf("%q: Parse = %d, %v; want %v", tt.raw, n, err, tt.want)
		}
	}
}

func TestErrorValues(t *testing.T) {
	errs := []*wire.Error{
		wire.ErrRequestLineTooLong, wire.ErrHeaderTooLarge, wire.ErrTooManyHeaders, wire.ErrBodyTooLarge,
		wire.ErrMalformedLine, wire.ErrBadMethod, wire.ErrBadTarget, wire.ErrBadVersion, wire.ErrVersionUnsupported,
		wire.ErrBareCR, wire.ErrObsFold, wire.ErrBadHeaderName, wire.ErrMissingColon, wire.ErrBadHeaderValue,
		wire.ErrMissingHost, wire.ErrDuplicateHost, wire.ErrBadHost, wire.ErrBadContentLength, wire.ErrConflictingLength,
		wire.ErrLengthAndChunked, wire.ErrUnsupportedTE, wire.ErrTEOnHTTP10, wire.ErrFramingTrailer, wire.ErrExpectation,
		wire.ErrBadChunkSize, wire.ErrChunkLineTooLong, wire.ErrChunkBareLF, wire.ErrBadChunkTerminator,
		wire.ErrChunkOverhead, wire.ErrBadTrailer, wire.ErrTrailerTooLarge, wire.ErrUnexpectedEOF, wire.ErrContentLengthTooBig,
	}
	for _, e := range errs {
		if !statuses[e.Status] || e.Reason == "" || !strings.HasPrefix(e.Error(), "wire: ") {
			t.Errorf("%#v: bad status, reason or message", e)
		}
		var we *wire.Error
		if !errors.As(error(e), &we) || we != e {
			t.Errorf("%v: errors.As does not find it", e)
		}
	}
}

func TestParseAllocs(t *testing.T) {
	for _, raw := range []string{wrkGET, browserGET} {
		buf := []byte(raw)
		var r wire.Request
		lim := wire.DefaultLimits()
		r.Parse(buf, &lim) // size Headers once
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := r.Parse(buf, &lim); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Parse allocates %v times per request, want 0", allocs)
		}
	}
}

func TestHasTokenAndEqualFold(t *testing.T) {
	for _, tt := range []struct {
		v, tok string
		want   bool
	}{
		{"close", "close", true},
		{"Keep-Alive, Close", "close", true},
		{" upgrade ,\tx", "Upgrade", true},
		{"closed", "close", false},
		{"", "close", false},
		{",,", "close", false},
		{"a,close,", "close", true},
	} {
		if got := wire.HasToken([]byte(tt.v), tt.tok); got != tt.want {
			t.Errorf("HasToken(%q, %q) = %v", tt.v, tt.tok, got)
		}
	}
	if !wire.EqualFold([]byte("Content-LENGTH"), "content-length") || wire.EqualFold([]byte("Host"), "Hos") ||
		wire.EqualFold([]byte("\xc0"), "\xe0") {
		t.Error("EqualFold")
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, raw string }{{"wrk", wrkGET}, {"browser", browserGET}} {
		b.Run(bc.name, func(b *testing.B) {
			buf := []byte(bc.raw)
			var r wire.Request
			lim := wire.DefaultLimits()
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Parse(buf, &lim); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPathOfEveryTargetForm: Path is the path for origin-form and
// absolute-form targets alike, so both route the same.
func TestPathOfEveryTargetForm(t *testing.T) {
	for target, want := range map[string]string{
		"/a/b?q=1":             "/a/b",
		"/":                    "/",
		"http://h/a/b?q=1":     "/a/b",
		"HTTPS://h:8443/a":     "/a",
		"http://h":             "/",
		"http://h?q=1":         "/",
		"http://h/":            "/",
		"*":                    "*",
		"example.com:443":      "example.com:443",
		"http://h/p%20q?x?y=1": "/p%20q",
	} {
		r := wire.Request{Target: []byte(target)}
		if got := string(r.Path()); got != want {
			t.Errorf("Path(%q) = %q, want %q", target, got, want)
		}
	}
}

// TestTrailerNamesCountAsFields: each name a Trailer field declares counts
// toward MaxHeaders, as net/http counts them (Go 1.27), and so do the
// trailer fields a chunked body ends with (MaxTrailers).
func TestTrailerNamesCountAsFields(t *testing.T) {
	lim := wire.Limits{MaxHeaders: 4}.WithDefaults()
	parse := func(trailer string) error {
		var r wire.Request
		_, err := r.Parse([]byte("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: "+trailer+"\r\n\r\n"), &lim)
		return err
	}
	if err := parse("a, b"); err != nil {
		t.Errorf("3 fields and 2 trailer names: %v; want accepted", err)
	}
	if err := parse("a, , b,"); err != nil {
		t.Errorf("empty list elements counted: %v", err)
	}
	if err := parse("a, b, c"); err != wire.ErrTooManyHeaders {
		t.Errorf("3 fields, 3 trailer names, limit 4: %v; want ErrTooManyHeaders", err)
	}

	dec := wire.ChunkedDecoder{MaxTrailers: 2}
	body := []byte("0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n")
	if _, _, err := dec.Decode(body); err != wire.ErrTooManyTrailers {
		t.Errorf("3 trailers, limit 2: %v; want ErrTooManyTrailers", err)
	}
	dec = wire.ChunkedDecoder{MaxTrailers: 3}
	if _, _, err := dec.Decode(body); err != io.EOF {
		t.Errorf("3 trailers, limit 3: %v; want io.EOF", err)
	}
}

// TestValidHeaderValueEveryByte checks the eight-at-a-time scan against
// RFC 9110's rule byte by byte: every byte at every position of a word and
// of its tail, next to HTAB and obs-text, which must not trip it.
func TestValidHeaderValueEveryByte(t *testing.T) {
	bad := func(c byte) bool { return (c < 0x20 && c != '\t') || c == 0x7f }
	for n := 1; n <= 19; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				v := make([]byte, n)
				for i := range v {
					v[i] = "a\t\x80~ \xff"[i%6]
				}
				v[pos] = byte(c)
				want := !bad(byte(c))
				if got := wire.ValidHeaderValue(v); got != want {
					t.Fatalf("ValidHeaderValue(%q) = %v, want %v", v, got, want)
				}
				if got := wire.ValidHeaderValue(string(v)); got != want {
					t.Fatalf("ValidHeaderValue(string %q) = %v, want %v", v, got, want)
				}
			}
		}
	}
}

// TestParseFirstBadValueByteNamesTheError: the error names the first
// offending byte of a value, wherever it falls in an eight-byte word.
func TestParseFirstBadValueByteNamesTheError(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  error
	}{
		{"abcdefg\rhi\x01", wire.ErrBareCR},
		{"abc\x01defgh\rij", wire.ErrBadHeaderValue},
		{"abcdefghijklmnop\r", wire.ErrBareCR},
		{"a\tb\x7fc", wire.ErrBadHeaderValue},
	} {
		var req wire.Request
		lim := wire.DefaultLimits()
		_, err := req.Parse([]byte("GET / HTTP/1.1\r\nHost: x\r\nX: "+tc.value+"\r\n\r\n"), &lim)
		if err != tc.want {
			t.Errorf("value %q: %v, want %v", tc.value, err, tc.want)
		}
	}
}
