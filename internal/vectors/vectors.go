// Package vectors holds raw HTTP/1.1 request heads and chunked bodies with
// the verdict hotpath must reach on each: the conformance tables that the
// wire parser, the server and the fuzz corpora share.
//
// The inputs cover every raw request of net/http's own tables (under
// $GOROOT/src/net/http: readrequest_test.go, serve_test.go,
// request_test.go, internal/chunked_test.go) plus request-smuggling shapes,
// limits and target forms of our own. The table code is ours; only the
// bytes on the wire are shared with Go's tests.
//
// Where hotpath answers differently from a net/http server, the vector's
// Note says how net/http answers and why hotpath does not follow. Most are
// deliberate: hotpath is stricter where a lenient reading lets two parsers
// disagree about a message's framing (RFC 9112 §11.2), and its default
// limits are smaller.
package vectors

import (
	"fmt"
	"strings"
)

// Incomplete is the Status of a request whose head is cut short: the parser
// must ask for more input (wire.ErrNeedMore). A server that meets EOF there
// has no one to answer; net/http still writes a 400 if any byte came.
const Incomplete = -1

// Request is one raw request and the verdict on its head.
type Request struct {
	Name   string // unique, usable as a subtest name
	Source string // where the input comes from
	Raw    string // bytes on the wire; a body may follow the head
	// Status is 0 when the head must be accepted, Incomplete when it is cut
	// short, and otherwise the status hotpath must answer with (400, 413,
	// 414, 417, 431, 501 or 505).
	Status int
	// Note explains the vector, and says how net/http differs where it does.
	Note string
}

// Chunked is one raw chunked body (RFC 9112 §7.1), from the first
// chunk-size line through the empty line that ends the trailer section.
type Chunked struct {
	Name   string
	Source string
	Raw    string
	// Body is the decoded data: all of it for a valid body, what precedes
	// the cut for an Incomplete one, unchecked for an Err one.
	Body string
	// Err means the body is malformed: the decoder must fail with a
	// protocol error before or at the end of Raw.
	Err bool
	// Incomplete means Raw is a valid prefix of a body: the decoder asks for
	// more input, and a reader at EOF reports an unexpected EOF.
	Incomplete bool
	Note       string
}

// Sources, named after the test tables they cover.
const (
	srcReqTests     = "net/http readrequest_test.go reqTests"
	srcBadRequests  = "net/http readrequest_test.go badRequestTests"
	srcHeaders      = "net/http serve_test.go TestServerValidatesHeaders"
	srcHost         = "net/http serve_test.go TestServerValidatesHostHeader"
	srcMethod       = "net/http serve_test.go TestServerValidatesMethod"
	srcReadErrors   = "net/http request_test.go TestReadRequestErrors"
	hostAdded       = " (Host added)"
	srcSmuggling    = "smuggling"
	srcSyntax       = "hotpath syntax"
	srcLineEndings  = "hotpath line endings"
	srcLimits       = "hotpath limits"
	srcTargets      = "hotpath request targets"
	srcChunkedTests = "net/http internal/chunked_test.go "
	srcChunkSize    = "hotpath chunk sizes"
	srcChunkExt     = "hotpath chunk extensions"
	srcOverhead     = "hotpath chunk overhead"
	srcTrailers     = "hotpath trailers"
)

// Notes shared by several vectors.
const (
	noteNoHost = "HTTP/1.1 without Host: 400 (RFC 9112 §3.2), as a net/http server answers; " +
		"http.ReadRequest alone accepts it. The \"(Host added)\" twin checks the rest of the head."
	noteConnectNoHost = "CONNECT without Host: accepted, its target names the host; RFC 9112 §3.2 asks " +
		"clients for Host on every HTTP/1.1 request, and net/http exempts CONNECT (Go issue 18215), as hotpath does."
	noteCLTE = "Content-Length with Transfer-Encoding: hotpath rejects (RFC 9112 §6.3 allows it; a " +
		"front end and back end that resolve the pair differently desync). net/http drops " +
		"Content-Length, reads the body as chunked and answers 200."
	noteObsFold = "obs-fold: hotpath rejects (RFC 9112 §5.2 allows it); net/http joins the lines and answers 200."
	noteLimit   = "limit: net/http's defaults are larger (1 MiB head, no count or body cap) and it answers 200."
	noteHTTP10  = "Transfer-Encoding on HTTP/1.0: hotpath rejects (RFC 9112 §6.1: a 1.0 peer cannot " +
		"frame it, the message is faulty); net/http ignores the header, reads no body and answers 200."
	noteLeadingCRLF = "RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request " +
		"line; hotpath ignores up to 8. http.ReadRequest rejects them, and a net/http server skips them " +
		"only after a POST: it answers 400 here."
	noteUserinfo = "userinfo in an http(s) target: hotpath rejects (RFC 9110 §4.2.4 says to treat it as an error); net/http answers 200."
)

// withHost inserts a Host field after the request line of raw.
func withHost(raw string) string {
	line, rest, _ := strings.Cut(raw, "\r\n")
	return line + "\r\nHost: example.com\r\n" + rest
}

// fooHead is the request TestServerValidatesHeaders sends around one
// header block.
func fooHead(fields string) string { return "GET / HTTP/1.1\r\nHost: foo\r\n" + fields + "\r\n" }

// hostHead is the request TestServerValidatesHostHeader sends.
func hostHead(proto, host string) string {
	mt := "GET / "
	if !strings.HasPrefix(proto, "HTTP/") {
		mt = ""
	}
	return mt + proto + "\r\n" + host + "\r\n"
}

// get is a minimal request with extra header lines (each ending in CRLF)
// and an optional body.
func get(method, target, fields, body string) string {
	return method + " " + target + " HTTP/1.1\r\nHost: example.com\r\n" + fields + "\r\n" + body
}

// manyHeaders returns n fields "X-Nnn: v" (CRLF-terminated).
func manyHeaders(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "X-%d: v\r\n", i)
	}
	return b.String()
}

// Requests is the request-head table.
var Requests = []Request{
	// readrequest_test.go reqTests.
	{Name: "reqTests/absolute-form-with-body", Source: srcReqTests,
		Raw: "GET http://www.techcrunch.com/ HTTP/1.1\r\n" +
			"Host: www.techcrunch.com\r\n" +
			"User-Agent: Fake\r\n" +
			"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n" +
			"Accept-Language: en-us,en;q=0.5\r\n" +
			"Accept-Encoding: gzip,deflate\r\n" +
			"Accept-Charset: ISO-8859-1,utf-8;q=0.7,*;q=0.7\r\n" +
			"Keep-Alive: 300\r\n" +
			"Content-Length: 7\r\n" +
			"Proxy-Connection: keep-alive\r\n\r\n" +
			"abcdef\n???",
		Note: "a body of 7 bytes follows; the trailing ??? belongs to the next message"},
	{Name: "reqTests/plain-get", Source: srcReqTests, Raw: "GET / HTTP/1.1\r\nHost: foo.com\r\n\r\n"},
	{Name: "reqTests/double-slash-path", Source: srcReqTests,
		Raw:  "GET //user@host/is/actually/a/path/ HTTP/1.1\r\nHost: test\r\n\r\n",
		Note: "origin-form: //user@host is a path, not an authority"},
	{Name: "reqTests/relative-path", Source: srcReqTests,
		Raw: "GET ../../../../etc/passwd HTTP/1.1\r\nHost: test\r\n\r\n", Status: 400},
	{Name: "reqTests/empty-target", Source: srcReqTests,
		Raw: "GET  HTTP/1.1\r\nHost: test\r\n\r\n", Status: 400},
	{Name: "reqTests/chunked-with-trailer", Source: srcReqTests,
		Raw: "POST / HTTP/1.1\r\nHost: foo.com\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"3\r\nfoo\r\n3\r\nbar\r\n0\r\nTrailer-Key: Trailer-Value\r\n\r\n"},
	{Name: "reqTests/chunked-and-content-length", Source: srcReqTests,
		Raw: "POST / HTTP/1.1\r\nHost: foo.com\r\nTransfer-Encoding: chunked\r\nContent-Length: 9999\r\n\r\n" +
			"3\r\nfoo\r\n3\r\nbar\r\n0\r\n\r\n",
		Status: 400, Note: noteCLTE},
	{Name: "reqTests/chunked-and-bad-content-length", Source: srcReqTests,
		Raw: "POST / HTTP/1.1\r\nHost: foo.com\r\nTransfer-Encoding: chunked\r\nContent-Length: notdigits\r\n\r\n" +
			"3\r\nfoo\r\n3\r\nbar\r\n0\r\n\r\n",
		Status: 400},
	{Name: "reqTests/connect-domain", Source: srcReqTests,
		Raw: "CONNECT www.google.com:443 HTTP/1.1\r\n\r\n", Note: noteConnectNoHost},
	{Name: "reqTests/connect-domain+host", Source: srcReqTests + hostAdded,
		Raw: withHost("CONNECT www.google.com:443 HTTP/1.1\r\n\r\n")},
	{Name: "reqTests/connect-ip", Source: srcReqTests,
		Raw: "CONNECT 127.0.0.1:6060 HTTP/1.1\r\n\r\n", Note: noteConnectNoHost},
	{Name: "reqTests/connect-ip+host", Source: srcReqTests + hostAdded,
		Raw: withHost("CONNECT 127.0.0.1:6060 HTTP/1.1\r\n\r\n")},
	{Name: "reqTests/connect-rpc-path", Source: srcReqTests,
		Raw: "CONNECT /_goRPC_ HTTP/1.1\r\n\r\n", Note: noteConnectNoHost},
	{Name: "reqTests/connect-rpc-path+host", Source: srcReqTests + hostAdded,
		Raw: withHost("CONNECT /_goRPC_ HTTP/1.1\r\n\r\n"), Note: "CONNECT with an origin-form target, as net/rpc sends"},
	{Name: "reqTests/notify-asterisk", Source: srcReqTests,
		Raw: "NOTIFY * HTTP/1.1\r\nServer: foo\r\n\r\n", Status: 400, Note: noteNoHost},
	{Name: "reqTests/notify-asterisk+host", Source: srcReqTests + hostAdded,
		Raw: withHost("NOTIFY * HTTP/1.1\r\nServer: foo\r\n\r\n")},
	{Name: "reqTests/options-asterisk", Source: srcReqTests,
		Raw: "OPTIONS * HTTP/1.1\r\nServer: foo\r\n\r\n", Status: 400, Note: noteNoHost},
	{Name: "reqTests/options-asterisk+host", Source: srcReqTests + hostAdded,
		Raw: withHost("OPTIONS * HTTP/1.1\r\nServer: foo\r\n\r\n")},
	{Name: "reqTests/connection-close", Source: srcReqTests,
		Raw: "GET / HTTP/1.1\r\nHost: issue8261.com\r\nConnection: close\r\n\r\n"},
	{Name: "reqTests/head-content-length-0", Source: srcReqTests,
		Raw: "HEAD / HTTP/1.1\r\nHost: issue8261.com\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"},
	{Name: "reqTests/h2-preface", Source: srcReqTests,
		Raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Status: 505,
		Note: "the HTTP/2 prior-knowledge preface: hotpath's HTTP/1 parser answers 505 and leaves HTTP/2 " +
			"to the server's hand-off, which must look for the preface before parsing; a net/http " +
			"server passes it to the handler (200) so that it can hijack."},

	// readrequest_test.go badRequestTests. reqBytes() there turns LF into
	// CRLF and appends an empty line.
	{Name: "badRequestTests/bad_connect_host", Source: srcBadRequests,
		Raw:    "CONNECT []%20%48%54%54%50%2f%31%2e%31%0a%4d%79%48%65%61%64%65%72%3a%20%31%32%33%0a%0a HTTP/1.0\r\n\r\n",
		Status: 400, Note: "an authority-form target that is not host:port"},
	{Name: "badRequestTests/smuggle_two_contentlen", Source: srcBadRequests,
		Raw: "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc\r\n\r\n", Status: 400},
	{Name: "badRequestTests/smuggle_two_contentlen+host", Source: srcBadRequests + hostAdded,
		Raw: withHost("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc\r\n\r\n"), Status: 400},
	{Name: "badRequestTests/smuggle_two_content_len_head", Source: srcBadRequests,
		Raw: "HEAD / HTTP/1.1\r\nHost: foo\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n1234\r\n\r\n", Status: 400},
	{Name: "badRequestTests/leading_space_in_header", Source: srcBadRequests,
		Raw: "GET / HTTP/1.1\r\n Host: foo\r\n\r\n", Status: 400},
	{Name: "badRequestTests/leading_tab_in_header", Source: srcBadRequests,
		Raw: "GET / HTTP/1.1\r\n\tHost: foo\r\n\r\n", Status: 400},

	// serve_test.go TestServerValidatesHeaders.
	{Name: "validatesHeaders/none", Source: srcHeaders, Raw: fooHead("")},
	{Name: "validatesHeaders/foo", Source: srcHeaders, Raw: fooHead("Foo: bar\r\n")},
	{Name: "validatesHeaders/x-foo", Source: srcHeaders, Raw: fooHead("X-Foo: bar\r\n")},
	{Name: "validatesHeaders/space-in-value", Source: srcHeaders, Raw: fooHead("Foo: a space\r\n")},
	{Name: "validatesHeaders/space-in-name", Source: srcHeaders, Raw: fooHead("A space: foo\r\n"), Status: 400},
	{Name: "validatesHeaders/xff-in-name", Source: srcHeaders, Raw: fooHead("foo\xffbar: foo\r\n"), Status: 400},
	{Name: "validatesHeaders/nul-in-name", Source: srcHeaders, Raw: fooHead("foo\x00bar: foo\r\n"), Status: 400},
	{Name: "validatesHeaders/2MiB-value", Source: srcHeaders,
		Raw: fooHead("Foo: " + strings.Repeat("x", 1<<21) + "\r\n"), Status: 431},
	{Name: "validatesHeaders/space-before-colon", Source: srcHeaders, Raw: fooHead("Foo : bar\r\n"), Status: 400},
	{Name: "validatesHeaders/tab-before-colon", Source: srcHeaders, Raw: fooHead("Foo\t: bar\r\n"), Status: 400},
	{Name: "validatesHeaders/empty-name", Source: srcHeaders, Raw: fooHead(": empty key\r\n"), Status: 400},
	{Name: "validatesHeaders/content-length-notdigits", Source: srcHeaders,
		Raw: fooHead("Content-Length: notdigits\r\n"), Status: 400},
	{Name: "validatesHeaders/content-length-notdigits-chunked", Source: srcHeaders,
		Raw: fooHead("Content-Length: notdigits\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), Status: 400},
	{Name: "validatesHeaders/lws-space", Source: srcHeaders, Raw: fooHead("foo: foo foo\r\n")},
	{Name: "validatesHeaders/lws-tab", Source: srcHeaders, Raw: fooHead("foo: foo\tfoo\r\n")},
	{Name: "validatesHeaders/nul-in-value", Source: srcHeaders, Raw: fooHead("foo: foo\x00foo\r\n"), Status: 400},
	{Name: "validatesHeaders/del-in-value", Source: srcHeaders, Raw: fooHead("foo: foo\x7ffoo\r\n"), Status: 400},
	{Name: "validatesHeaders/xff-in-value", Source: srcHeaders, Raw: fooHead("foo: foo\xfffoo\r\n"),
		Note: "obs-text (bytes ≥ 0x80) is allowed in values"},

	// serve_test.go TestServerValidatesHostHeader.
	{Name: "validatesHost/http0.9", Source: srcHost, Raw: hostHead("HTTP/0.9", ""), Status: 505},
	{Name: "validatesHost/1.1-missing", Source: srcHost, Raw: hostHead("HTTP/1.1", ""), Status: 400},
	{Name: "validatesHost/empty", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: \r\n"),
		Note: "an empty Host is allowed (RFC 9112 §3.2, for targets without an authority)"},
	{Name: "validatesHost/ipv4", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: 1.2.3.4\r\n")},
	{Name: "validatesHost/name", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: foo.com\r\n")},
	{Name: "validatesHost/underscore", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: foo-bar_baz.com\r\n")},
	{Name: "validatesHost/port", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: foo.com:80\r\n")},
	{Name: "validatesHost/bare-ipv6", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: ::1\r\n")},
	{Name: "validatesHost/bracketed-ipv6", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: [::1]\r\n")},
	{Name: "validatesHost/ipv6-port", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: [::1]:80\r\n")},
	{Name: "validatesHost/ipv6-zone", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: [::1%25en0]:80\r\n")},
	{Name: "validatesHost/ipv4-again", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: 1.2.3.4\r\n"),
		Note: "net/http's table lists this input twice"},
	{Name: "validatesHost/ctl", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: \x06\r\n"), Status: 400},
	{Name: "validatesHost/xff", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: \xff\r\n"), Status: 400},
	{Name: "validatesHost/open-brace", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: {\r\n"), Status: 400},
	{Name: "validatesHost/close-brace", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: }\r\n"), Status: 400},
	{Name: "validatesHost/two", Source: srcHost, Raw: hostHead("HTTP/1.1", "Host: first\r\nHost: second\r\n"), Status: 400},
	{Name: "validatesHost/1.0-missing", Source: srcHost, Raw: hostHead("HTTP/1.0", ""),
		Note: "HTTP/1.0 may omit Host"},
	{Name: "validatesHost/1.0-two", Source: srcHost, Raw: hostHead("HTTP/1.0", "Host: first\r\nHost: second\r\n"), Status: 400},
	{Name: "validatesHost/1.0-xff", Source: srcHost, Raw: hostHead("HTTP/1.0", "Host: \xff\r\n"), Status: 400},
	{Name: "validatesHost/pri-asterisk-h2", Source: srcHost, Raw: hostHead("PRI * HTTP/2.0", ""), Status: 505,
		Note: "the HTTP/2 preface without its SM line; see reqTests/h2-preface: net/http answers 200."},
	{Name: "validatesHost/connect-no-host", Source: srcHost, Raw: hostHead("CONNECT golang.org:443 HTTP/1.1", ""),
		Note: noteConnectNoHost},
	{Name: "validatesHost/pri-path-h2", Source: srcHost, Raw: hostHead("PRI / HTTP/2.0", ""), Status: 505},
	{Name: "validatesHost/get-h2", Source: srcHost, Raw: hostHead("HTTP/2.0", ""), Status: 505},
	{Name: "validatesHost/get-h3", Source: srcHost, Raw: hostHead("HTTP/3.0", ""), Status: 505},

	// serve_test.go TestServerValidatesMethod.
	{Name: "validatesMethod/GET", Source: srcMethod, Raw: "GET / HTTP/1.1\r\nHost: foo.example\r\n\r\n"},
	{Name: "validatesMethod/GE(T", Source: srcMethod, Raw: "GE(T / HTTP/1.1\r\nHost: foo.example\r\n\r\n", Status: 400},

	// request_test.go TestReadRequestErrors.
	{Name: "readRequestErrors/0", Source: srcReadErrors,
		Raw: "GET / HTTP/1.1\r\nheader:foo\r\n\r\n", Status: 400, Note: noteNoHost},
	{Name: "readRequestErrors/0+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("GET / HTTP/1.1\r\nheader:foo\r\n\r\n")},
	{Name: "readRequestErrors/1-no-end", Source: srcReadErrors,
		Raw: "GET / HTTP/1.1\r\nheader:foo\r\n", Status: Incomplete},
	{Name: "readRequestErrors/2-empty", Source: srcReadErrors, Raw: "", Status: Incomplete},
	{Name: "readRequestErrors/3", Source: srcReadErrors,
		Raw: "HEAD / HTTP/1.1\r\n\r\n", Status: 400, Note: noteNoHost},
	{Name: "readRequestErrors/3+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("HEAD / HTTP/1.1\r\n\r\n")},
	{Name: "readRequestErrors/4", Source: srcReadErrors,
		Raw: "POST / HTTP/1.1\r\nContent-Length: 10\r\nContent-Length: 0\r\n\r\nGopher hey\r\n", Status: 400},
	{Name: "readRequestErrors/4+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("POST / HTTP/1.1\r\nContent-Length: 10\r\nContent-Length: 0\r\n\r\nGopher hey\r\n"), Status: 400},
	{Name: "readRequestErrors/5", Source: srcReadErrors,
		Raw: "POST / HTTP/1.1\r\nContent-Length: 10\r\nContent-Length: 6\r\n\r\nGopher\r\n", Status: 400},
	{Name: "readRequestErrors/5+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("POST / HTTP/1.1\r\nContent-Length: 10\r\nContent-Length: 6\r\n\r\nGopher\r\n"), Status: 400},
	{Name: "readRequestErrors/6", Source: srcReadErrors,
		Raw:    "PUT / HTTP/1.1\r\nContent-Length: 6 \r\nContent-Length: 6\r\nContent-Length:6\r\n\r\nGopher\r\n",
		Status: 400, Note: noteNoHost},
	{Name: "readRequestErrors/6+host", Source: srcReadErrors + hostAdded,
		Raw:  withHost("PUT / HTTP/1.1\r\nContent-Length: 6 \r\nContent-Length: 6\r\nContent-Length:6\r\n\r\nGopher\r\n"),
		Note: "repeated Content-Length with the same value (after OWS) is one Content-Length"},
	{Name: "readRequestErrors/7", Source: srcReadErrors,
		Raw: "PUT / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 6 \r\n\r\n", Status: 400},
	{Name: "readRequestErrors/7+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("PUT / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 6 \r\n\r\n"), Status: 400},
	{Name: "readRequestErrors/8", Source: srcReadErrors,
		Raw: "POST / HTTP/1.1\r\nContent-Length:\r\nContent-Length: 3\r\n\r\n", Status: 400},
	{Name: "readRequestErrors/8+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("POST / HTTP/1.1\r\nContent-Length:\r\nContent-Length: 3\r\n\r\n"), Status: 400},
	{Name: "readRequestErrors/9", Source: srcReadErrors,
		Raw: "HEAD / HTTP/1.1\r\nContent-Length:0\r\nContent-Length: 0\r\n\r\n", Status: 400, Note: noteNoHost},
	{Name: "readRequestErrors/9+host", Source: srcReadErrors + hostAdded,
		Raw: withHost("HEAD / HTTP/1.1\r\nContent-Length:0\r\nContent-Length: 0\r\n\r\n")},
	{Name: "readRequestErrors/10", Source: srcReadErrors,
		Raw: "HEAD / HTTP/1.1\r\nHost: foo\r\nHost: bar\r\n\r\n\r\n\r\n", Status: 400},

	// Request smuggling: framing that two parsers can read two ways.
	{Name: "smuggling/CL.TE", Source: srcSmuggling,
		Raw:    "POST / HTTP/1.1\r\nHost: example.com\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG",
		Status: 400, Note: noteCLTE},
	{Name: "smuggling/TE.CL", Source: srcSmuggling,
		Raw:    "POST / HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\nGPOST / HTTP/1.1\r\n\r\n0\r\n\r\n",
		Status: 400, Note: noteCLTE},
	{Name: "smuggling/CL-same-twice", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 5\r\nContent-Length: 5\r\n", "hello")},
	{Name: "smuggling/CL-different", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"), Status: 400},
	{Name: "smuggling/CL-same-number-different-text", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 5\r\nContent-Length: 05\r\n", "hello"), Status: 400,
		Note: "net/http compares repeated values as text, so 5 and 05 conflict"},
	{Name: "smuggling/CL-list", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 5, 5\r\n", "hello"), Status: 400,
		Note: "RFC 9110 §8.6 lets a recipient fold a list of equal values; net/http and hotpath reject"},
	{Name: "smuggling/CL-plus", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: +5\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-minus", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: -5\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-hex", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: 0x5\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-space-inside", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: 1 0\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-underscore", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: 1_0\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-empty", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length:\r\n", ""), Status: 400},
	{Name: "smuggling/CL-blank", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length:  \t \r\n", ""), Status: 400},
	{Name: "smuggling/CL-trailing-ows", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: 5 \t\r\n", "hello"),
		Note: "OWS around a value is not part of it"},
	{Name: "smuggling/CL-leading-zeros", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: 005\r\n", "hello")},
	{Name: "smuggling/CL-unicode-digit", Source: srcSmuggling, Raw: get("POST", "/", "Content-Length: \u0665\r\n", "hello"), Status: 400},
	{Name: "smuggling/CL-overflow", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 18446744073709551616\r\n", ""), Status: 400},
	{Name: "smuggling/CL-int63-max", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 9223372036854775807\r\n", ""), Status: 400,
		Note: "hotpath refuses Content-Length values of more than 18 digits as malformed (400); " +
			"net/http accepts up to 2^63-1 and answers 200"},
	{Name: "smuggling/CL-19-digits-leading-zeros", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length: 0000000000000000005\r\n", "hello"), Status: 400,
		Note: "more than 18 digits, even with leading zeros: 400; net/http reads 5 and answers 200"},
	{Name: "smuggling/CL-space-before-colon", Source: srcSmuggling,
		Raw: get("POST", "/", "Content-Length : 5\r\n", "hello"), Status: 400},
	{Name: "smuggling/TE-space-before-colon", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding : chunked\r\n", "0\r\n\r\n"), Status: 400},
	{Name: "smuggling/TE-leading-comma", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: ,chunked\r\n", "0\r\n\r\n"), Status: 501},
	{Name: "smuggling/TE-chunked-identity", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: chunked, identity\r\n", "0\r\n\r\n"), Status: 400,
		Note: "chunked not the final coding: RFC 9112 §6.3 asks for 400"},
	{Name: "smuggling/TE-chunked-gzip", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: chunked, gzip\r\n", "0\r\n\r\n"), Status: 400,
		Note: "chunked not the final coding: RFC 9112 §6.3 asks for 400"},
	{Name: "smuggling/TE-gzip-chunked", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: gzip, chunked\r\n", "0\r\n\r\n"), Status: 501},
	{Name: "smuggling/TE-identity", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: identity\r\n", ""), Status: 501},
	{Name: "smuggling/TE-twice", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), Status: 400,
		Note: "chunked applied twice: RFC 9112 §7.1 forbids it"},
	{Name: "smuggling/TE-empty", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding:\r\n", ""), Status: 501},
	{Name: "smuggling/TE-xchunked", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: xchunked\r\n", "0\r\n\r\n"), Status: 501},
	{Name: "smuggling/TE-quoted", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: \"chunked\"\r\n", "0\r\n\r\n"), Status: 501},
	{Name: "smuggling/TE-upper-case", Source: srcSmuggling,
		Raw:  get("POST", "/", "Transfer-Encoding: CHUNKED\r\n", "0\r\n\r\n"),
		Note: "transfer-coding names are case-insensitive (RFC 9112 §7)"},
	{Name: "smuggling/TE-ows", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding:\tchunked \r\n", "0\r\n\r\n")},
	{Name: "smuggling/TE-underscore-name", Source: srcSmuggling,
		Raw:  get("POST", "/", "Transfer_Encoding: chunked\r\n", ""),
		Note: "a different field, not Transfer-Encoding: no body"},
	{Name: "smuggling/TE-on-HTTP/1.0", Source: srcSmuggling,
		Raw: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Status: 400, Note: noteHTTP10},
	{Name: "smuggling/TE-and-CL-on-HTTP/1.0", Source: srcSmuggling,
		Raw: "POST / HTTP/1.0\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello", Status: 400,
		Note: noteHTTP10 + " (net/http reads the 5 bytes of Content-Length.)"},
	{Name: "smuggling/TE-obs-fold", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding:\r\n chunked\r\n", "0\r\n\r\n"), Status: 501,
		Note: "obs-fold hiding the coding: hotpath sees an empty Transfer-Encoding first (501); " +
			"net/http joins the lines, reads the body as chunked and answers 200."},
	{Name: "smuggling/trailer-announces-CL", Source: srcSmuggling,
		Raw: get("POST", "/", "Transfer-Encoding: chunked\r\nTrailer: Content-Length\r\n", "0\r\nContent-Length: 5\r\n\r\n"), Status: 400,
		Note: "framing fields may not be trailers (RFC 9110 §6.5.1); net/http rejects the Trailer header too"},
	{Name: "smuggling/trailer-announces-TE", Source: srcSmuggling,
		Raw:    get("POST", "/", "Transfer-Encoding: chunked\r\nTrailer: x-a, transfer-encoding\r\n", "0\r\n\r\n"),
		Status: 400},
	{Name: "smuggling/trailer-announces-CL-not-chunked", Source: srcSmuggling,
		Raw:  get("POST", "/", "Trailer: Content-Length\r\nContent-Length: 5\r\n", "hello"),
		Note: "a Trailer header on a body without trailers is meaningless but harmless; net/http keeps it too"},

	// Header syntax.
	{Name: "syntax/obs-fold-space", Source: srcSyntax,
		Raw: get("GET", "/", "Foo: bar\r\n baz\r\n", ""), Status: 400, Note: noteObsFold},
	{Name: "syntax/obs-fold-tab", Source: srcSyntax,
		Raw: get("GET", "/", "Foo: bar\r\n\tbaz\r\n", ""), Status: 400, Note: noteObsFold},
	{Name: "syntax/whitespace-line-after-request-line", Source: srcSyntax,
		Raw: "GET / HTTP/1.1\r\n \r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/host-space-before-colon", Source: srcSyntax,
		Raw: "GET / HTTP/1.1\r\nHost : example.com\r\n\r\n", Status: 400},
	{Name: "syntax/no-colon", Source: srcSyntax, Raw: get("GET", "/", "Foo\r\n", ""), Status: 400},
	{Name: "syntax/colon-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: a:b::c\r\n", "")},
	{Name: "syntax/empty-value", Source: srcSyntax, Raw: get("GET", "/", "Foo:\r\nBar: \t\r\n", "")},
	{Name: "syntax/repeated-field", Source: srcSyntax, Raw: get("GET", "/", "Accept: a\r\naccept: b\r\n", "")},
	{Name: "syntax/token-punctuation-name", Source: srcSyntax, Raw: get("GET", "/", "!#$%&'*+-.^_`|~09aZ: v\r\n", "")},
	{Name: "syntax/separator-in-name", Source: srcSyntax, Raw: get("GET", "/", "Foo/bar: v\r\n", ""), Status: 400},
	{Name: "syntax/nul-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: a\x00b\r\n", ""), Status: 400},
	{Name: "syntax/del-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: a\x7fb\r\n", ""), Status: 400},
	{Name: "syntax/ctl-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: a\x01b\r\n", ""), Status: 400},
	{Name: "syntax/xff-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: \xff\xfe\r\n", ""),
		Note: "obs-text is allowed in values"},
	{Name: "syntax/utf8-in-value", Source: srcSyntax, Raw: get("GET", "/", "Foo: h\xc3\xa9llo\r\n", "")},
	{Name: "syntax/method-extension", Source: srcSyntax, Raw: "PROPFIND /x HTTP/1.1\r\nHost: example.com\r\n\r\n"},
	{Name: "syntax/method-lower-case", Source: srcSyntax, Raw: "get / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		Note: "methods are case-sensitive tokens; \"get\" is a valid, unknown method"},
	{Name: "syntax/method-nul", Source: srcSyntax, Raw: "G\x00T / HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/leading-space-request-line", Source: srcSyntax, Raw: " GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/tab-separators", Source: srcSyntax, Raw: "GET\t/\tHTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/double-space", Source: srcSyntax, Raw: "GET /  HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/trailing-space", Source: srcSyntax, Raw: "GET / HTTP/1.1 \r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/no-version", Source: srcSyntax, Raw: "GET /\r\nHost: example.com\r\n\r\n", Status: 400,
		Note: "an HTTP/0.9 request line"},
	{Name: "syntax/lower-case-version", Source: srcSyntax, Raw: "GET / http/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/version-two-digits", Source: srcSyntax, Raw: "GET / HTTP/1.10\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "syntax/version-1.2", Source: srcSyntax, Raw: "GET / HTTP/1.2\r\nHost: example.com\r\n\r\n", Status: 505,
		Note: "hotpath speaks 1.0 and 1.1 only (505); net/http treats 1.2 as 1.x and answers 200 " +
			"(RFC 9110 §2.5 says SHOULD process as the highest 1.x)."},
	{Name: "syntax/version-9.9", Source: srcSyntax, Raw: "GET / HTTP/9.9\r\nHost: example.com\r\n\r\n", Status: 505},
	{Name: "syntax/http1.0-keep-alive", Source: srcSyntax, Raw: "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"},
	{Name: "syntax/connection-upgrade", Source: srcSyntax,
		Raw: get("GET", "/chat", "Connection: Upgrade\r\nUpgrade: websocket\r\n", "")},
	{Name: "syntax/expect-100", Source: srcSyntax,
		Raw: get("PUT", "/", "Content-Length: 5\r\nExpect: 100-continue\r\n", "hello")},
	{Name: "syntax/expect-100-mixed-case", Source: srcSyntax,
		Raw: get("PUT", "/", "Content-Length: 5\r\nExpect: 100-Continue\r\n", "hello")},
	{Name: "syntax/expect-other", Source: srcSyntax,
		Raw: get("PUT", "/", "Content-Length: 5\r\nExpect: something\r\n", "hello"), Status: 417},
	{Name: "syntax/expect-empty", Source: srcSyntax,
		Raw:  get("GET", "/", "Expect:\r\n", ""),
		Note: "an empty Expect expects nothing: ignored, as net/http does; any other value but 100-continue gets 417"},
	{Name: "syntax/pragma-no-cache", Source: srcSyntax, Raw: get("GET", "/", "Pragma: no-cache\r\n", ""),
		Note: "net/http adds Cache-Control: no-cache to the parsed header; the wire bytes have none"},

	// Line endings.
	{Name: "lines/bare-LF", Source: srcLineEndings, Raw: "GET / HTTP/1.1\nHost: example.com\nFoo: bar\n\n",
		Note: "RFC 9112 §2.2 lets a recipient accept a lone LF as a line terminator; net/http and nginx do"},
	{Name: "lines/mixed", Source: srcLineEndings, Raw: "GET / HTTP/1.1\r\nHost: example.com\nFoo: bar\r\n\n"},
	{Name: "lines/bare-CR-terminator", Source: srcLineEndings, Raw: "GET / HTTP/1.1\rHost: example.com\r\n\r\n", Status: 400},
	{Name: "lines/bare-CR-header-terminator", Source: srcLineEndings,
		Raw: "GET / HTTP/1.1\r\nHost: example.com\rFoo: bar\r\n\r\n", Status: 400},
	{Name: "lines/bare-CR-in-value", Source: srcLineEndings, Raw: get("GET", "/", "Foo: a\rb\r\n", ""), Status: 400},
	{Name: "lines/CR-CR-LF", Source: srcLineEndings, Raw: get("GET", "/", "Foo: bar\r\r\n", ""), Status: 400},
	{Name: "lines/bare-CR-empty-line", Source: srcLineEndings, Raw: "GET / HTTP/1.1\r\nHost: example.com\r\n\r\r\n", Status: 400},
	{Name: "lines/bare-CR-in-target", Source: srcLineEndings, Raw: "GET /a\rb HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "lines/leading-CRLF", Source: srcLineEndings, Raw: "\r\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\n", Note: noteLeadingCRLF},
	{Name: "lines/leading-LF", Source: srcLineEndings, Raw: "\n\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\n", Note: noteLeadingCRLF},
	{Name: "lines/leading-8-CRLF", Source: srcLineEndings, Raw: strings.Repeat("\r\n", 8) + "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		Note: noteLeadingCRLF},
	{Name: "lines/leading-9-CRLF", Source: srcLineEndings, Raw: strings.Repeat("\r\n", 9) + "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		Status: 400, Note: "more than 8 empty lines before a request line is not a client's slip"},
	{Name: "lines/leading-bare-CR", Source: srcLineEndings, Raw: "\rGET / HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 400},
	{Name: "lines/cut-in-empty-line", Source: srcLineEndings, Raw: "GET / HTTP/1.1\r\nHost: example.com\r\n\r", Status: Incomplete},
	{Name: "lines/cut-in-request-line", Source: srcLineEndings, Raw: "GET / HTTP/1.1", Status: Incomplete},

	// Limits (wire.DefaultLimits: 8 KiB request line, 16 KiB head, 100
	// fields, 4 MiB body).
	{Name: "limits/request-line-8KiB", Source: srcLimits,
		Raw:  "GET /" + strings.Repeat("a", 8<<10-len("GET / HTTP/1.1")) + " HTTP/1.1\r\nHost: example.com\r\n\r\n",
		Note: "a request line of exactly 8 KiB"},
	{Name: "limits/request-line-8KiB+1", Source: srcLimits,
		Raw:    "GET /" + strings.Repeat("a", 8<<10-len("GET / HTTP/1.1")+1) + " HTTP/1.1\r\nHost: example.com\r\n\r\n",
		Status: 414, Note: noteLimit},
	{Name: "limits/huge-request-line", Source: srcLimits,
		Raw: "GET /" + strings.Repeat("a", 100<<10) + " HTTP/1.1\r\nHost: example.com\r\n\r\n", Status: 414, Note: noteLimit},
	{Name: "limits/huge-header-line", Source: srcLimits,
		Raw: get("GET", "/", "X-Big: "+strings.Repeat("b", 65<<10)+"\r\n", ""), Status: 431, Note: noteLimit},
	{Name: "limits/head-over-64KiB", Source: srcLimits,
		Raw: get("GET", "/", strings.Repeat("X-Pad: "+strings.Repeat("p", 400)+"\r\n", 170), ""), Status: 431, Note: noteLimit},
	{Name: "limits/head-20KiB-in-40-fields", Source: srcLimits,
		Raw:  get("GET", "/", strings.Repeat("Cookie: "+strings.Repeat("c", 500)+"\r\n", 40), ""),
		Note: "large cookie sets: under the limit"},
	{Name: "limits/500-fields", Source: srcLimits, Raw: get("GET", "/", manyHeaders(499), ""),
		Note: "Host and 499 more: exactly the limit"},
	{Name: "limits/501-fields", Source: srcLimits, Raw: get("GET", "/", manyHeaders(500), ""), Status: 431, Note: noteLimit},
	{Name: "limits/1000-fields", Source: srcLimits, Raw: get("GET", "/", manyHeaders(1000), ""), Status: 431, Note: noteLimit},
	{Name: "limits/body-4MiB", Source: srcLimits, Raw: get("POST", "/", "Content-Length: 4194304\r\n", ""),
		Note: "declared length at the limit; the body itself is not in the vector"},
	{Name: "limits/body-4MiB+1", Source: srcLimits, Raw: get("POST", "/", "Content-Length: 4194305\r\n", ""),
		Status: 413, Note: noteLimit},
	{Name: "limits/body-1TB", Source: srcLimits, Raw: get("POST", "/", "Content-Length: 1000000000000\r\n", ""),
		Status: 413, Note: noteLimit},

	// Request-target forms (RFC 9112 §3.2).
	{Name: "targets/origin-query", Source: srcTargets, Raw: get("GET", "/p/a%20b?q=1&r=%zz;s", "", ""),
		Note: "the query is not checked for escapes, as net/url does not check it"},
	{Name: "targets/origin-percent-in-query", Source: srcTargets, Raw: get("GET", "/search?q=100%", "", "")},
	{Name: "targets/origin-bad-escape", Source: srcTargets, Raw: get("GET", "/a%zz", "", ""), Status: 400},
	{Name: "targets/origin-short-escape", Source: srcTargets, Raw: get("GET", "/a%2", "", ""), Status: 400},
	{Name: "targets/origin-utf8", Source: srcTargets, Raw: get("GET", "/caf\xc3\xa9", "", ""),
		Note: "raw bytes ≥ 0x80 in a target are let through, as net/http lets them through"},
	{Name: "targets/origin-fragment", Source: srcTargets, Raw: get("GET", "/a#frag", "", ""),
		Note: "a fragment is not sent by clients; net/url keeps it in the path and so does hotpath"},
	{Name: "targets/nul", Source: srcTargets, Raw: get("GET", "/a\x00b", "", ""), Status: 400},
	{Name: "targets/del", Source: srcTargets, Raw: get("GET", "/a\x7fb", "", ""), Status: 400},
	{Name: "targets/relative", Source: srcTargets, Raw: get("GET", "a/b", "", ""), Status: 400},
	{Name: "targets/absolute", Source: srcTargets, Raw: get("GET", "http://example.com/p?q=1", "", "")},
	{Name: "targets/absolute-https-port", Source: srcTargets, Raw: get("GET", "https://example.com:8443/", "", "")},
	{Name: "targets/absolute-upper-case-scheme", Source: srcTargets, Raw: get("GET", "HTTP://EXAMPLE.COM/", "", "")},
	{Name: "targets/absolute-no-path", Source: srcTargets, Raw: get("GET", "http://example.com", "", "")},
	{Name: "targets/absolute-query-no-path", Source: srcTargets, Raw: get("GET", "http://example.com?q", "", "")},
	{Name: "targets/absolute-ipv6", Source: srcTargets, Raw: get("GET", "http://[::1]:8080/x", "", "")},
	{Name: "targets/absolute-host-differs", Source: srcTargets,
		Raw:  "GET http://a.example/ HTTP/1.1\r\nHost: b.example\r\n\r\n",
		Note: "the target's authority wins (RFC 9112 §3.2.2); wire reports the Host field as sent, net/http sets Request.Host to a.example"},
	{Name: "targets/absolute-bad-escape", Source: srcTargets, Raw: get("GET", "http://example.com/%zz", "", ""), Status: 400},
	{Name: "targets/absolute-bad-host-byte", Source: srcTargets, Raw: get("GET", "http://ex{ample.com/", "", ""), Status: 400},
	{Name: "targets/absolute-two-colons", Source: srcTargets, Raw: get("GET", "http://a:1:2/", "", ""), Status: 400,
		Note: "one colon in an authority; net/http accepts \"a:1\" as a host unless GODEBUG urlstrictcolons=1 " +
			"(the default for modules at go 1.26 and later)"},
	{Name: "targets/absolute-bad-port", Source: srcTargets, Raw: get("GET", "http://a:80x/", "", ""), Status: 400},
	{Name: "targets/absolute-escaped-host", Source: srcTargets, Raw: get("GET", "http://a%41/", "", ""), Status: 400},
	{Name: "targets/absolute-bad-ipv6", Source: srcTargets, Raw: get("GET", "http://[1.2.3.4]/", "", ""), Status: 400},
	{Name: "targets/absolute-userinfo", Source: srcTargets, Raw: get("GET", "http://user:pw@example.com/", "", ""),
		Status: 400, Note: noteUserinfo},
	{Name: "targets/absolute-empty-host", Source: srcTargets, Raw: get("GET", "http:///p", "", ""), Status: 400,
		Note: "an http URI with an empty host is invalid (RFC 9110 §4.2.1); net/http answers 200"},
	{Name: "targets/absolute-other-scheme", Source: srcTargets, Raw: get("GET", "ftp://example.com/", "", ""), Status: 400,
		Note: "hotpath accepts http and https absolute-form only; net/http accepts any scheme and answers 200"},
	{Name: "targets/asterisk-options", Source: srcTargets, Raw: get("OPTIONS", "*", "", "")},
	{Name: "targets/asterisk-get", Source: srcTargets, Raw: get("GET", "*", "", ""),
		Note: "RFC 9112 §3.2.4 means * for OPTIONS; net/http accepts it with any method, and so does hotpath"},
	{Name: "targets/asterisk-suffix", Source: srcTargets, Raw: get("OPTIONS", "*x", "", ""), Status: 400},
	{Name: "targets/connect", Source: srcTargets, Raw: get("CONNECT", "example.com:443", "", "")},
	{Name: "targets/connect-ipv6", Source: srcTargets, Raw: get("CONNECT", "[2001:db8::1]:443", "", "")},
	{Name: "targets/connect-no-port", Source: srcTargets, Raw: get("CONNECT", "example.com", "", ""), Status: 400,
		Note: "authority-form is host:port (RFC 9112 §3.2.3); net/http answers 200"},
	{Name: "targets/connect-empty-port", Source: srcTargets, Raw: get("CONNECT", "example.com:", "", ""), Status: 400,
		Note: "authority-form needs a port; net/http answers 200"},
	{Name: "targets/connect-empty-host", Source: srcTargets, Raw: get("CONNECT", ":443", "", ""), Status: 400,
		Note: "authority-form needs a host; net/http answers 200"},
	{Name: "targets/connect-with-path", Source: srcTargets, Raw: get("CONNECT", "example.com:443/x", "", ""), Status: 400,
		Note: "authority-form has no path; net/http answers 200"},
	{Name: "targets/connect-userinfo", Source: srcTargets, Raw: get("CONNECT", "u@example.com:443", "", ""), Status: 400,
		Note: noteUserinfo},
	{Name: "targets/connect-bad-host", Source: srcTargets, Raw: get("CONNECT", "exa{mple.com:443", "", ""), Status: 400},
	{Name: "targets/connect-absolute", Source: srcTargets, Raw: get("CONNECT", "http://example.com/", "", ""), Status: 400,
		Note: "CONNECT takes authority-form only; net/http reads this as host \"http\" and answers 200"},
}

// Chunks is the chunked-body table.
var Chunks = append([]Chunked{
	// internal/chunked_test.go. Where a net/http input stops after the
	// last-chunk line (net/http reads trailers elsewhere), the empty line
	// that ends the trailer section is appended so that the body is whole.
	{Name: "TestChunk", Source: srcChunkedTests + "TestChunk",
		Raw:  "7\r\nhello, \r\n17\r\nworld! 0123456789abcdef\r\n0\r\n\r\n",
		Body: "hello, world! 0123456789abcdef"},
	{Name: "TestChunkReadMultiple/small", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "3\r\nfoo\r\n3\r\nbar\r\n0\r\n\r\n", Body: "foobar"},
	{Name: "TestChunkReadMultiple/fill-buffer", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "b\r\n0123456789a\r\n3\r\nfoo\r\n0\r\n\r\n", Body: "0123456789afoo"},
	{Name: "TestChunkReadMultiple/eof-chunk", Source: srcChunkedTests + "TestChunkReadMultiple",
		Raw: "3\r\nfoo\r\n0\r\n\r\n", Body: "foo"},
	{Name: "TestChunkReaderAllocs", Source: srcChunkedTests + "TestChunkReaderAllocs",
		Raw:  "6\r\naaaaaa\r\nc\r\nbbbbbbbbbbbb\r\n18\r\n" + strings.Repeat("c", 24) + "\r\n0\r\n\r\n",
		Body: "aaaaaa" + strings.Repeat("b", 12) + strings.Repeat("c", 24)},
	{Name: "TestParseHexUint/x", Source: srcChunkedTests + "TestParseHexUint", Raw: "x\r\n\r\n", Err: true},
	{Name: "TestParseHexUint/16-zeros", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "0000000000000000\r\n\r\n", Note: "16 hex digits of 0: the last chunk"},
	{Name: "TestParseHexUint/16-digits-1", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "0000000000000001\r\nz\r\n0\r\n\r\n", Body: "z"},
	{Name: "TestParseHexUint/max-uint64", Source: srcChunkedTests + "TestParseHexUint",
		Raw: "ffffffffffffffff\r\nabc", Body: "abc", Incomplete: true,
		Note: "a 2^64-1 byte chunk is well-formed; a server's body limit stops it"},
	{Name: "TestParseHexUint/bogus", Source: srcChunkedTests + "TestParseHexUint", Raw: "000000000000bogus\r\n", Err: true},
	{Name: "TestParseHexUint/17-zeros", Source: srcChunkedTests + "TestParseHexUint", Raw: "00000000000000000\r\n\r\n", Err: true,
		Note: "more than 16 hex digits, even zeros, as net/http"},
	{Name: "TestParseHexUint/2^64", Source: srcChunkedTests + "TestParseHexUint", Raw: "10000000000000000\r\n", Err: true},
	{Name: "TestParseHexUint/17-digits-1", Source: srcChunkedTests + "TestParseHexUint", Raw: "00000000000000001\r\nz\r\n0\r\n\r\n", Err: true},
	{Name: "TestParseHexUint/empty", Source: srcChunkedTests + "TestParseHexUint", Raw: "\r\n", Err: true},
	{Name: "TestChunkReadingIgnoresExtensions", Source: srcChunkedTests + "TestChunkReadingIgnoresExtensions",
		Raw: "7;ext=\"some quoted string\"\r\nhello, \r\n17;someext\r\nworld! 0123456789abcdef\r\n" +
			"0;someextension=sometoken\r\n\r\n",
		Body: "hello, world! 0123456789abcdef"},
	{Name: "TestChunkReadPartial/cut", Source: srcChunkedTests + "TestChunkReadPartial",
		Raw: "7\r\n1234567", Body: "1234567", Incomplete: true},
	{Name: "TestChunkReadPartial/bad-end", Source: srcChunkedTests + "TestChunkReadPartial",
		Raw: "7\r\n1234567xx", Err: true},
	{Name: "TestIncompleteChunk/whole", Source: srcChunkedTests + "TestIncompleteChunk",
		Raw: "4\r\nabcd\r\n5\r\nabc\r\n\r\n0\r\n\r\n", Body: "abcdabc\r\n"},
	{Name: "TestChunkEndReadError", Source: srcChunkedTests + "TestChunkEndReadError",
		Raw: "4\r\nabcd", Body: "abcd", Incomplete: true},
	{Name: "TestChunkReaderTooMuchOverhead", Source: srcChunkedTests + "TestChunkReaderTooMuchOverhead",
		Raw: strings.Repeat("1;"+strings.Repeat("a", 100)+"\r\nX\r\n", 400) + "0\r\n\r\n", Err: true,
		Note: "one data byte per 100 bytes of extension: refused after some 16 KiB of overhead"},
	{Name: "TestChunkReaderByteAtATime", Source: srcChunkedTests + "TestChunkReaderByteAtATime",
		Raw: strings.Repeat("1\r\nX\r\n", 1<<16) + "0\r\n\r\n", Body: strings.Repeat("X", 1<<16),
		Note: "net/http sends 2^20 such chunks; 2^16 keep the table small, and the overhead count is flat after the first"},
	{Name: "TestChunkInvalidInputs/bare-LF-in-size", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\na\r\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/extra-CR-in-size", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\r\r\na\r\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/bare-LF-after-data", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1\r\na\n0\r\n", Err: true},
	{Name: "TestChunkInvalidInputs/bare-LF-in-extension", Source: srcChunkedTests + "TestChunkInvalidInputs",
		Raw: "1;\na\r\n0\r\n", Err: true},

	// Chunk sizes.
	{Name: "size/upper-case-hex", Source: srcChunkSize, Raw: "A\r\n0123456789\r\n0\r\n\r\n", Body: "0123456789"},
	{Name: "size/leading-zeros", Source: srcChunkSize, Raw: "0003\r\nabc\r\n000\r\n\r\n", Body: "abc"},
	{Name: "size/0x-prefix", Source: srcChunkSize, Raw: "0x3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/plus", Source: srcChunkSize, Raw: "+3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/minus", Source: srcChunkSize, Raw: "-3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/leading-space", Source: srcChunkSize, Raw: " 3\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "size/trailing-space", Source: srcChunkSize, Raw: "3 \r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "hotpath rejects whitespace after a chunk size (RFC 9112 §7.1 has none there); net/http trims it and accepts"},
	{Name: "size/trailing-tab", Source: srcChunkSize, Raw: "3\t\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "as size/trailing-space; net/http accepts"},
	{Name: "size/data-too-long", Source: srcChunkSize, Raw: "3\r\nabcd\r\n0\r\n\r\n", Err: true},
	{Name: "size/data-too-short", Source: srcChunkSize, Raw: "3\r\nab\r\n0\r\n\r\n", Err: true},
	{Name: "size/bare-LF-last-chunk", Source: srcChunkSize, Raw: "3\r\nabc\r\n0\n\r\n", Err: true},
	{Name: "size/CR-after-data-then-LF-missing", Source: srcChunkSize, Raw: "3\r\nabc\r0\r\n\r\n", Err: true},
	{Name: "size/empty-body", Source: srcChunkSize, Raw: "", Incomplete: true},
	{Name: "size/no-trailer-end", Source: srcChunkSize, Raw: "3\r\nabc\r\n0\r\n", Body: "abc", Incomplete: true,
		Note: "net/http's chunked reader stops after the last-chunk line; the body ends only at the empty line"},
	{Name: "size/big-chunk", Source: srcChunkSize,
		Raw: "10000\r\n" + strings.Repeat("d", 1<<16) + "\r\n0\r\n\r\n", Body: strings.Repeat("d", 1<<16)},

	// Chunk extensions (RFC 9112 §7.1.1).
	{Name: "ext/empty", Source: srcChunkExt, Raw: "3;\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/several", Source: srcChunkExt, Raw: "3;a=1;b;c=\"x;y\"\r\nabc\r\n0;z\r\n\r\n", Body: "abc"},
	{Name: "ext/spaces-after-semicolon", Source: srcChunkExt, Raw: "3; a = 1\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/space-before-semicolon", Source: srcChunkExt, Raw: "3 ;a\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "RFC 9112 allows BWS before ';' but net/http rejects it, and hotpath follows the stricter reading"},
	{Name: "ext/tab-before-semicolon", Source: srcChunkExt, Raw: "3\t;a\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/nul", Source: srcChunkExt, Raw: "3;a=\x00\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "hotpath refuses control bytes in extensions; net/http does not look at them and accepts"},
	{Name: "ext/del", Source: srcChunkExt, Raw: "3;a=\x7f\r\nabc\r\n0\r\n\r\n", Err: true,
		Note: "as ext/nul; net/http accepts"},
	{Name: "ext/obs-text", Source: srcChunkExt, Raw: "3;a=\xff\r\nabc\r\n0\r\n\r\n", Body: "abc"},
	{Name: "ext/bare-CR", Source: srcChunkExt, Raw: "3;a\rb\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/line-at-limit", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 4096-len("3;\r\n")) + "\r\nabc\r\n0\r\n\r\n", Body: "abc",
		Note: "a chunk line of 4096 bytes with its CRLF, the most net/http reads through its 4 KiB buffer"},
	{Name: "ext/line-over-limit", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 4097-len("3;\r\n")) + "\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/line-10KiB", Source: srcChunkExt,
		Raw: "3;" + strings.Repeat("e", 10<<10) + "\r\nabc\r\n0\r\n\r\n", Err: true},
	{Name: "ext/last-chunk-over-limit", Source: srcChunkExt,
		Raw: "0;" + strings.Repeat("e", 5000) + "\r\n\r\n", Err: true},

	// Framing overhead (net/http allows 16 bytes per chunk plus twice the
	// data before it counts; hotpath counts the same way or earlier).
	{Name: "overhead/long-extensions-tiny-chunks", Source: srcOverhead,
		Raw: strings.Repeat("1;"+strings.Repeat("e", 4000)+"\r\nX\r\n", 5) + "0\r\n\r\n", Err: true},
	{Name: "overhead/long-extensions-big-chunks", Source: srcOverhead,
		Raw:  strings.Repeat("800;"+strings.Repeat("e", 4000)+"\r\n"+strings.Repeat("d", 0x800)+"\r\n", 20) + "0\r\n\r\n",
		Body: strings.Repeat("d", 0x800*20), Note: "long extensions paid for by twice as much data"},
	{Name: "overhead/empty-extensions-one-byte-chunks", Source: srcOverhead,
		Raw: strings.Repeat("1;\r\nY\r\n", 5000) + "0\r\n\r\n", Body: strings.Repeat("Y", 5000)},
	{Name: "overhead/many-zero-padded-sizes", Source: srcOverhead,
		Raw: strings.Repeat("000000000000001\r\nZ\r\n", 2000) + "0\r\n\r\n", Body: strings.Repeat("Z", 2000),
		Note: "15-digit sizes for 1-byte chunks stay within the 16 bytes a chunk may spend on framing"},
	{Name: "overhead/padded-sizes-with-extension", Source: srcOverhead,
		Raw: strings.Repeat("000000000000001;ext=value\r\nZ\r\n", 2000) + "0\r\n\r\n", Err: true,
		Note: "26 bytes of framing per data byte: refused once the excess passes 16 KiB"},

	// Trailer section (RFC 9112 §7.1.2).
	{Name: "trailer/one-field", Source: srcTrailers, Raw: "3\r\nabc\r\n0\r\nX-Sum: 123\r\n\r\n", Body: "abc"},
	{Name: "trailer/two-fields", Source: srcTrailers, Raw: "0\r\nA: 1\r\nB:2\r\n\r\n"},
	{Name: "trailer/space-before-colon", Source: srcTrailers, Raw: "0\r\nA : 1\r\n\r\n", Err: true,
		Note: "trailer fields follow the header field rules; net/http's trailer reader accepts a space before the colon"},
	{Name: "trailer/leading-space", Source: srcTrailers, Raw: "0\r\n A: 1\r\n\r\n", Err: true},
	{Name: "trailer/no-colon", Source: srcTrailers, Raw: "0\r\nA\r\n\r\n", Err: true},
	{Name: "trailer/nul-in-value", Source: srcTrailers, Raw: "0\r\nA: \x00\r\n\r\n", Err: true},
	{Name: "trailer/bare-LF-field", Source: srcTrailers, Raw: "0\r\nA: 1\n\r\n", Err: true,
		Note: "hotpath wants CRLF throughout chunked framing; net/http's trailer reader accepts a lone LF"},
	{Name: "trailer/bare-LF-end", Source: srcTrailers, Raw: "0\r\n\n", Err: true,
		Note: "as trailer/bare-LF-field"},
	{Name: "trailer/bare-CR", Source: srcTrailers, Raw: "0\r\nA: 1\r2\r\n\r\n", Err: true},
	{Name: "trailer/cut", Source: srcTrailers, Raw: "0\r\nA: 1\r\n", Incomplete: true},
	{Name: "trailer/over-16KiB", Source: srcTrailers,
		Raw: "0\r\n" + strings.Repeat("A: "+strings.Repeat("t", 1000)+"\r\n", 17) + "\r\n", Err: true,
		Note: "net/http refuses trailers that do not fit its 4 KiB buffer; hotpath allows 16 KiB"},
}, generatedChunks()...)

// generatedChunks covers, as whole bodies, the inputs that net/http's
// tests build in loops: every prefix of TestIncompleteChunk's body and
// every chunk size 0 to 1234 of TestParseHexUint.
func generatedChunks() []Chunked {
	var out []Chunked
	const whole = "4\r\nabcd\r\n5\r\nabc\r\n\r\n0\r\n"
	for i := range len(whole) {
		body := ""
		switch {
		case i > len("4\r\nabcd\r\n5\r\n"):
			body = "abcd" + whole[len("4\r\nabcd\r\n5\r\n"):min(i, len("4\r\nabcd\r\n5\r\nabc\r\n"))]
		case i > len("4\r\n"):
			body = whole[len("4\r\n"):min(i, len("4\r\nabcd"))]
		}
		out = append(out, Chunked{
			Name: fmt.Sprintf("TestIncompleteChunk/prefix-%d", i), Source: srcChunkedTests + "TestIncompleteChunk",
			Raw: whole[:i], Body: body, Incomplete: true,
		})
	}
	for n := 0; n <= 1234; n++ {
		data := strings.Repeat(string(rune('a'+n%26)), n)
		raw := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", n, data)
		if n == 0 {
			raw = "0\r\n\r\n"
		}
		out = append(out, Chunked{
			Name: fmt.Sprintf("TestParseHexUint/size-%x", n), Source: srcChunkedTests + "TestParseHexUint",
			Raw: raw, Body: data,
		})
	}
	return out
}
