// Package websocket is hotpath's WebSocket connection (RFC 6455): the
// server side from any http.Handler ([Accept], on net/http's server and
// on hotpath's server.Server), a client ([Dial], ws:// and wss://), and
// the blocking, context-aware API that gorilla/websocket and
// coder/websocket users know: [Conn.Read] and [Conn.Reader] for whole
// or streamed messages, [Conn.Write] and [Conn.Writer], [Conn.Ping],
// [Conn.Close]. The frames are hotpath's codec's, package wire/ws.
//
//	func chat(w http.ResponseWriter, r *http.Request) {
//		c, err := websocket.Accept(w, r, nil) // answered 4xx if not a handshake
//		if err != nil {
//			return
//		}
//		defer c.CloseNow()
//		for {
//			typ, msg, err := c.Read(r.Context())
//			if err != nil {
//				return // a *CloseError once the peer closed
//			}
//			if err := c.Write(r.Context(), typ, msg); err != nil {
//				return
//			}
//		}
//	}
//
// # Safe writes
//
// Every write method is safe from any number of goroutines and never
// panics: a message's frames never interleave with another's (a message
// streamed through a Writer holds the writer until its Close), control
// frames go between a streamed message's frames, and a write after the
// connection closed returns an error wrapping net.ErrClosed.
//
// # What RFC 6455 asks of the connection
//
// Fragmented messages are assembled with control frames between their
// fragments; a ping is answered with a pong carrying its payload; text
// is checked as UTF-8 as it arrives and fails the connection with 1007
// at the first bad byte; a rule the peer breaks (§5.2–§5.5) fails it
// with 1002, a frame or message over its limit with 1009, before the
// payload is read. A close frame from the peer is answered with its code
// (1000 for one without) and Read returns a [*CloseError]; [Conn.Close]
// sends one and waits, bounded, for the answer. [CloseStatus] reads the
// code of any of these errors, with 1005 for a close frame without a
// code and 1006 for a connection that ended without one.
//
// # Limits and defaults
//
// A message may be 16 MiB ([DefaultReadLimit]) and a frame 16 MiB
// ([DefaultMaxFrame]): Autobahn's largest messages fit, and a message's
// memory follows the bytes that arrive, not a length a header announces.
// Keepalive pings ([Options].PingInterval) and an idle timeout
// (IdleTimeout: a connection silent that long is sent 1001 and closed,
// and reports 1006) are off by default, as on net/http's server, where
// a hijacked connection has no timeout.
//
// # Two ways to read
//
// The blocking API (Read, Reader) is a goroutine per connection, waiting
// in Read. The event API is [Conn.Start] with an [EventHandler]: the
// http.Handler accepts, calls Start and returns; each message then goes
// to OnMessage and the end to OnClose, on the package's goroutines, only
// while data arrives. Between messages, with nothing buffered, the
// connection parks: its socket waits in a readiness set (epoll, shared
// with nothing else: the server's idle HTTP connections use the same
// machinery, internal/park), with no goroutine and no read buffer. On
// net/http's server and hotpath's alike: both hand the socket over at
// Hijack. Where a connection cannot park (no readiness sets on the
// platform, a net.Conn that is not a socket), a goroutine reads it and
// the handler sees the same events.
//
// # Memory
//
// An idle Conn holds its struct (448 bytes: its locks make a channel only
// for a goroutine that must wait) and the net.Conn; an event connection
// also its place in a readiness set (96 bytes), and no buffer. With the
// blocking API, a 128-byte buffer for the waiting Read, the goroutine
// waiting in it, and whatever its handler holds (on hotpath's server the
// request's working state, but not its buffers, which go back at
// Hijack). A 4 KiB buffer comes from a pool while messages flow and goes
// back when the input drains at a message boundary. A hijacked
// connection's bufio buffers are not kept.
//
// # Compression
//
// permessage-deflate (RFC 7692) is off by default: it costs CPU on both
// ends. With [AcceptOptions].Compression a server accepts the first offer
// it can, answering with server_no_context_takeover and
// client_no_context_takeover, unless told to keep a context the client
// allows: [AcceptOptions].ClientContextTakeover (the client compresses
// with the context of its earlier messages; the server keeps the last
// 32 KiB it inflated, per connection, to read the next) and
// [AcceptOptions].ServerContextTakeover (the server compresses each
// message after the last 4 KiB it sent compressed, kept per connection
// and primed into a pooled compressor); with [DialOptions].Compression a client
// offers both, and client_max_window_bits ([DialOptions].ContextTakeover
// offers context takeover both ways instead, as browsers do, and keeps
// the same two windows). A window the peer asks for
// (server_max_window_bits, client_max_window_bits) is kept by compressing
// a message in pieces of that size. A connection keeps no compressor or
// decompressor between messages (at most the context windows above):
// they come from pools for one message. [Conn.Write] compresses a message of
// at least [Options].CompressionThreshold bytes (128 by default) when
// that makes it shorter; [Conn.Writer] and [Conn.WritePrepared] send
// uncompressed, as the RFC allows per message. A compressed message is
// read whole and inflated at most to ReadLimit (1009 past it: a small
// message that inflates hugely costs the limit, no more), then checked
// as UTF-8 if text (1007).
//
// # HTTP/2
//
// Over HTTP/2 the handshake is RFC 8441's extended CONNECT, which
// browsers send once a page came over HTTP/2 and the server allows it
// (server.Server.ExtendedConnect; GODEBUG=http2xconnect=1 for net/http's
// server). [Accept] and [AcceptNative] take it: the Conn is the
// request's stream, which lives while the handler runs, so the handler
// returns only when it is done with the Conn ([Conn.Start] blocks there
// until the connection ends). [Dial] speaks HTTP/1.1.
//
// # Sending without waiting
//
// [Conn.Write] waits for the socket. [Conn.Send] and [Conn.SendPrepared]
// queue the message and return; a goroutine of the connection's, which
// runs only while the queue holds messages, writes them in order. The
// queue is bounded ([Options].SendQueue, 256 KiB by default): when full,
// Send waits for room or, with SendQueueFull set to [SendFail], returns
// [ErrSendQueueFull] at once, so a broadcast need not wait for its
// slowest reader.
package websocket
