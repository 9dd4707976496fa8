package websocket

import (
	"errors"
	"fmt"
	"net"

	"github.com/hotpathhq/hotpath/wire/ws"
)

// CloseError is how a connection ended, as Read reports it: the code and
// reason of the peer's close frame (RFC 6455 §7.1.5, §7.1.6), or, with no
// close frame, CloseNoStatus (1005: a close frame without a code) or
// CloseAbnormal (1006: the connection dropped before any close frame).
type CloseError struct {
	Code   ws.CloseCode
	Reason string
	err    error // what ended the connection when no close frame came
}

// Error describes the closure: "websocket: closed by the peer: 1000
// bye", or "websocket: connection ended without a close frame (1006): EOF".
func (e *CloseError) Error() string {
	if e.Code == ws.CloseAbnormal {
		if e.err != nil {
			return "websocket: connection ended without a close frame (1006): " + e.err.Error()
		}
		return "websocket: connection ended without a close frame (1006)"
	}
	if e.Reason == "" {
		return fmt.Sprintf("websocket: closed by the peer: %d", uint16(e.Code))
	}
	return fmt.Sprintf("websocket: closed by the peer: %d %s", uint16(e.Code), e.Reason)
}

// Unwrap returns the I/O error behind an abnormal closure, if any.
func (e *CloseError) Unwrap() error { return e.err }

// CloseStatus returns the close code err carries: a [*CloseError]'s Code
// (the peer's, or 1005/1006), or the code of a [*ws.Error] with which this
// end failed the connection (1002, 1007, 1009). It returns 0 for any other
// error, and for nil.
func CloseStatus(err error) ws.CloseCode {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	var we *ws.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// ErrIdleTimeout is wrapped by the error Read returns when nothing came
// from the peer for the IdleTimeout: the connection was closed.
var ErrIdleTimeout = errors.New("websocket: no data from the peer within IdleTimeout")

var (
	errClosed     = fmt.Errorf("websocket: connection closed: %w", net.ErrClosed)
	errCloseSent  = fmt.Errorf("websocket: write after the close frame was sent: %w", net.ErrClosed)
	errWriterDone = errors.New("websocket: write to a message writer after its Close")
)

// failure is the error of a connection this end failed (RFC 6455 §7.1.7):
// the peer broke a rule, we sent the close code, and closed the socket.
func failure(e *ws.Error) error {
	return fmt.Errorf("websocket: failed the connection (sent close %d): %w", uint16(e.Code), e)
}
