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
// # Connection state
//
// Beside the codec, the package keeps the small pieces of a server
// connection's state that the RFC defines exactly, each a value the
// connection owns and calls as frames arrive:
//
//   - An [Assembler] joins a HEADERS or PUSH_PROMISE frame and its
//     CONTINUATION frames into one field block (§4.3, §6.10): nothing may
//     come between them, and the block's compressed size and number of
//     CONTINUATION frames are capped, so a CONTINUATION flood
//     (CVE-2024-27316) ends the connection (ENHANCE_YOUR_CALM) with
//     bounded memory. A block in one frame is returned without copying.
//   - A [Window] is a flow-control window (§6.9) on either side, with the
//     2^31-1 limit, zero increments and SETTINGS_INITIAL_WINDOW_SIZE
//     changes (§6.9.2); [SendLimit] sizes the next DATA frame; an [Inflow]
//     is a receive window that returns credit in WINDOW_UPDATEs of half a
//     window.
//   - [StreamState] is a stream's state on a server that never pushes
//     (§5.1: the reserved states cannot occur), with the transitions and
//     errors of every frame received or sent; [ServerStreams] applies the
//     client stream identifier rules (§5.1.1) and the concurrency limit
//     (§5.1.2, REFUSED_STREAM) and answers for streams the connection no
//     longer holds; a [ResetCounter] bounds rapid reset (CVE-2023-44487).
//
// # The client's side
//
// A client keeps its own pieces, as the HTTP/2 client and the load
// generator do on their connections:
//
//   - [ClientStreams] gives out the client's stream identifiers (§5.1.1)
//     and slots under the server's SETTINGS_MAX_CONCURRENT_STREAMS
//     (§5.1.2), records GOAWAY's last stream (§6.8: which streams were
//     not processed and may be retried) and judges frames for streams the
//     connection no longer holds (idle: a connection error; closed:
//     discarded).
//   - [PeerSettings] is the server's SETTINGS, applied in one place:
//     the streams' send windows re-based on an INITIAL_WINDOW_SIZE change
//     (§6.9.2), the encoder's table size, the frame size, the header-list
//     cap and the concurrency limit; and the check that the server's
//     preface is SETTINGS (§3.4).
//   - [Encoder.AppendRequestPseudo], [Encoder.AppendRequestField] and
//     [Encoder.AppendContentLength] encode a request's header block with
//     the rules of §8.2.2 and §8.3.1.
//
// # What is left to the connection
//
// The connection keeps the rest: its table of streams and when it
// forgets a closed one, settings acknowledgement and timeouts, the write
// schedule, and the limits on how often a peer may send PING, SETTINGS,
// PRIORITY or empty frames.
package h2
