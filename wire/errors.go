package wire

import "errors"

// ErrNeedMore reports that the input ended before a complete element (a
// request head, a chunk-size line, a trailer section) and that no limit has
// been exceeded yet: the caller should read more bytes and try again with
// the unconsumed input extended.
var ErrNeedMore = errors.New("wire: incomplete input, need more bytes")

// Error is a protocol violation found in a message. Status is the HTTP
// status code a server should answer with before closing the connection;
// Reason says what was wrong, for logs and for the response body.
type Error struct {
	Status int
	Reason string
}

func (e *Error) Error() string { return "wire: " + e.Reason }

func newError(status int, reason string) *Error { return &Error{Status: status, Reason: reason} }

// The errors the parser returns. They are values, so a parse that fails does
// not allocate; compare with errors.Is or read Status and Reason.
var (
	ErrRequestLineTooLong  = newError(414, "request line exceeds the limit")
	ErrHeaderTooLarge      = newError(431, "header block exceeds the limit")
	ErrTooManyHeaders      = newError(431, "too many header fields")
	ErrBodyTooLarge        = newError(413, "request body exceeds the limit")
	ErrMalformedLine       = newError(400, "malformed request line")
	ErrBadMethod           = newError(400, "invalid method")
	ErrBadTarget           = newError(400, "invalid request target")
	ErrBadVersion          = newError(400, "malformed HTTP version")
	ErrVersionUnsupported  = newError(505, "HTTP version not supported")
	ErrBareCR              = newError(400, "bare CR in message head")
	ErrObsFold             = newError(400, "obs-fold or leading whitespace on a header line")
	ErrBadHeaderName       = newError(400, "invalid header field name (whitespace before colon or non-token byte)")
	ErrMissingColon        = newError(400, "header line without a colon")
	ErrBadHeaderValue      = newError(400, "control byte in header field value")
	ErrMissingHost         = newError(400, "missing Host header on an HTTP/1.1 request")
	ErrDuplicateHost       = newError(400, "more than one Host header")
	ErrBadHost             = newError(400, "invalid Host header")
	ErrBadContentLength    = newError(400, "malformed Content-Length")
	ErrConflictingLength   = newError(400, "multiple Content-Length headers with different values")
	ErrLengthAndChunked    = newError(400, "both Content-Length and Transfer-Encoding present")
	ErrUnsupportedTE       = newError(501, "unsupported Transfer-Encoding (only a single \"chunked\" is accepted)")
	ErrChunkedNotFinal     = newError(400, "chunked is not the final transfer coding, or is applied twice")
	ErrTEOnHTTP10          = newError(400, "Transfer-Encoding on an HTTP/1.0 request")
	ErrFramingTrailer      = newError(400, "Trailer header announces Content-Length, Transfer-Encoding or Trailer")
	ErrExpectation         = newError(417, "unsupported Expect value")
	ErrBadChunkSize        = newError(400, "malformed chunk size")
	ErrChunkLineTooLong    = newError(400, "chunk-size line or extension exceeds the limit")
	ErrChunkBareLF         = newError(400, "chunk line ended by a bare LF")
	ErrBadChunkTerminator  = newError(400, "chunk data not followed by CRLF")
	ErrChunkOverhead       = newError(400, "chunked body carries too much framing overhead")
	ErrBadTrailer          = newError(400, "malformed trailer section")
	ErrTrailerTooLarge     = newError(431, "trailer section exceeds the limit")
	ErrTooManyTrailers     = newError(431, "too many trailer fields")
	ErrUnexpectedEOF       = newError(400, "connection closed inside the message")
	ErrContentLengthTooBig = newError(400, "Content-Length overflows")
)
