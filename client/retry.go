package client

// When a request may be sent again, and with what body: net/http's
// rules, for a reused connection that was dead and for an HTTP/2 stream
// the server refused.

import (
	"errors"
	"io"
	"net/http"
	"syscall"
)

// connWasDead reports an error that shows a reused connection had been
// closed by the server before this request: end of stream or a reset on
// the write or the first read. Timeouts, malformed responses and errors of
// the request body say nothing of the sort and are never retried.
func connWasDead(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

// replayable reports net/http's rule for retrying a request whose bytes may
// have reached the server: an idempotent method or an idempotency key, and
// a body that can be produced again.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return req.Header["Idempotency-Key"] != nil || req.Header["X-Idempotency-Key"] != nil
}

// rewind returns a request to retry req with: req itself when it has no
// body, a copy with a fresh body from GetBody, or false when req may not be
// sent again. nothingWritten relaxes the rule as net/http does: a request
// none of whose bytes left may be retried whatever its method. closeOld
// closes the first attempt's body when there is a fresh one (false when
// the attempt closed it).
func rewind(req *http.Request, nothingWritten, closeOld bool) (*http.Request, bool) {
	if !nothingWritten && !replayable(req) {
		return nil, false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	if closeOld {
		req.Body.Close() // the first attempt's, whatever it had read of it
	}
	next := *req
	next.Body = body
	return &next, true
}
