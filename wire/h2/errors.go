package h2

import (
	"errors"
	"strconv"
)

// ErrNeedMore reports that the input ends before a complete frame (or frame
// header): the caller should read more bytes and call again with the
// unconsumed input extended. No limit has been exceeded yet.
var ErrNeedMore = errors.New("h2: incomplete frame, need more bytes")

// ErrCode is an HTTP/2 error code (RFC 9113 §7), carried by RST_STREAM and
// GOAWAY frames.
type ErrCode uint32

// The error codes of RFC 9113 §7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{
	ErrCodeNo:                 "NO_ERROR",
	ErrCodeProtocol:           "PROTOCOL_ERROR",
	ErrCodeInternal:           "INTERNAL_ERROR",
	ErrCodeFlowControl:        "FLOW_CONTROL_ERROR",
	ErrCodeSettingsTimeout:    "SETTINGS_TIMEOUT",
	ErrCodeStreamClosed:       "STREAM_CLOSED",
	ErrCodeFrameSize:          "FRAME_SIZE_ERROR",
	ErrCodeRefusedStream:      "REFUSED_STREAM",
	ErrCodeCancel:             "CANCEL",
	ErrCodeCompression:        "COMPRESSION_ERROR",
	ErrCodeConnect:            "CONNECT_ERROR",
	ErrCodeEnhanceYourCalm:    "ENHANCE_YOUR_CALM",
	ErrCodeInadequateSecurity: "INADEQUATE_SECURITY",
	ErrCodeHTTP11Required:     "HTTP_1_1_REQUIRED",
}

// String returns the code's name as RFC 9113 spells it ("PROTOCOL_ERROR"),
// or "UNKNOWN_ERROR_0x..." for a code it does not define (which, by §7, a
// receiver treats as INTERNAL_ERROR where it must act on it).
func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return "UNKNOWN_ERROR_0x" + strconv.FormatUint(uint64(c), 16)
}

// Error is a violation of RFC 9113 or RFC 7541 found in the input.
//
// A connection error (Stream false) ends the connection: the server sends
// GOAWAY with Code and closes (RFC 9113 §5.4.1). A stream error (Stream
// true) ends only the stream the frame or header block belongs to: the
// server sends RST_STREAM with Code on that stream and goes on
// (§5.4.2). Reason says what was wrong, for logs and for GOAWAY's debug
// data.
//
// The errors are package-level values, so a failed parse allocates
// nothing; compare them with errors.Is or ==, or read the fields.
type Error struct {
	Code   ErrCode
	Stream bool
	Reason string
}

func (e *Error) Error() string {
	kind := "connection error "
	if e.Stream {
		kind = "stream error "
	}
	return "h2: " + kind + e.Code.String() + ": " + e.Reason
}

func connError(code ErrCode, reason string) *Error {
	return &Error{Code: code, Reason: reason}
}

func streamError(code ErrCode, reason string) *Error {
	return &Error{Code: code, Stream: true, Reason: reason}
}

// Frame errors (RFC 9113 §4, §6).
var (
	ErrFrameTooLarge        = connError(ErrCodeFrameSize, "frame length exceeds SETTINGS_MAX_FRAME_SIZE (§4.2)")
	ErrStreamIDZero         = connError(ErrCodeProtocol, "frame type requires a stream identifier, got stream 0 (§6)")
	ErrStreamIDNotZero      = connError(ErrCodeProtocol, "frame type applies to the connection, got a non-zero stream identifier (§6)")
	ErrPadding              = connError(ErrCodeProtocol, "padding length is not less than the payload (§6.1, §6.2, §6.6)")
	ErrShortHeaders         = connError(ErrCodeFrameSize, "HEADERS frame too short for its pad length and priority fields (§6.2)")
	ErrShortPushPromise     = connError(ErrCodeFrameSize, "PUSH_PROMISE frame too short for its pad length and promised stream ID (§6.6)")
	ErrShortData            = connError(ErrCodeFrameSize, "padded DATA frame without a pad length byte (§6.1)")
	ErrPriorityLength       = streamError(ErrCodeFrameSize, "PRIORITY frame length is not 5 (§6.3)")
	ErrSelfDependency       = streamError(ErrCodeProtocol, "stream depends on itself (§5.3.1)")
	ErrRSTStreamLength      = connError(ErrCodeFrameSize, "RST_STREAM frame length is not 4 (§6.4)")
	ErrSettingsAckLength    = connError(ErrCodeFrameSize, "SETTINGS frame with ACK carries a payload (§6.5)")
	ErrSettingsLength       = connError(ErrCodeFrameSize, "SETTINGS frame length is not a multiple of 6 (§6.5)")
	ErrSettingsEnablePush   = connError(ErrCodeProtocol, "SETTINGS_ENABLE_PUSH is neither 0 nor 1 (§6.5.2)")
	ErrSettingsWindowSize   = connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE exceeds 2^31-1 (§6.5.2)")
	ErrSettingsMaxFrameSize = connError(ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE outside 16384..16777215 (§6.5.2)")
	ErrSettingsConnectProto = connError(ErrCodeProtocol, "SETTINGS_ENABLE_CONNECT_PROTOCOL is neither 0 nor 1 (RFC 8441 §3)")
	ErrPingLength           = connError(ErrCodeFrameSize, "PING frame length is not 8 (§6.7)")
	ErrGoAwayLength         = connError(ErrCodeFrameSize, "GOAWAY frame shorter than 8 bytes (§6.8)")
	ErrWindowUpdateLength   = connError(ErrCodeFrameSize, "WINDOW_UPDATE frame length is not 4 (§6.9)")
	ErrWindowIncrementZero  = connError(ErrCodeProtocol, "WINDOW_UPDATE with a zero increment on the connection (§6.9)")
	ErrStreamIncrementZero  = streamError(ErrCodeProtocol, "WINDOW_UPDATE with a zero increment on a stream (§6.9)")
)
