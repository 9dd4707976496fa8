package server

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/internal/vectors"
)

// The differential test: one echo handler, served by hotpath's
// http.Handler adapter and by net/http, and a few hundred raw requests sent
// to both over TCP. For every request the two must agree on accepting or
// rejecting it, and when both accept, on everything a handler can see of
// it (the echo) and on the response a client reads.
//
// Where hotpath is stricter by design (docs/conformance.md, each vector's
// Note) the case is listed in deliberateDifferences with the reason; where
// the adapter is wrong, it is listed in knownAdapterBugs until fixed. The
// test fails on any unlisted difference, and on any listed one that no
// longer differs, so both maps stay exact.

// diffEcho is the echo: what the handler saw of the request, as JSON. Every
// string that comes from the wire is quoted (strconv.Quote), so bytes that
// are not UTF-8 survive the encoding.
type diffEcho struct {
	Method           string   `json:"method"`
	RequestURI       string   `json:"requestURI"`
	Scheme           string   `json:"scheme,omitempty"`
	URLHost          string   `json:"urlHost,omitempty"`
	Path             string   `json:"path"`
	RawPath          string   `json:"rawPath,omitempty"`
	RawQuery         string   `json:"rawQuery,omitempty"`
	ForceQuery       bool     `json:"forceQuery,omitempty"`
	Fragment         string   `json:"fragment,omitempty"`
	Proto            string   `json:"proto"`
	ProtoMajorMinor  string   `json:"protoMajorMinor"`
	Host             string   `json:"host"`
	ContentLength    int64    `json:"contentLength"`
	TransferEncoding []string `json:"transferEncoding"`
	Close            bool     `json:"close"`
	Header           []string `json:"header"`
	TrailerDeclared  []string `json:"trailerDeclared"`
	Trailer          []string `json:"trailer"`
	Body             string   `json:"body"`
	BodyErr          string   `json:"bodyErr"`
}

// echoHandler answers every request with a diffEcho.
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	declared := sortedHeader(r.Trailer) // the keys, before the body is read
	body, err := io.ReadAll(r.Body)
	e := diffEcho{
		Method:           strconv.Quote(r.Method),
		RequestURI:       strconv.Quote(r.RequestURI),
		Scheme:           r.URL.Scheme,
		URLHost:          strconv.Quote(r.URL.Host),
		Path:             strconv.Quote(r.URL.Path),
		RawPath:          strconv.Quote(r.URL.RawPath),
		RawQuery:         strconv.Quote(r.URL.RawQuery),
		ForceQuery:       r.URL.ForceQuery,
		Fragment:         strconv.Quote(r.URL.Fragment),
		Proto:            r.Proto,
		ProtoMajorMinor:  fmt.Sprintf("%d.%d", r.ProtoMajor, r.ProtoMinor),
		Host:             strconv.Quote(r.Host),
		ContentLength:    r.ContentLength,
		TransferEncoding: r.TransferEncoding,
		Close:            r.Close,
		Header:           sortedHeader(r.Header),
		TrailerDeclared:  declared,
		Trailer:          sortedHeader(r.Trailer),
		Body:             summarize(body),
		BodyErr:          fmt.Sprint(err),
	}
	w.Header().Set("X-Echo", "1")
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(e)
})

func sortedHeader(h http.Header) []string {
	out := make([]string, 0, len(h))
	for k, vv := range h {
		q := make([]string, len(vv))
		for i, v := range vv {
			q[i] = strconv.Quote(v)
		}
		out = append(out, strconv.Quote(k)+"="+strings.Join(q, ","))
	}
	sort.Strings(out)
	return out
}

// summarize keeps small bodies whole and large ones as length and hash.
func summarize(b []byte) string {
	if len(b) <= 1024 {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%d bytes, sha256 %x", len(b), sha256.Sum256(b))
}

// diffCase is one raw exchange. methods names the method of each
// pipelined request, for reading the responses (HEAD has no body); past
// its end, the first method is used again.
type diffCase struct {
	name    string
	raw     string
	methods []string
}

// diffCases returns every request of the differential test: the whole
// conformance table, every explicit chunked body of vectors.Chunks as a
// POST body, a sample of the generated ones, and cases of our own.
func diffCases() []diffCase {
	var cases []diffCase
	for _, v := range vectors.Requests {
		m, _, _ := strings.Cut(strings.TrimLeft(v.Raw, "\r\n"), " ")
		cases = append(cases, diffCase{name: "vectors/" + v.Name, raw: padBody(v.Raw), methods: []string{m}})
	}
	for _, v := range vectors.Chunks {
		if strings.HasPrefix(v.Name, "TestParseHexUint/size-") {
			n, _ := strconv.ParseUint(strings.TrimPrefix(v.Name, "TestParseHexUint/size-"), 16, 32)
			if n > 20 && n != 0x7ff && n != 0x800 && n != 0x801 && n != 0x4d2 {
				continue // a sample: every size is in the wire tests
			}
		}
		cases = append(cases, diffCase{
			name:    "chunks/" + v.Name,
			raw:     "POST /chunked HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n" + v.Raw,
			methods: []string{"POST"},
		})
	}
	for _, c := range ownDiffCases {
		if c.methods == nil {
			m, _, _ := strings.Cut(c.raw, " ")
			c.methods = []string{m}
		}
		cases = append(cases, c)
	}
	return cases
}

// padBody completes a vector whose head declares more body than it
// carries (the limit vectors), as net/http reads the head, up to 8 MiB:
// both servers then see a whole request.
func padBody(raw string) string {
	raw = withFullBody(raw)
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil || r.ContentLength <= 0 || r.ContentLength > 8<<20 {
		return raw
	}
	head := len(raw) - bufferedAfterHead(raw)
	if missing := r.ContentLength - int64(len(raw)-head); missing > 0 {
		return raw + strings.Repeat("x", int(missing))
	}
	return raw
}

// bufferedAfterHead returns how many bytes of raw follow the first empty
// line.
func bufferedAfterHead(raw string) int {
	for _, sep := range []string{"\r\n\r\n", "\n\n"} {
		if i := strings.Index(raw, sep); i >= 0 {
			return len(raw) - i - len(sep)
		}
	}
	return 0
}

// ownDiffCases are requests the vectors do not have: the request-target
// shapes that net/url keeps a RawPath or ForceQuery for, header shapes
// net/http rewrites, keep-alive and pipelining (which exercise the
// adapter's per-connection reuse), 100-continue and trailers.
var ownDiffCases = []diffCase{
	// Targets: what ends up in URL.Path, RawPath, RawQuery, ForceQuery.
	{name: "target/plain", raw: "GET /a/b/c HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/query", raw: "GET /a?b=1&c=2 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/empty-query", raw: "GET /a? HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/root-empty-query", raw: "GET /? HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/two-question-marks", raw: "GET /a??b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/hash-in-query", raw: "GET /a?b#c HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/escaped-slash", raw: "GET /a%2Fb HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/escaped-slash-lower", raw: "GET /a%2fb HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/escaped-space", raw: "GET /a%20b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/escaped-unreserved", raw: "GET /%61bc HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/plus", raw: "GET /a+b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/semicolon", raw: "GET /a;b=c HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/sub-delims", raw: "GET /a!$&'()*+,;=:@b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/apostrophe", raw: "GET /a'b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/pipe", raw: "GET /a|b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/caret", raw: "GET /a^b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/backtick", raw: "GET /a`b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/braces", raw: "GET /a{b} HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/brackets", raw: "GET /a[b] HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/quote", raw: "GET /a\"b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/backslash", raw: "GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/angle-brackets", raw: "GET /a<b> HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/dot-segments", raw: "GET /a/../b/./c HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/double-slash", raw: "GET //a//b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/tilde", raw: "GET /~user HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/query-with-slash-and-question", raw: "GET /a?b=/c?d HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/absolute-with-query", raw: "GET http://h.example/a%2Fb?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/absolute-empty-query", raw: "GET http://h.example/a? HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "target/options-asterisk-body", raw: "OPTIONS * HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok"},

	// Header shapes.
	{name: "header/canonical-case", raw: "GET / HTTP/1.1\r\nhost: x\r\ncontent-type: a\r\nUSER-AGENT: b\r\nx-request-id: c\r\nx-custom-thing: d\r\nsec-websocket-key: e\r\n\r\n"},
	{name: "header/underscore-name", raw: "GET / HTTP/1.1\r\nHost: x\r\nX_Foo_bar: v\r\n\r\n"},
	{name: "header/ows-around-value", raw: "GET / HTTP/1.1\r\nHost: x\r\nA:   v  \t\r\nB:\tw\r\n\r\n"},
	{name: "header/empty-values", raw: "GET / HTTP/1.1\r\nHost: x\r\nA:\r\nA: \r\nA: z\r\n\r\n"},
	{name: "header/repeated-interleaved", raw: "GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\na: 3\r\nb: 4\r\nA: 5\r\n\r\n"},
	{name: "header/cookies", raw: "GET / HTTP/1.1\r\nHost: x\r\nCookie: a=1\r\nCookie: b=2; c=3\r\n\r\n"},
	{name: "header/pragma-and-cache-control", raw: "GET / HTTP/1.1\r\nHost: x\r\nPragma: no-cache\r\nCache-Control: max-age=0\r\n\r\n"},
	{name: "header/host-upper-case-value", raw: "GET / HTTP/1.1\r\nHost: EXAMPLE.com:8080\r\n\r\n"},
	{name: "header/host-last", raw: "GET / HTTP/1.1\r\nA: 1\r\nHost: x\r\n\r\n"},
	{name: "header/connection-tokens", raw: "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\n\r\n"},
	{name: "header/connection-close-mixed-case", raw: "GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive, CLOSE\r\n\r\n"},
	{name: "header/connection-close-second-field", raw: "GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"},
	{name: "header/http1.0-keep-alive-mixed-case", raw: "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"},
	{name: "header/http1.0-close", raw: "GET / HTTP/1.0\r\nConnection: close\r\n\r\n"},
	{name: "header/http1.0-host", raw: "GET / HTTP/1.0\r\nHost: h10.example\r\n\r\n"},
	{name: "header/content-length-zero", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"},
	{name: "header/get-with-body", raw: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "header/unknown-method-with-body", raw: "BREW /pot HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "header/head-with-body", raw: "HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"},
	{name: "header/delete-with-chunked-body", raw: "DELETE /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"},
	{name: "header/http1.0-content-length", raw: "POST / HTTP/1.0\r\nContent-Length: 4\r\n\r\nbody"},
	{name: "header/te-and-trailer-names", raw: "GET / HTTP/1.1\r\nHost: x\r\nTE: trailers\r\nTrailer: X-A\r\n\r\n"},

	// Chunked bodies with extensions and trailers.
	{name: "chunked/extensions", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\n2;q=\"a b\"\r\nde\r\n0;last\r\n\r\n"},
	{name: "chunked/declared-trailer-sent", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n"},
	{name: "chunked/declared-trailer-not-sent", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n3\r\nabc\r\n0\r\n\r\n"},
	{name: "chunked/undeclared-trailer", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Other: 1\r\n\r\n"},
	{name: "chunked/two-declared-trailers", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: x-a, X-B\r\nTrailer: x-c\r\n\r\n1\r\nz\r\n0\r\nX-A: 1\r\nx-b: 2\r\nX-A: 3\r\n\r\n"},
	{name: "chunked/trailer-lower-case-name", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: x-lower\r\n\r\n0\r\nx-lower: v\r\n\r\n"},
	{name: "chunked/empty-body", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{name: "chunked/body-over-2KiB", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"1000\r\n" + strings.Repeat("q", 0x1000) + "\r\n0\r\n\r\n"},
	{name: "chunked/cut-mid-data", raw: "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"},
	{name: "length/cut-mid-body", raw: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"},

	// Expect: 100-continue, with the body sent at once.
	{name: "expect/100-continue-length", raw: "PUT /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"},
	{name: "expect/100-continue-chunked", raw: "PUT /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
	{name: "expect/100-continue-no-body", raw: "GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"},
	{name: "expect/100-continue-http1.0", raw: "PUT / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"},

	// Keep-alive and pipelining: the adapter reuses the Request, URL,
	// Header map and cached strings across requests on a connection.
	{name: "pipe/get-get", raw: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "pipe/post-length-then-get", raw: "POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"POST", "GET"}},
	{name: "pipe/chunked-then-get", raw: "POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"POST", "GET"}},
	{name: "pipe/head-then-get", raw: "HEAD /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD", "GET"}},
	{name: "pipe/same-bytes-split-differently", raw: "GET /1 HTTP/1.1\r\nHost: x\r\nA: ab\r\nB: c\r\n\r\nGET /1 HTTP/1.1\r\nHost: x\r\nA: a\r\nB: bc\r\n\r\n"},
	{name: "pipe/same-values-different-names", raw: "GET /1 HTTP/1.1\r\nHost: x\r\nA: v\r\n\r\nGET /1 HTTP/1.1\r\nHost: x\r\nB: v\r\n\r\n"},
	{name: "pipe/header-dropped-on-second", raw: "GET /1 HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\nGET /1 HTTP/1.1\r\nHost: x\r\nB: 2\r\n\r\n"},
	{name: "pipe/host-changes", raw: "GET /1 HTTP/1.1\r\nHost: a.example\r\n\r\nGET /1 HTTP/1.1\r\nHost: b.example\r\n\r\nGET /1 HTTP/1.1\r\nHost: a.example\r\n\r\n"},
	{name: "pipe/absolute-then-origin", raw: "GET http://abs.example/p?q HTTP/1.1\r\nHost: x\r\n\r\nGET /p HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "pipe/escaped-then-plain", raw: "GET /a%2Fb HTTP/1.1\r\nHost: x\r\n\r\nGET /a/b HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "pipe/trailer-then-none", raw: "POST /1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n0\r\nX-T: 1\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz", methods: []string{"POST", "POST"}},
	{name: "pipe/three-then-close", raw: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "pipe/http1.0-keep-alive-pair", raw: "GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
	{name: "pipe/http1.0-without-keep-alive-closes", raw: "GET /1 HTTP/1.0\r\n\r\nGET /2 HTTP/1.0\r\n\r\n"},
	{name: "pipe/http1.0-then-1.1", raw: "GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n"},
	{name: "pipe/valid-then-invalid", raw: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nFoo: a\x00b\r\n\r\n"},
	{name: "pipe/valid-then-smuggled", raw: "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", methods: []string{"GET", "POST"}},
	{name: "pipe/unread-body-then-get", raw: "PUT /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbodyGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"PUT", "GET"}},
	{name: "pipe/leading-crlf-after-post", raw: "POST /1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"POST", "GET"}},
	{name: "echo/over-2KiB-chunked", raw: "GET / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\n"},
	{name: "echo/over-2KiB-http1.0", raw: "GET / HTTP/1.0\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\n"},
	{name: "echo/over-2KiB-http1.0-keep-alive", raw: "GET /1 HTTP/1.0\r\nConnection: keep-alive\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\nGET /2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
	{name: "echo/over-2KiB-head", raw: "HEAD / HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n", methods: []string{"HEAD", "GET"}},
	{name: "echo/over-2KiB-connection-close", raw: "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\n"},
	{name: "pipe/long-header-then-short", raw: "GET /1 HTTP/1.1\r\nHost: x\r\nX-Long: " + strings.Repeat("l", 3000) + "\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\nX-Long: s\r\n\r\n"},
}

// exchange is what a client observes of one response. Accepted responses
// (the echo, with no body error) are compared whole; a rejection is
// compared by status. A handler that saw an error reading the body counts
// as a rejection that matches any 4xx: net/http hands a malformed body's
// error to the handler, which picks the status, while hotpath answers
// 400, 413 or 431 itself when the response was not sent yet.
type exchange struct {
	accepted bool
	status   string // "200", "400", …, or "none" when the server closed without a response
	detail   string // all of an accepted response; what else is known of a rejection
	head     string // an accepted response without its body
	echo     string // an accepted response's body
}

// bodyError is the status of an exchange whose handler saw a body error.
const bodyError = "4xx"

func (e exchange) String() string {
	if e.accepted {
		return "accept " + e.detail
	}
	return "reject " + e.status + " " + e.detail
}

// exchangeAll writes raw to addr, half-closes, and reads every response
// until the server closes the connection. Interim 1xx responses are
// skipped: hotpath does not send 100 Continue for a body that has already
// arrived (RFC 9110 §10.1.1 lets it), net/http always does; the semantics
// tests check 100-continue with a client that waits.
func exchangeAll(t *testing.T, addr string, c diffCase) []exchange {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		io.WriteString(nc, c.raw)
		nc.(*net.TCPConn).CloseWrite()
	}()
	all, err := io.ReadAll(nc)
	if err != nil && !isReset(err) {
		t.Fatalf("reading responses: %v", err)
	}
	br := bufio.NewReader(bytes.NewReader(all))
	var out []exchange
	for i := 0; ; {
		method := c.methods[0]
		if i < len(c.methods) {
			method = c.methods[i]
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			if len(out) == 0 {
				out = append(out, exchange{status: "none"})
			}
			if rest, _ := io.ReadAll(br); len(rest) > 0 {
				out = append(out, exchange{status: "unparsable", detail: fmt.Sprintf("%q", rest)})
			}
			return out
		}
		body, berr := io.ReadAll(resp.Body)
		if resp.StatusCode/100 == 1 {
			continue
		}
		i++
		out = append(out, classify(resp, body, berr))
		if resp.Close {
			return out
		}
	}
}

func isReset(err error) bool {
	return errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "connection reset")
}

func classify(resp *http.Response, body []byte, berr error) exchange {
	status := strconv.Itoa(resp.StatusCode)
	if resp.Header.Get("X-Echo") != "1" {
		return exchange{status: status, detail: fmt.Sprintf("close=%v", resp.Close)}
	}
	var e diffEcho
	if err := json.Unmarshal(body, &e); err == nil && e.BodyErr != "<nil>" {
		return exchange{status: bodyError, detail: "(handler saw " + e.BodyErr + ")"}
	}
	closed := fmt.Sprintf("close=%v ", resp.Close) // ReadResponse takes "Connection: close" out of the header
	return exchange{accepted: true, status: status, detail: closed + describe(resp, body, berr),
		head: closed + describe(resp, nil, berr), echo: string(body)}
}

// deliberateDifferences are the requests hotpath answers differently from
// net/http on purpose: stricter framing, smaller default limits, and the
// few documented leniencies (docs/conformance.md).
// chunkedNotFinal is why a coding list with chunked before another gets
// 400 rather than net/http's 501.
const chunkedNotFinal = "chunked not the final transfer coding: 400, as RFC 9112 §6.3 requires (h1spec checks it); net/http answers 501"

var deliberateDifferences = map[string]string{
	// Content-Length with Transfer-Encoding: the CL.TE / TE.CL shape.
	"vectors/reqTests/chunked-and-content-length": clTE,
	"vectors/smuggling/CL.TE":                     clTE,
	"pipe/valid-then-smuggled":                    clTE,
	// Transfer-Encoding on HTTP/1.0.
	"vectors/smuggling/TE-on-HTTP/1.0":        "Transfer-Encoding on HTTP/1.0: 400; net/http ignores the header and reads no body",
	"vectors/smuggling/TE-and-CL-on-HTTP/1.0": "Transfer-Encoding on HTTP/1.0: 400; net/http ignores it and reads by Content-Length",
	// obs-fold.
	"vectors/smuggling/TE-chunked-identity":        chunkedNotFinal,
	"vectors/smuggling/TE-chunked-gzip":            chunkedNotFinal,
	"vectors/smuggling/TE-twice":                   "chunked applied twice: 400 (RFC 9112 §7.1 forbids it; the length cannot be known); net/http answers 501",
	"vectors/smuggling/TE-obs-fold":                "obs-fold hiding the coding: 501 (empty Transfer-Encoding); net/http joins the lines and reads chunked",
	"vectors/syntax/obs-fold-space":                obsFold,
	"vectors/syntax/obs-fold-tab":                  obsFold,
	"vectors/smuggling/CL-19-digits-leading-zeros": "Content-Length of more than 18 digits: 400; net/http reads 5",
	// Chunked framing net/http reads leniently.
	"chunks/size/trailing-space":        "whitespace after a chunk size: 400; net/http trims it",
	"chunks/size/trailing-tab":          "whitespace after a chunk size: 400; net/http trims it",
	"chunks/ext/nul":                    "control byte in a chunk extension: 400; net/http does not look at extensions",
	"chunks/ext/del":                    "control byte in a chunk extension: 400; net/http does not look at extensions",
	"chunks/trailer/space-before-colon": "space before the colon of a trailer field: 400; net/http's trailer reader accepts it",
	// Host and CONNECT.
	"vectors/targets/connect-no-port":       "authority-form is host:port (RFC 9112 §3.2.3): 400; net/http accepts",
	"vectors/targets/connect-empty-port":    "authority-form needs a port: 400; net/http accepts",
	"vectors/targets/connect-empty-host":    "authority-form needs a host: 400; net/http accepts",
	"vectors/targets/connect-with-path":     "authority-form has no path: 400; net/http accepts",
	"vectors/targets/connect-userinfo":      userinfo,
	"vectors/targets/connect-absolute":      "CONNECT takes authority-form only: 400; net/http reads host \"http\"",
	"vectors/targets/absolute-userinfo":     userinfo,
	"vectors/targets/absolute-empty-host":   "an http URI with an empty host is invalid (RFC 9110 §4.2.1): 400; net/http accepts",
	"vectors/targets/absolute-other-scheme": "absolute-form with a scheme other than http(s): 400; net/http accepts",
	// Versions and expectations.
	"vectors/reqTests/h2-preface":           h2Preface,
	"vectors/validatesHost/pri-asterisk-h2": h2Preface,
	"vectors/syntax/version-1.2":            "HTTP/1.2: 505; net/http treats it as HTTP/1.x",
	// Leniencies of hotpath's own: empty lines before the request line.
	"vectors/lines/leading-CRLF":   leadingCRLF,
	"vectors/lines/leading-LF":     leadingCRLF,
	"vectors/lines/leading-8-CRLF": leadingCRLF,
	// A head cut short by EOF: no one is left to read an answer.
	"vectors/readRequestErrors/1-no-end": cutHead,
	"vectors/lines/cut-in-empty-line":    cutHead,
	"vectors/lines/cut-in-request-line":  cutHead,
	// Default limits, smaller than net/http's.
	"vectors/limits/request-line-8KiB+1": "request line over 8 KiB: 414; net/http allows a 1 MiB head",
	"vectors/limits/huge-request-line":   "request line over 8 KiB: 414; net/http allows a 1 MiB head",
	"vectors/limits/huge-header-line":    "head over 64 KiB: 431; net/http allows 1 MiB",
	"vectors/limits/head-over-64KiB":     "head over 64 KiB: 431; net/http allows 1 MiB",

	// Semantics (adapter_semantics_test.go).
	"semantics/expect-continue/refuse": "a handler that answers without reading a small body (<= 256 KiB) sent with Expect: 100-continue: " +
		"hotpath sends 100, reads the body and keeps the connection; net/http answers and closes (h1spec asks for 100 or a 4xx; a new connection costs more than 256 KiB)",
	"semantics/size/declared-short": "a body shorter than the Content-Length the handler set: both close the connection after it; " +
		"hotpath, which holds the head until the handler returns, also says Connection: close",
}

const (
	clTE        = "Content-Length with Transfer-Encoding: 400; net/http drops Content-Length and reads chunked"
	obsFold     = "obs-fold: 400; net/http joins the lines"
	userinfo    = "userinfo in the target: 400 (RFC 9110 §4.2.4); net/http accepts"
	h2Preface   = "the h2c prior-knowledge preface: 505, HTTP/2 is handed off before parsing; net/http passes it to the handler"
	leadingCRLF = "up to 8 empty lines before the request line are skipped (RFC 9112 §2.2); net/http answers 400 unless they follow a POST"
	cutHead     = "EOF in the middle of a head: hotpath closes without a response; net/http answers 400"
)

// knownAdapterBugs are the requests the adapter gets wrong today. Each
// entry is a bug to fix in the server (h1_adapter*.go, h2_responsewriter.go); remove it with the fix.
var knownAdapterBugs = map[string]string{}

// Modes: HTTP/1.1 beside net/http's own server (startBoth): a differential
// test that compares the two on the wire.
func TestAdapterDifferential(t *testing.T) {
	hp, nh := startBothQuiet(t, echoHandler)
	cases := diffCases()
	if len(cases) < 150 {
		t.Fatalf("only %d requests", len(cases))
	}
	seen := map[string]bool{}
	var agree, deliberate, bugs int
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			got, want := exchangeAll(t, hp, c), exchangeAll(t, nh, c)
			same := sameExchanges(got, want)
			reason, isDeliberate := deliberateDifferences[c.name]
			bug, isBug := knownAdapterBugs[c.name]
			switch {
			case same && (isDeliberate || isBug):
				t.Errorf("listed as different (%s%s) but hotpath and net/http now agree: remove the entry", reason, bug)
			case same:
				agree++
			case isDeliberate:
				deliberate++
				t.Logf("deliberate: %s\n%s", reason, explain(got, want))
			case isBug:
				bugs++
				t.Logf("known adapter bug: %s\n%s", bug, explain(got, want))
			default:
				t.Errorf("hotpath and net/http differ:\n%s\nraw: %q", explain(got, want), c.raw)
			}
		})
	}
	for name := range deliberateDifferences {
		if !seen[name] && !strings.HasPrefix(name, "semantics/") {
			t.Errorf("deliberateDifferences lists %q, which is not a case", name)
		}
	}
	for name := range knownAdapterBugs {
		if !seen[name] && !strings.HasPrefix(name, "semantics/") {
			t.Errorf("knownAdapterBugs lists %q, which is not a case", name)
		}
	}
	t.Logf("%d requests: %d agree, %d deliberate differences, %d known adapter bugs", len(cases), agree, deliberate, bugs)
}

// sameExchanges compares two response sequences: the accept/reject
// verdict and status of each, and the whole response when accepted.
func sameExchanges(a, b []exchange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].accepted != b[i].accepted || !sameStatus(a[i].status, b[i].status) {
			return false
		}
		if a[i].accepted && a[i].detail != b[i].detail {
			return false
		}
	}
	return true
}

// explain renders two differing response sequences, down to the echo
// fields that differ when both accepted.
func explain(hp, nh []exchange) string {
	var b strings.Builder
	for i := range max(len(hp), len(nh)) {
		var x, y exchange
		if i < len(hp) {
			x = hp[i]
		}
		if i < len(nh) {
			y = nh[i]
		}
		if x.accepted && y.accepted && x.status == y.status {
			fields := echoFieldDiff(x.echo, y.echo)
			if withoutLength(x.head) != withoutLength(y.head) || len(fields) == 0 {
				fmt.Fprintf(&b, "response %d head:\n  hotpath:  %s\n  net/http: %s\n", i, x.head, y.head)
			}
			for _, f := range fields {
				fmt.Fprintf(&b, "response %d %s\n", i, f)
			}
			continue
		}
		fmt.Fprintf(&b, "response %d:\n  hotpath:  %s\n  net/http: %s\n", i, x.short(), y.short())
	}
	return b.String()
}

func (e exchange) short() string {
	if e.accepted {
		return "accept " + e.status
	}
	return e.String()
}

// echoFieldDiff lists the echo fields that differ.
func echoFieldDiff(a, b string) []string {
	var ma, mb map[string]any
	json.Unmarshal([]byte(a), &ma)
	json.Unmarshal([]byte(b), &mb)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		if fmt.Sprint(ma[k]) != fmt.Sprint(mb[k]) {
			out = append(out, fmt.Sprintf("%s:\n  hotpath:  %v\n  net/http: %v", k, ma[k], mb[k]))
		}
	}
	sort.Strings(out)
	return out
}

func sameStatus(a, b string) bool {
	is4xx := func(s string) bool { return len(s) == 3 && s[0] == '4' }
	return a == b || a == bodyError && is4xx(b) || b == bodyError && is4xx(a)
}

// withoutLength drops the Content-Length of a described head: it follows
// from the echo, whose differences are shown field by field.
func withoutLength(head string) string {
	var keep []string
	for _, f := range strings.Fields(head) {
		if !strings.HasPrefix(f, "Content-Length=") && !strings.HasPrefix(f, "CL=") {
			keep = append(keep, f)
		}
	}
	return strings.Join(keep, " ")
}
