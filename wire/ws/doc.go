// Package ws is hotpath's WebSocket codec (RFC 6455, and the negotiation
// of permessage-deflate, RFC 7692) on byte slices only: frame headers,
// masking, close frames, the UTF-8 rule for text, the order of a
// message's frames, and the handshake's keys and extension offers. It
// opens no sockets, starts no goroutines and allocates nothing; the
// connection layer of hotpath's WebSocket support is built on it.
//
// # Frames
//
// [ParseHeader] reads a frame header from the front of a buffer and checks
// it against the rules that a header alone decides (§5.2, §5.5, §5.1's
// masking per side, RSV bits per negotiated extension, a payload limit),
// failing fast on the first two bytes. [AppendHeader] writes a header, its
// length in the minimal encoding; [AppendServerFrame] and
// [AppendClientFrame] write a whole frame as each side sends it. [Mask]
// masks and unmasks a payload in place, eight bytes at a time, in pieces
// of any size.
//
// # Messages
//
// An [Assembler] follows the frames of one direction (§5.4): a message
// is a text or binary frame and its continuation frames, control frames
// may come between them, and a message has a size limit. A [UTF8] checks a
// text message as it arrives, piece by piece, and fails at the first byte
// that cannot be UTF-8 (§8.1). [ParseClose] and [AppendClose] read and
// write a close frame's code and reason (§5.5.1, §7.4).
//
// # Handshake
//
// [AcceptKey] and [AppendAcceptKey] compute Sec-WebSocket-Accept from
// Sec-WebSocket-Key (§4.2.2), [ValidKey] checks the key;
// [NextExtension], [ParseDeflate] and [FirstDeflateOffer] read a
// Sec-WebSocket-Extensions list and its permessage-deflate offers, and
// [AppendDeflate] writes one. They work on header values: the HTTP
// request and response are the caller's.
//
// # Zero copy and lifetimes
//
// The slices this package returns (a close reason, an extension's name
// and parameters) alias the caller's buffer and are valid while it is
// unchanged. A frame's payload is the caller's to read, at the offset
// ParseHeader returns.
//
// # Errors and strictness
//
// Every violation of a frame or message rule is an [*Error] carrying the
// close code to fail the connection with (§7.1.7, §7.4.1): 1002 for a
// protocol error, 1007 for text that is not UTF-8, 1009 for a frame or
// message over its limit. The errors are package-level values, so a
// failed parse does not allocate, and each Reason fits in a close frame.
//
// The codec applies every rule of RFC 6455 that a receiver can check, and
// one the RFC puts on senders only: a payload length not in its minimal
// encoding (§5.2, "the minimal number of bytes MUST be used") fails the
// connection with 1002. No browser or common library sends one, the check
// is one comparison, and a single encoding per length leaves no room for
// two parsers on a path to read a frame differently. gorilla, gobwas and
// coder/websocket accept such lengths; if real traffic turns out to send
// them, the rule is the one line to relax.
//
// # What is left to the connection
//
// The connection keeps the rest: reading the payload and unmasking it,
// replying to ping and close, the close handshake and its timeouts,
// inflating compressed messages (and bounding what that yields), choosing
// masking keys, and the order in which its own frames are written.
package ws
