package client

// Errors both engines return: constants, and the timeouts.

import "context"

// errorString is an error constant, so package-level errors need no
// errors.New at init.
type errorString string

// Error returns the constant's text.
func (e errorString) Error() string { return string(e) }

var (
	errHeaderTimeout  = &timeoutError{msg: "client: timeout awaiting response headers"}
	errRequestTimeout = &timeoutError{msg: "client: request timeout (Transport.Timeout or the context's deadline exceeded)", deadline: true}
)

// timeoutError is a timeout of this Transport's. The overall one is also
// context.DeadlineExceeded, as http.Client.Timeout's is.
type timeoutError struct {
	msg      string
	deadline bool
}

func (e *timeoutError) Error() string   { return e.msg }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
func (e *timeoutError) Is(target error) bool {
	return e.deadline && target == context.DeadlineExceeded
}

// isTimeout reports whether err is a timeout: this Transport's, or a
// context's deadline.
func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}
