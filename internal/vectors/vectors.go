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
