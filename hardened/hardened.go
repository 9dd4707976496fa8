// Package hardened gives a net/http server the timeouts and limits that
// net/http leaves off by default (no read, header or idle timeout, so a
// client that sends nothing holds a connection forever), with the same
// values hotpath's own server uses. `hotpath lab --only 000-09,000-13`
// measures what they cost and what they stop.
//
//	srv := hardened.Server(&http.Server{Addr: ":8080", Handler: mux})
//	log.Fatal(srv.ListenAndServe())
package hardened

import (
	"net/http"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// The values Server fills in, and why. net/http has only absolute read and
// write timeouts; hotpath's server protects with stall timeouts instead
// (time without progress), which net/http cannot express.
const (
	// ReadHeaderTimeout bounds the time to read a request's head: a
	// slowloris client sending a byte a minute is cut off after 10 s
	// instead of holding a goroutine and its buffers forever. 10 s rather
	// than the often advised 5 s leaves room for mobile clients on lossy
	// links.
	ReadHeaderTimeout = server.DefaultReadHeaderTimeout
	// ReadTimeout bounds reading a whole request, head and body (net/http
	// counts from the connection's first byte): 60 s lets a slow upload
	// of a few MB through and stops a body that never ends.
	ReadTimeout = 60 * time.Second
	// WriteTimeout bounds writing a response (net/http counts from the end
	// of the request head): 60 s. A handler that streams longer (SSE, a
	// large download) extends its own deadline with
	// http.NewResponseController(w).SetWriteDeadline.
	WriteTimeout = 60 * time.Second
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection: 120 s, longer than the 90 s idle timeout of Go's
	// http.Transport and of most clients, so the client closes an idle
	// connection first and never sends a request into our close (exercise
	// 9). Behind a load balancer, make it longer than the balancer's
	// (AWS ALB 60 s; NLB 350 s).
	IdleTimeout = server.DefaultIdleTimeout
	// MaxHeaderBytes caps the request line and header fields: 64 KiB,
	// hotpath's limit, against net/http's 1 MiB default: above what
	// browsers and proxies send with large cookie sets and tracing
	// headers, and a 431 rather than a megabyte per connection past it.
	MaxHeaderBytes = server.DefaultMaxHeaderBytes
)

// Server fills the zero-valued ReadHeaderTimeout, ReadTimeout,
// WriteTimeout, IdleTimeout and MaxHeaderBytes of srv with the constants
// above and returns srv. A field the caller set is never changed: to turn a
// timeout off on purpose, set it negative (net/http treats a negative
// timeout as none, and Server leaves it alone).
func Server(srv *http.Server) *http.Server {
	setDuration(&srv.ReadHeaderTimeout, ReadHeaderTimeout)
	setDuration(&srv.ReadTimeout, ReadTimeout)
	setDuration(&srv.WriteTimeout, WriteTimeout)
	setDuration(&srv.IdleTimeout, IdleTimeout)
	if srv.MaxHeaderBytes == 0 {
		srv.MaxHeaderBytes = MaxHeaderBytes
	}
	return srv
}

func setDuration(d *time.Duration, v time.Duration) {
	if *d == 0 {
		*d = v
	}
}
