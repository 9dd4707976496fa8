// Package h2 is hotpath's HTTP/2 codec: frames (RFC 9113 §4, §6), HPACK
// (RFC 7541) and the field rules of RFC 9113 §8, on byte slices only. It
// opens no sockets, starts no goroutines and, once its buffers have grown,
// allocates nothing.
//
// # Frames
//
// [ReadFrame] reads one frame from the front of a buffer, checks it
// against the rules of its type (stream identifier zero or not, payload
// length, padding, SETTINGS value ranges, the frame size limit) and
// returns a [Frame] whose accessors cannot fail. The Append functions
// write frames, as strconv's Append functions do. [ClientPreface] is the
// client's connection preface.
//
// # HPACK
//
// A [Decoder] decodes field blocks and an [Encoder] encodes them; each
// keeps one direction's dynamic table for the life of the connection. The
// decoder bounds a block's decoded size (MaxHeaderListSize) and each
// string literal (MaxStringLength). A block a little over the list limit
// is read to its end, so that the table stays in step, and fails the
// stream (ErrHeaderListTooLarge; a server may answer 431); an HPACK bomb,
// a block that decodes to more than four times the limit, ends the
// connection (ErrHPACKBomb) having copied nothing past the limit.
//
// # Validation
//
// A [RequestValidator] checks a request's header or trailer block against
// RFC 9113 §8 as it is decoded: pseudo-header fields, lowercase names,
// connection-specific fields, TE, field values and content-length; and
// [CheckContentLength] checks DATA against content-length.
//
// # Zero copy and lifetimes
//
// A [Frame]'s payload and every slice its accessors return point into the
// buffer given to ReadFrame, valid while that buffer is unchanged. A
// decoded [Field]'s name and value point into the block given to the
// Decoder or into a buffer the Decoder owns; they are valid until the
// Decoder's next method call, and must not be modified. A server that
// keeps a request's fields longer (they live as long as the stream)
// copies them.
//
// # Errors and strictness
//
// Every violation is an [*Error] that says whether it is a connection
// error (answer GOAWAY, close) or a stream error (answer RST_STREAM, go
// on), with the RFC 9113 §7 code and a reason that cites the rule. The
// errors are package-level values: a failed parse does not allocate.
//
// The codec follows the RFCs' MUSTs as x/net/http2 reads them, and is
// stricter where x/net leaves a MUST to the reader: it rejects a block
// that lacks the dynamic table size update a lowered
// SETTINGS_HEADER_TABLE_SIZE calls for, and a size update after a field
// even while the table is empty (both RFC 7541 §4.2), TE other than
// "trailers", and connection-specific fields (RFC 9113 §8.2.2), which
// net/http's HTTP/2 server lets through (h2spec 8.1.2.2). A frame larger
// than SETTINGS_MAX_FRAME_SIZE is always a connection error, which §4.2
// allows. Where x/net departs from the RFCs, the codec follows the RFCs: a
// PRIORITY frame of the wrong length is a stream error (§6.3; x/net ends
// the connection), and a block may begin with two size updates (RFC 7541
// §4.2; x/net refuses the second once its table holds entries). Frames of
// unknown type, PRIORITY_UPDATE (RFC 9218) among them, are returned for
// the caller to ignore.
//
// # What is left to the connection
//
// The codec knows one frame or one block at a time. The connection that
// uses it keeps the rest: stream states and which frames each allows
// (§5.1), that CONTINUATION frames follow their HEADERS without
// interruption (§6.10) and the joining of their fragments, stream
// identifier order and concurrency limits, flow-control windows (§6.9),
// settings acknowledgement and timeouts, refusing PUSH_PROMISE from a
// client (§8.4), and the limits on how often a peer may send PING,
// SETTINGS, RST_STREAM or empty frames.
package h2
