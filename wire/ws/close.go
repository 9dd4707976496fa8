package ws

import (
	"encoding/binary"
	"unicode/utf8"
)

// MaxCloseReason is the longest close reason: a control frame's 125 bytes
// less the two of the code (§5.5, §5.5.1).
const MaxCloseReason = MaxControlPayload - 2

// ParseClose reads a close frame's payload, unmasked (§5.5.1). An empty
// payload carries no code: ParseClose returns [CloseNoStatus] (1005, what
// §7.1.5 says the close code then is) and no reason. Otherwise the payload
// is a two-byte code, which must be [CloseCode.Valid], then a reason in
// UTF-8. The reason aliases payload.
//
// Errors: a payload of one byte or a code not valid on the wire
// (1002), over 125 bytes (1002; [ParseHeader] refuses such a frame
// first), a reason that is not UTF-8 (1007).
func ParseClose(payload []byte) (CloseCode, []byte, error) {
	switch {
	case len(payload) == 0:
		return CloseNoStatus, nil, nil
	case len(payload) == 1:
		return 0, nil, ErrCloseOneByte
	case len(payload) > MaxControlPayload:
		return 0, nil, ErrControlTooLong
	}
	code := CloseCode(binary.BigEndian.Uint16(payload))
	if !code.Valid() {
		return 0, nil, ErrCloseCodeInvalid
	}
	reason := payload[2:]
	if !utf8.Valid(reason) {
		return 0, nil, ErrCloseReasonUTF8
	}
	return code, reason, nil
}

// AppendClose appends a close frame's payload (§5.5.1) to dst: code, then
// reason. With code [CloseNoStatus] it appends nothing, the empty payload
// of a close frame without a code (reason must then be empty).
//
// It panics on a code that may not be sent ([CloseCode.Valid] false,
// CloseNoStatus aside), a reason over [MaxCloseReason] bytes, or a reason
// with no code: each would make the peer fail the connection, and each is
// a bug in the caller. The reason must be UTF-8 (§5.5.1); AppendClose does
// not check that, as a reason is most often a constant.
func AppendClose(dst []byte, code CloseCode, reason string) []byte {
	if code == CloseNoStatus {
		if reason != "" {
			panic("ws: close reason without a close code")
		}
		return dst
	}
	if !code.Valid() {
		panic("ws: close code " + code.String() + " may not be sent")
	}
	if len(reason) > MaxCloseReason {
		panic("ws: close reason over 123 bytes")
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return append(dst, reason...)
}
