// Package server is hotpath's HTTP server: an HTTP/1.1 engine and an
// HTTP/2 engine behind one [Server] with net/http's http.Server API, on
// Go's netpoller. Requests are parsed with [wire] and [wire/h2] straight
// out of per-connection buffers; pipelined HTTP/1.1 responses leave in one
// write per batch.
//
// A [Server] serves either of two handlers:
//
//   - Handler, any http.Handler (ServeMux, chi, middleware), run inline on
//     the connection's goroutine with the *http.Request, its URL and
//     Header, and the ResponseWriter reused per connection. Every string a
//     handler can keep is a copy, never a view of a reused buffer; the
//     objects themselves must not be used after the handler returns (the
//     same rule net/http states). A ResponseWriter a goroutine kept past
//     its handler's return reaches no other request, as on net/http: its
//     writes, Flush and Hijack fail, and the rest does nothing.
//   - Native, a func(*[Ctx]): the Ctx is reused for every request on a
//     connection, its request accessors return slices into the read
//     buffer, and its response-header API stores values in reused
//     per-connection slots, so a request costs no allocation in steady
//     state.
//
// ServeTLS runs HTTP/1.1 over TLS on the same engine and serves
// connections that negotiate h2 on hotpath's own HTTP/2 engine, built on
// wire/h2; Protocols with UnencryptedHTTP2 does the same for cleartext
// HTTP/2 with prior knowledge. (HTTP2HandOff hands them to net/http's HTTP/2 server
// instead, for comparison.) The HTTP/2 engine serves both handlers: one
// goroutine reads frames, handlers run on worker goroutines the
// connection reuses, and one writer sends the frames of all streams
// together. A native stream's Ctx is recycled by its connection like an
// HTTP/1.1 connection's, so a native request allocates nothing there
// either; an http.Handler request pays for the *http.Request net/http
// would build too. Allocation counts per request are held by tests and
// measured in bench/README.md.
//
// The files say which engine they belong to: h1_*.go and h2_*.go, which
// meet only in shared files (Server, Ctx, the response record, the
// adapter); handoff.go is the net/http hand-off. docs/architecture.md
// draws a request's path through them.
//
// # Lifetimes
//
// Every []byte a Ctx returns (method, path, header values, body chunks) is
// valid only until the handler returns: the buffer under it is reused for
// the next request. Copy what you keep (string(b) copies). The Ctx itself
// must not be used after the handler returns or from another goroutine.
//
// # Memory
//
// A connection holds its 4 KiB read and write buffers only while it has a
// request in hand. On Linux and other Unix systems an idle keep-alive
// connection waits for readability without any buffer (the buffers go back
// to a shared pool); an idle TLS connection waits for one byte, then takes
// them. An HTTP/2 connection idle for 100 ms gives back its read buffer,
// its idle handler goroutines, its write buffers and its writer goroutine
// the same way (a write starts a writer again), and reads with a small
// buffer until a read fills it.
//
// On Linux an HTTP/1.1 keep-alive connection (cleartext or TLS) that has
// been idle for 20 to 30 ms (a sweep of the Server's ends the wait), with
// nothing buffered and nothing in progress, parks: its goroutine returns,
// its working state (the Ctx and the buffers' bookkeeping) goes back to a
// pool, and the socket waits in an epoll set of the Server's. What it then
// costs is a 160-byte record besides what Go's net package keeps per socket
// (about 0.8 KB in Go 1.26, the netpoller's descriptor alone 512 bytes):
// 1.5 KB per idle connection at 18,000 connections, where a goroutine per
// connection costs 7.8 KB (bench/README.md, "Idle table"). Readable, it is
// served again on another goroutine, with a new http.Handler adapter;
// IdleTimeout, Shutdown, ConnState (still
// StateIdle while parked), MaxRequestsPerConn and the connection's context
// values are as for a waiting connection. A client that sends its next
// request within 20 ms never finds its connection parked. An HTTP/2
// connection of hotpath's engine (h2c or TLS) parks the same way once it is
// idle past its 100 ms trim: its reader goroutine returns too, and a
// request, a PING or the client's FIN wakes it; IdleTimeout, Shutdown
// (GOAWAY), Close and ConnState are as for a waiting one. The environment
// variable HOTPATH_IDLEPARK=off turns parking off for the process (to
// compare, or as an escape hatch).
//
// # Big bodies
//
// An http.Handler's large Write goes to the socket with the buffered head
// in one writev; a native handler's, on TCP, goes in a write of its own
// after the head, without its buffer escaping to the heap. io.Copy of a
// file into a response with a declared length (http.FileServer,
// http.ServeContent, Ctx.SendFile) goes through sendfile, uncorked (with
// the client on another core, TCP_CORK cost throughput over loopback and
// gained nothing over a real link's MTU: see bench/README). A large read of a request body (and
// io.Copy from one, on either API) goes straight from the socket into the
// reader's slice; during a fast upload with a declared length, a receive
// low-water mark (SO_RCVLOWAT, Linux) wakes the reader per batch of bytes
// rather than per segment, and is dropped when the client slows or
// pauses, near the body's end, and before any other read. Over cleartext HTTP/2 on Linux, where a file's bytes
// must be cut into DATA frames, io.Copy of a file of 1 MiB or more maps
// it a window at a time and hands the frame headers and the mapped pages
// to writev, so the kernel copies each byte once (over TLS the file is
// copied). A stream maps no more than its flow-control windows let it
// send (nothing while they are shut), a connection maps for 8 streams at
// most and a server for 1,024 (the others copy), and a file truncated
// during the transfer resets that stream alone.
//
// # HTTP/2 under attack
//
// A connection runs at most 250 handlers at once, its
// SETTINGS_MAX_CONCURRENT_STREAMS: a stream the client resets, or the
// server resets for a frame that is a stream error, keeps its place until
// its handler returns, as net/http's do, and a new stream past the limit
// is refused (REFUSED_STREAM, which clients retry). So HTTP/2 runs at
// most 250 handlers per live connection, however fast a client opens and
// resets streams (Rapid Reset, MadeYouReset). More than 1,000 client
// resets in 10 s end the connection, and so do more than 100 resets the
// server sends with an error code (refused streams, frames on closed
// streams, bad WINDOW_UPDATEs and PRIORITYs: MadeYouReset,
// CVE-2025-8671); so do 1,000 frames in 10 s that carry no request (PING,
// SETTINGS, PRIORITY, empty DATA, tiny WINDOW_UPDATEs), a header block
// past 32 CONTINUATION frames, and a client that does not read what its
// frames call for. Frames on a stream the server refused are dropped,
// as RFC 9113 §5.1 asks, so an honest client's body or trailers in
// flight cost it nothing. Request trailers are held to 500 fields
// (MaxHeaderCount) and 16 KiB, as on HTTP/1.1: past them the stream is
// reset and the handler's body read fails naming the limit. Nothing in the engine
// runs unless a byte arrives, a byte can leave or a timer fires: a
// stream waiting for flow-control window sleeps until a WINDOW_UPDATE, a
// reset or WriteStallTimeout; a connection with nothing in progress is
// closed after IdleTimeout, whatever part of a frame it holds.
//
// # Handlers past their connection
//
// When a connection ends, its handlers run on until they return, as on
// net/http: one that ignores its context may run for seconds. A client
// that starts slow handlers, closes the connection (or makes the server
// cut it) and reconnects would start any number of them, so the server
// counts them per client address until they return: past
// MaxOrphanedHandlersPerClient (1,000) of them, or past
// MaxOrphanedHandlers (10,000) server-wide for a client that has any, the
// client's new requests are refused (REFUSED_STREAM; 503 with
// Retry-After on HTTP/1.1) until some return. Work on live connections
// is never refused. What a client can still cost: 250 handlers per live
// HTTP/2 connection and one per HTTP/1.1 connection (bound those with
// the listener, as nginx's limit_conn does), plus its orphans. See
// docs/security.md for the attacks measured against both servers.
//
// # Endings
//
// A connection closed with request bytes possibly unread (a body the
// handler ignored, a limit hit) is half-closed and drained for a bounded
// time first, so the client reads the response rather than a reset.
// Shutdown answers requests in progress with "Connection: close" and gives
// idle keep-alive connections a short quiet period for a request already
// on its way.
//
// # Defaults
//
// A zero Server is safe to expose, and lets healthy traffic through:
// ReadHeaderTimeout stops slowloris clients;
// ReadStallTimeout and WriteStallTimeout count time without progress, so
// they cut a client that stops sending or reading but never a stream that
// keeps moving; IdleTimeout outlasts clients' own idle timeouts (so the
// client, not the server, closes an idle connection, and no request races
// the server's close); heads are capped at 64 KiB in 500 fields. An http.Handler server
// has no body limit, as net/http; a Native one has 4 MiB. ReadTimeout and
// WriteTimeout, off by default, keep net/http's absolute meaning. See the
// field docs on [Server].
//
// # Panics
//
// A panic in an http.Handler aborts the response as net/http does: the
// connection closes without a response, or in the middle of the body if
// the head went out (http.ErrAbortHandler is the quiet way to ask for
// it). A panic in a Native handler is answered with a complete 500 when
// nothing was sent yet. Both are logged to ErrorLog, except
// http.ErrAbortHandler. A handler that ends its goroutine instead of
// returning (runtime.Goexit, as t.Fatal in a test's handler) has its
// response aborted on both APIs, unlogged: over HTTP/2 its stream is reset
// and the connection serves on.
package server
