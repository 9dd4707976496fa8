package lab

import (
	"net/http"

	"github.com/hotpathhq/hotpath/server"
)

// Experiments returns every experiment in the order the report shows them,
// seed by seed in ID order. Each is defined in its own file, e<seed>_*.go,
// with its Check and Run.
func Experiments() []*Experiment {
	return []*Experiment{
		sharedClient,    // 000-01
		streamProxy,     // 000-02
		idlePool,        // 000-03
		jsonEncoder,     // 000-04
		pooledBuffer,    // 000-05
		routing,         // 000-06
		headerSet,       // 000-07
		pooledBufio,     // 000-08
		idleTimeout,     // 000-09
		tlsReuse,        // 000-10
		dumpVsSlog,      // 000-11
		drainBody,       // 000-12
		slowlorisGuard,  // 000-13
		requestIDs,      // 000-14
		serverLadder,    // 001-ladder
		poolVsPerConn,   // 001-pool
		reqsPerConn,     // 001-reqs-per-conn
		drainVsClose,    // 002-drain
		peerClients,     // 003-clients
		fatVsSlimHeader, // 004-headers
	}
}

// serverKinds are the servers the experiments start by kind
// (Env.startServer), in this process or in a child process (ServeChild).
var serverKinds = map[string]serverSpec{
	// "Hello, World!" (servers.go): 001-ladder, and the clients of 000-01,
	// 000-03, 000-09 and 000-10.
	"hello-nethttp": netHTTP(http.HandlerFunc(helloHandler), nil),
	"hello-adapter": hotpathServer(func() *server.Server {
		return &server.Server{Handler: http.HandlerFunc(helloHandler)}
	}),
	"hello-native": hotpathServer(func() *server.Server {
		return &server.Server{Native: helloNative}
	}),
	"hello-tls": netHTTPTLS(http.HandlerFunc(helloHandler)),

	// 000-09: the seed's timeouts.
	"hello-nethttp-timeouts": netHTTP(http.HandlerFunc(helloHandler), seedTimeouts),

	// 000-12: one JSON value, and the same value followed by more records.
	"json-nethttp":          netHTTP(http.HandlerFunc(jsonValueHandler), nil),
	"json-trailing-nethttp": netHTTP(http.HandlerFunc(ndjsonHandler), nil),

	// 001-pool: the seed's minimal server, state pooled or per connection.
	"mini-pool":    miniServer(true),
	"mini-perconn": miniServer(false),

	// 001-reqs-per-conn.
	"native-max100": hotpathServer(func() *server.Server {
		return &server.Server{Native: helloNative, MaxRequestsPerConn: 100}
	}),
	"native-max10000": hotpathServer(func() *server.Server {
		return &server.Server{Native: helloNative, MaxRequestsPerConn: 10000}
	}),

	// 002-drain: 1,000 random bytes over HTTP/1.1, and over HTTP/2 from
	// net/http's server and from hotpath's native HTTP/2 engine.
	"bytes-h1": netHTTP(http.HandlerFunc(bytesHandler), nil),
	"bytes-h2": netHTTPTLS(http.HandlerFunc(bytesHandler)),
	"bytes-h2-hotpath": hotpathTLS(func() *server.Server {
		return &server.Server{Handler: http.HandlerFunc(bytesHandler)}
	}),

	// 003-clients.
	"clients-native": hotpathServer(func() *server.Server { return &server.Server{Native: clientsServer} }),

	// 004-headers.
	"fat-nethttp":    netHTTP(http.HandlerFunc(fatHandler), nil),
	"slim-nethttp":   netHTTP(http.HandlerFunc(slimPooledHandler), nil),
	"headers-native": hotpathServer(func() *server.Server { return &server.Server{Native: headersNative} }),
}
