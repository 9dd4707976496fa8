// Package wire is hotpath's HTTP/1.1 codec, for the server and the
// client alike: it parses request and response heads and their bodies
// (by length, chunked, trailers), appends heads, chunks and fields, and
// holds the rules both sides share (one Content-Length parser, header
// validity), on byte slices only. It opens no sockets and starts no
// goroutines.
//
// # Zero copy and lifetimes
//
// [Request.Parse] does not copy: the method, target, version and every
// header name and value are sub-slices of the buffer handed to it. They are
// valid only while that buffer is unchanged. A server that reuses its read
// buffer between requests must not let these slices outlive the request.
//
// # Strictness
//
// The parser follows RFC 9112 as net/http reads it, or stricter wherever a
// lenient reading lets two parsers disagree about where a message ends
// (request smuggling). It rejects, among others: Content-Length together with
// Transfer-Encoding; duplicate differing or malformed Content-Length; any
// Transfer-Encoding other than a single "chunked"; Transfer-Encoding on
// HTTP/1.0; obs-fold; whitespace before a colon (in a response, spaces
// before the colon of a field other than Content-Length and
// Transfer-Encoding are kept in its name, as net/http's client keeps
// them); a bare CR; NUL and other
// control bytes in values; a missing or repeated Host on HTTP/1.1; a
// request target net/url would refuse (a bad percent-escape in the path, a
// malformed authority) or one carrying userinfo; a Trailer header that
// announces a framing field; malformed chunk sizes and chunk lines ended by
// a bare LF. Every rejection is an
// [*Error] carrying the status code to answer with (400, 413, 414, 417, 431,
// 501 or 505) and a reason a person can read. Lines of a request head may end
// with CRLF or, as net/http and nginx accept, a lone LF; chunked framing must
// use CRLF.
package wire
