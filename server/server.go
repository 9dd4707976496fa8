package server

import (
	"context"
	"crypto/tls"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire"
)

// Server is an HTTP/1.1 and HTTP/2 server with http.Server's API: every
// field net/http users set means what it means there (BaseContext,
// ConnContext, ConnState, TLSNextProto, Protocols, HTTP2,
// RegisterOnShutdown, SetKeepAlivesEnabled, ErrServerClosed as
// http.ErrServerClosed, a nil Handler serving http.DefaultServeMux), so
// that replacing http.Server with server.Server is the only change a
// service needs. The zero value of every field is a safe default. Set
// Handler, or Native for the native API:
//
//	srv := &server.Server{Addr: ":8080", Native: func(c *server.Ctx) {
//		c.SetContentType("text/plain")
//		c.WriteString("Hello, World!")
//	}}
//	log.Fatal(srv.ListenAndServe())
type Server struct {
	// Addr is the TCP address ListenAndServe listens on; ":http" if empty.
	Addr string

	// Native handles every request with hotpath's native API: the Ctx is
	// reused across the connection's requests and allocates nothing.
	Native func(*Ctx)

	// Handler serves every request when Native is nil: any http.Handler
	// (ServeMux, chi, middleware) runs inline on the connection's
	// goroutine, with the *http.Request, its URL and Header, and the
	// ResponseWriter reused from request to request (see Handler's notes in
	// the package doc). Set one of Native and Handler.
	Handler http.Handler

	// ReadHeaderTimeout bounds the time from the first byte of a request
	// to the end of its head; for a connection's first request, from the
	// accept (over TLS, from the handshake's end), as net/http's. It stops
	// slowloris clients. Default 10 s; negative disables.
	ReadHeaderTimeout time.Duration
	// ReadStallTimeout bounds the time a request body may make no
	// progress: a read of the body that waits this long for a byte cuts
	// the connection, however long the upload has run so far (nginx's
	// client_body_timeout). It stops a client that stops sending, and
	// lets a slow but moving upload through. Default 60 s; negative
	// disables.
	ReadStallTimeout time.Duration
	// WriteStallTimeout bounds the time a response may make no progress:
	// once none of its bytes has gone to the client's socket for this
	// long, the connection is cut (nginx's send_timeout; on HTTP/2, the
	// stream, or the connection when its writer is the one waiting). It
	// stops a client that stops reading, and never cuts a stream that
	// keeps moving (server-sent events, a long download); time the
	// handler spends with nothing to write does not count. On HTTP/1.1 a
	// waiting write is checked eight times a period: a client that stops
	// reading is cut between one and one and an eighth periods after the
	// socket last took a byte of the response, within about one and a
	// quarter periods of its last read (75 s with the default; with
	// settings under a second, TCP's own timers, 200 ms and up, may add
	// to that). On HTTP/2, and over TLS, where a write that timed out
	// cannot be resumed, within two periods. Default 60 s; negative
	// disables.
	WriteStallTimeout time.Duration
	// ReadTimeout, when set, bounds reading a whole request, head and
	// body, from its first byte, moving or not: net/http's meaning. Zero
	// (the default) sets no such bound; ReadHeaderTimeout and
	// ReadStallTimeout protect the server.
	ReadTimeout time.Duration
	// WriteTimeout, when set, bounds the whole response, from the end of
	// the request head, moving or not: net/http's meaning, which cuts a
	// long stream. Zero (the default) sets no such bound;
	// WriteStallTimeout protects the server.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection. Default 120 s: longer than the 90 s idle timeout of Go's
	// and most clients, so the client, not the server, closes an idle
	// connection and never races a request against our close. Negative
	// disables.
	//
	// Deadlines are renewed lazily, to keep clock readings and timer
	// updates off the per-request path: IdleTimeout fires between 7/8 of
	// its value and its value; ReadStallTimeout, armed from the time the
	// request head arrived, is renewed when it expires on a read that is
	// still moving, so it cuts a client after one to two of its periods
	// without progress; WriteStallTimeout is checked more often (see its
	// doc). ReadHeaderTimeout, ReadTimeout and WriteTimeout are exact.
	//
	// A handler that sets its own deadline through
	// http.ResponseController (or Ctx.SetWriteDeadline) replaces these
	// timeouts for the rest of its request.
	IdleTimeout time.Duration

	// MaxRequestLineBytes caps the request line; longer gets 414.
	// Default 8 KiB, as nginx and Apache.
	MaxRequestLineBytes int
	// MaxHeaderBytes caps the request head (request line and fields);
	// larger gets 431. Default 64 KiB: above what browsers and proxies
	// send with large cookie sets and tracing headers (nginx accepts up
	// to 32 KiB by default, AWS ALB 64 KiB), far below net/http's 1 MiB.
	MaxHeaderBytes int
	// MaxHeaderCount caps the number of header fields; more gets 431.
	// Default 500 (net/http has no count limit; real requests carry tens).
	MaxHeaderCount int
	// MaxHeaderValueCount is net/http's name (from Go 1.27) for the same
	// cap, with the same default of 500: used when MaxHeaderCount is
	// zero. hotpath counts header lines; net/http also counts each name
	// a Trailer line declares.
	MaxHeaderValueCount int
	// MaxRequestBodyBytes caps a request body; larger gets 413 with a
	// reason, and the connection lingers to discard the rest so the
	// client reads the 413 rather than a reset. A declared Content-Length
	// is checked before the handler runs, a chunked body as it is read.
	// Default for Handler: no limit, as net/http (handlers bound their
	// bodies with http.MaxBytesReader or middleware.BodyLimit); for
	// Native: 4 MiB. Negative means no limit.
	MaxRequestBodyBytes int64
	// MaxRequestsPerConn closes a connection (with "Connection: close")
	// after this many requests. Default 0: no limit.
	MaxRequestsPerConn int

	// MaxOrphanedHandlersPerClient bounds, per client address, the
	// handlers still running after their connection ended ("orphans": a
	// handler that ignores its context runs on once its client has gone,
	// as on net/http). A client with this many gets no new handler until
	// some return: its new HTTP/2 streams are refused (REFUSED_STREAM,
	// which clients retry) and its HTTP/1.1 requests answered 503 with
	// Retry-After. Without it, a client that starts slow handlers, closes
	// the connection (or makes the server cut it, as MadeYouReset does)
	// and reconnects, runs any number of them. Handlers on live
	// connections never count: they are bounded per connection (one on
	// HTTP/1.1, MAX_CONCURRENT_STREAMS on HTTP/2). A client is its IP
	// address, an IPv6 one its /64; behind a reverse proxy every client is
	// the proxy's address, so a proxy that cuts connections to handlers
	// that ignore their context shares one budget. Default 1,000
	// (DefaultMaxOrphanedHandlersPerClient); negative disables.
	//
	// HTTP/1.1 handlers are not counted: one keeps its connection, and
	// the connection's descriptor, until it returns, so the process's
	// descriptor limit bounds them (a client over its bound is refused
	// on both protocols). Nor are those of net/http's HTTP/2 server with
	// HTTP2HandOff.
	MaxOrphanedHandlersPerClient int
	// MaxOrphanedHandlers bounds the orphans server-wide: past it, any
	// client that has one is refused as above, and clients with none are
	// served. Default 10,000 (DefaultMaxOrphanedHandlers); negative
	// disables. See the package doc on attacks for what a client can
	// still cost.
	MaxOrphanedHandlers int

	// TLSConfig configures ServeTLS and ListenAndServeTLS; it is cloned.
	// NextProtos defaults to h2 and http/1.1 (http/1.1 alone for a
	// Native server with HTTP2HandOff).
	TLSConfig *tls.Config

	// HTTP2HandOff hands HTTP/2 connections (TLS with ALPN h2, and h2c
	// when Protocols has UnencryptedHTTP2) to net/http's HTTP/2 server running Handler, with
	// hotpath's limits around it, instead of serving them on hotpath's
	// own HTTP/2 engine, the default. It is there to compare the two, or
	// to fall back; a Native server then speaks HTTP/1.1 only.
	//
	// hotpath's own engine serves both Handler and Native with the limits
	// and stall timeouts of HTTP/1.1 (MaxHeaderBytes, MaxHeaderCount,
	// MaxRequestBodyBytes, Read/WriteStallTimeout per stream), plus
	// ReadHeaderTimeout for the preface and the SETTINGS acknowledgment,
	// IdleTimeout between streams, and ReadTimeout and WriteTimeout per
	// stream as net/http's HTTP/2 does; it bounds the known HTTP/2 attacks
	// (rapid reset, CONTINUATION and control-frame floods, HPACK bombs).
	// Its connections report to ConnState as net/http's HTTP/2 ones do:
	// active while a handler runs, idle between, closed at the end (the
	// hand-off's report StateHijacked).
	HTTP2HandOff bool

	// ErrorLog receives handler panics and accept errors. If nil, the log
	// package's standard logger is used.
	ErrorLog *log.Logger

	// ConnState, if set, is told when a connection changes state. It is
	// called on the connection's goroutine and must be quick. Its type is
	// net/http's: the same func serves both servers.
	ConnState func(net.Conn, http.ConnState)

	// BaseContext, if set, returns the base context of the requests on a
	// listener's connections, as net/http's: the context of every
	// http.Handler request derives from it (with http.ServerContextKey
	// set, then ConnContext applied, then http.LocalAddrContextKey). It
	// must not return nil. The native API's Ctx has no context.
	BaseContext func(net.Listener) context.Context
	// ConnContext, if set, modifies the context of a new connection's
	// requests, as net/http's; it must not return nil.
	ConnContext func(ctx context.Context, c net.Conn) context.Context

	// TLSNextProto, as net/http's: set to a non-nil empty map, it turns
	// HTTP/2 off over TLS (ALPN offers http/1.1 alone). A function under
	// another protocol name takes over the TLS connections that
	// negotiate it (the name is added to TLSConfig.NextProtos), called
	// with an http.Server mirroring this one's settings and the Handler.
	// An "h2" entry is not called: HTTP/2 is served by hotpath's engine
	// (or net/http's, with HTTP2HandOff).
	TLSNextProto map[string]func(*http.Server, *tls.Conn, http.Handler)

	// Protocols, if set, is the set of protocols the server accepts, as
	// net/http's: HTTP1, HTTP2 (over TLS) and UnencryptedHTTP2 (cleartext
	// HTTP/2 to clients that open a plain connection with the HTTP/2
	// preface: prior knowledge, RFC 9113 §3.3; off unless set, for a
	// proxy in front that does not expect it could be confused). Nil
	// means HTTP/1.1 and HTTP/2 over TLS. To add h2c:
	//
	//	var p http.Protocols
	//	p.SetHTTP1(true)
	//	p.SetHTTP2(true)
	//	p.SetUnencryptedHTTP2(true)
	//	srv.Protocols = &p
	Protocols *http.Protocols
	// HTTP2 configures HTTP/2, as net/http's. hotpath's engine applies
	// MaxConcurrentStreams (250 by default: the handlers a connection runs
	// at once; see the package doc on attacks), MaxReceiveBufferPerConnection and
	// MaxReceiveBufferPerStream (the receive windows it grants, 4 MiB and
	// 1 MiB by default); the other fields are net/http's engine's and
	// apply only with HTTP2HandOff.
	HTTP2 *http.HTTP2Config

	// DisableGeneralOptionsHandler, if true, passes "OPTIONS *" requests
	// to the Handler, as net/http's; otherwise the server answers them
	// (200, Content-Length: 0).
	DisableGeneralOptionsHandler bool

	// DisableClientPriority is net/http's (from Go 1.27): it turns off
	// scheduling HTTP/2 responses by the client's RFC 9218 priorities.
	// hotpath's HTTP/2 engine never schedules by them (streams share the
	// connection as their frames are ready), so it has no effect, as if
	// always set; with HTTP2HandOff, net/http's HTTP/2 server keeps its
	// default.
	DisableClientPriority bool

	// ExtendedConnect has hotpath's HTTP/2 engine accept RFC 8441's
	// extended CONNECT (it sends SETTINGS_ENABLE_CONNECT_PROTOCOL), so
	// that a client may open a WebSocket (websocket.Accept) or another
	// protocol over an HTTP/2 stream, as browsers do once a page came
	// over HTTP/2. A handler sees such a request as net/http's HTTP/2
	// server shows it with GODEBUG=http2xconnect=1 (which turns this on
	// too): Method CONNECT, the URL's path from :path, the protocol in
	// Header[":protocol"] (RequestHeader(":protocol") on the native API).
	// Its body is what the client sends on the stream for as long as the
	// stream lives: MaxRequestBodyBytes does not apply to it. Off by
	// default, as in net/http: a browser told it may sends every
	// WebSocket to the origin over HTTP/2, which a handler that upgrades
	// only HTTP/1.1 connections (gorilla's Upgrader) refuses. With
	// HTTP2HandOff, net/http's engine decides (GODEBUG).
	ExtendedConnect bool

	mu        sync.Mutex
	listeners map[*net.Listener]struct{}
	conns     map[*conn]struct{}
	shutting  atomic.Bool
	connWG    sync.WaitGroup
	cfg       config // resolved once by the first Serve
	cfgOnce   sync.Once
	// httpServer is what http.Handlers find under http.ServerContextKey.
	httpServer *http.Server
	tlsConfig  *tls.Config      // set by ServeTLS
	h2srv      *handoffListener // started by the first connection that negotiates h2
	h2csrv     *handoffListener // started by the first h2c connection
	// h2conns maps each connection of the HTTP/2 engine to whether it
	// registered after Shutdown began (registerH2).
	h2conns map[*h2Conn]bool
	// closedAll: Close ran; a connection still in its TLS handshake or
	// h2c preface then is refused, not served (registerH2).
	closedAll    bool
	h2Mapped     atomic.Int64 // HTTP/2 streams sending from a mapped file (h2_file_linux.go)
	onShutdown   []func()     // RegisterOnShutdown, under mu
	noKeepAlives atomic.Bool  // SetKeepAlivesEnabled(false)
	orphans      orphanLedger // handlers past their connection, per client (orphans.go)
	// testHookH2Admitted, set by tests only, runs in the HTTP/2
	// engine's handleBlock between admitting a new stream and starting
	// it, with no lock held.
	testHookH2Admitted func(*h2Conn)

	// Idle connections park in these readiness sets (h1_park.go,
	// h2_park.go); none where parking is off. works pools the working
	// state parked HTTP/1.1 connections give back.
	parks    []*park.Set
	parkNext atomic.Uint32
	works    sync.Pool
	resumers *park.Resumers[parker] // run woken connections (park.go)
	parkQuit chan struct{}          // closed when the Server closes: resumers end
	quitOnce sync.Once
	// parksClosed: closeParks ran (under mu); resolve makes no sets after.
	parksClosed bool
	grace       waitSweep // ends read waits past their time: HTTP/1.1's grace (h1_grace.go), HTTP/2's quiet reads (h2_quiet.go)
	noIdlePark  bool      // tests: this Server's connections never park (as HOTPATH_IDLEPARK=off)
}

// ownH2 reports whether HTTP/2 is served by hotpath's own engine (not the hand-off).
func (s *Server) ownH2() bool { return !s.HTTP2HandOff }

// ConnState is the state of a connection, as reported to Server.ConnState:
// net/http's type, so that one callback serves both servers.
type ConnState = http.ConnState

// The states a connection moves through, net/http's: New once accepted,
// Active while it has a request in hand, Idle between keep-alive
// requests, Hijacked when a handler took it over (final: the server no
// longer tracks it), Closed at the end.
const (
	StateNew      = http.StateNew
	StateActive   = http.StateActive
	StateIdle     = http.StateIdle
	StateHijacked = http.StateHijacked
	StateClosed   = http.StateClosed
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close. It is net/http's value, so that the usual
// errors.Is(err, http.ErrServerClosed) holds after the swap.
var ErrServerClosed = http.ErrServerClosed

// Defaults for the Server fields (see their docs).
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadStallTimeout  = 60 * time.Second
	DefaultWriteStallTimeout = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = wire.DefaultMaxHeaderBytes
	DefaultMaxHeaderCount    = wire.DefaultMaxHeaders
	// DefaultNativeMaxRequestBodyBytes is the body limit of a Native
	// server; an http.Handler server has none by default.
	DefaultNativeMaxRequestBodyBytes = 4 << 20
)

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

// aLongTimeAgo, as a deadline, wakes an operation blocked on a connection
// at once (Shutdown, a client gone, a stall timer).
var aLongTimeAgo = time.Unix(1, 0)

// The receive windows the HTTP/2 engine grants by default
// (Server.HTTP2 may change them): larger than the protocol's 64 KiB
// defaults so that uploads are not held to a round trip per 64 KiB, and
// bounded per connection by the connection window.
const (
	h2StreamWindow = 1 << 20
	h2ConnWindow   = 4 << 20
)

// stallChecks is how many times per WriteStallTimeout a write that waits
// checks whether it still moves (see stallRetry): a client that stops
// reading is cut between 1 and 1+1/stallChecks periods after the socket
// last took bytes of the response, within 1+2/stallChecks of the client's
// last read (the socket takes what the read freed at the next check at
// the latest), and a waiting write wakes every 7.5 s with the default.
const stallChecks = 8

// stallCheck is the time between checks of a waiting write under a stall
// timeout of d > 0.
func stallCheck(d time.Duration) time.Duration {
	return max(d/stallChecks, 1)
}
