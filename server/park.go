package server

// What both engines' idle connections share to park (h1_park.go,
// h2_park.go): the readiness sets (internal/park) hold them as
// park.Parkers, and resumer goroutines run the connections that woke.

import (
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
)

// A parker is a connection that can park: an HTTP/1.1 conn or a native
// HTTP/2 h2Conn. Its park.Parker methods are what its readiness set
// calls; its Wake hands it to Server.resumeConn, whose goroutine calls
// resume.
type parker interface {
	park.Parker
	// resume runs the connection on the calling goroutine until it parks
	// again or ends.
	resume()
}

// resumeConn runs a connection that woke on one of the Server's
// resumers (park.Resumers): goroutines that wait for the next woken
// connection, each keeping its stack, grown by serving, for the next.
func (s *Server) resumeConn(p parker) { s.resumers.Resume(p) }

// parkMinLeft: a connection whose read deadline is nearer than this
// waits for it in the netpoller instead of parking.
const parkMinLeft = 10 * time.Millisecond

// nextParkSet deals s's readiness sets to connections in turn; nil where
// parking is off.
func (s *Server) nextParkSet() *park.Set {
	if len(s.parks) == 0 {
		return nil
	}
	return s.parks[s.parkNext.Add(1)%uint32(len(s.parks))]
}

// parkEnv turns parking off for every Server of the process when set to
// "off" (or "0", "false"): for A/B measurements of binaries built on
// hotpath (bench/server.sh --idle runs both), and as an escape hatch
// that needs no rebuild.
const parkEnv = "HOTPATH_IDLEPARK"

var parkOffByEnv = sync.OnceValue(func() bool {
	switch strings.ToLower(os.Getenv(parkEnv)) {
	case "off", "0", "false", "no":
		return true
	}
	return false
})
