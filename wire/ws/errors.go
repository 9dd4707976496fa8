package ws

import (
	"errors"
	"strconv"
)

// ErrNeedMore reports that the input ends before a complete frame header:
// the caller should read more bytes and call again with the unconsumed
// input extended. No rule has been broken yet.
var ErrNeedMore = errors.New("ws: incomplete frame header, need more bytes")

// CloseCode is a close frame's status code (RFC 6455 §7.4, and the IANA
// "WebSocket Close Code Number" registry).
type CloseCode uint16

// The close codes of RFC 6455 §7.4.1 and the IANA registry.
const (
	CloseNormal             CloseCode = 1000
	CloseGoingAway          CloseCode = 1001
	CloseProtocolError      CloseCode = 1002
	CloseUnsupportedData    CloseCode = 1003
	CloseNoStatus           CloseCode = 1005 // never sent: a close frame without a code
	CloseAbnormal           CloseCode = 1006 // never sent: the connection dropped without a close frame
	CloseInvalidPayload     CloseCode = 1007 // data inconsistent with its type: text that is not UTF-8
	ClosePolicyViolation    CloseCode = 1008
	CloseMessageTooBig      CloseCode = 1009
	CloseMandatoryExtension CloseCode = 1010
	CloseInternalError      CloseCode = 1011
	CloseServiceRestart     CloseCode = 1012
	CloseTryAgainLater      CloseCode = 1013
	CloseBadGateway         CloseCode = 1014
	CloseTLSHandshake       CloseCode = 1015 // never sent: the TLS handshake failed
)

// Valid reports whether c may appear in a close frame on the wire: 1000–1003
// and 1007–1014 (RFC 6455 §7.4.1 and the IANA registry), and 3000–4999
// (registered libraries and frameworks, and private use, §7.4.2). 1004 is
// reserved; 1005, 1006 and 1015 stand for events and are never sent; every
// other code is undefined, and a close frame carrying one fails the
// connection with 1002.
func (c CloseCode) Valid() bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014:
		return true
	case c >= 3000 && c <= 4999:
		return true
	}
	return false
}

// String returns the code in decimal.
func (c CloseCode) String() string { return strconv.Itoa(int(c)) }

// Error is a violation of RFC 6455 (or RFC 7692) found in the input, or a
// configured limit exceeded. The endpoint that finds it fails the
// connection (RFC 6455 §7.1.7): it sends a close frame with Code, and
// Reason as the close reason if it wishes (every Reason of this package
// fits in a close frame: at most 123 bytes), then closes.
//
// The errors are package-level values, so a failed parse allocates
// nothing; compare them with errors.Is or ==, or read the fields.
type Error struct {
	Code   CloseCode
	Reason string
}

// Error returns "ws: ", the reason and the close code.
func (e *Error) Error() string { return "ws: " + e.Reason + " (close " + e.Code.String() + ")" }

func protocolError(reason string) *Error { return &Error{Code: CloseProtocolError, Reason: reason} }

// Frame header errors (RFC 6455 §5.2, §5.5; RFC 7692 §6).
var (
	ErrReservedOpcode      = protocolError("reserved opcode (§5.2)")
	ErrFragmentedControl   = protocolError("control frame without FIN (§5.5)")
	ErrControlTooLong      = protocolError("control frame payload over 125 bytes (§5.5)")
	ErrReservedBits        = protocolError("RSV bit set without a negotiated extension (§5.2)")
	ErrCompressedControl   = protocolError("RSV1 set on a control frame (RFC 7692 §6.1)")
	ErrCompressedFragment  = protocolError("RSV1 set on a continuation frame (RFC 7692 §6.1)")
	ErrLengthTopBit        = protocolError("64-bit payload length with its top bit set (§5.2)")
	ErrNonMinimalLength    = protocolError("payload length not in its minimal encoding (§5.2)")
	ErrUnmaskedClientFrame = protocolError("client frame not masked (§5.1)")
	ErrMaskedServerFrame   = protocolError("server frame masked (§5.1)")
	ErrFrameTooLarge       = &Error{Code: CloseMessageTooBig, Reason: "frame payload exceeds the configured maximum"}
)

// Message sequence errors (RFC 6455 §5.4).
var (
	ErrUnexpectedContinuation = protocolError("continuation frame without a message to continue (§5.4)")
	ErrMessageNotFinished     = protocolError("new data frame while a fragmented message is open (§5.4)")
	ErrMessageTooLarge        = &Error{Code: CloseMessageTooBig, Reason: "message exceeds the configured maximum"}
)

// Close frame errors (RFC 6455 §5.5.1, §7.4).
var (
	ErrCloseOneByte     = protocolError("close payload of one byte (§5.5.1)")
	ErrCloseCodeInvalid = protocolError("close code not valid on the wire (§7.4)")
	ErrCloseReasonUTF8  = &Error{Code: CloseInvalidPayload, Reason: "close reason is not UTF-8 (§5.5.1)"}
	ErrInvalidUTF8      = &Error{Code: CloseInvalidPayload, Reason: "text message is not UTF-8 (§8.1)"}
)
