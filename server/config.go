package server

// The Server's settings resolved once (resolve, at the first Serve) into
// config, which connections read without locks: defaults applied,
// net/http's settings (Protocols, HTTP2, TLSNextProto) mapped.

import (
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/internal/park"
	"github.com/hotpathhq/hotpath/wire"
	"github.com/hotpathhq/hotpath/wire/h2"
)

// config is the resolved, defaulted copy of the Server's settings that
// connections read without locks.
type config struct {
	limits                wire.Limits
	readHeaderTimeout     time.Duration
	readTimeout           time.Duration
	writeTimeout          time.Duration
	idleTimeout           time.Duration
	readStall, writeStall time.Duration
	// writeStallCheck is stallCheck(writeStall), the period of the
	// deadline armed for each write on TCP, worked out once.
	writeStallCheck time.Duration
	maxRequests     int
	yieldBeforeRead bool
	// handler is the Handler, or http.DefaultServeMux when neither
	// Handler nor Native is set (net/http's rule); nil for Native.
	handler http.Handler
	// http1, h2TLS, h2c: the protocols served (Protocols).
	http1, h2TLS, h2c bool
	// h2Streams, h2StreamWindow, h2ConnWindow: hotpath's HTTP/2 engine's
	// MAX_CONCURRENT_STREAMS and receive windows (HTTP2).
	h2Streams                    uint32
	h2StreamWindow, h2ConnWindow uint32
	// extendedConnect: ExtendedConnect, or GODEBUG=http2xconnect=1.
	extendedConnect bool
}

// trailerBytes caps a request's trailer section, on both protocols: the
// head's MaxHeaderBytes, and at most wire.DefaultMaxTrailerBytes (16 KiB:
// trailers are rare and small; net/http stops at 4 KiB). Their field
// count is capped as the head's (MaxHeaderCount).
func (cfg *config) trailerBytes() int {
	return min(cfg.limits.MaxHeaderBytes, wire.DefaultMaxTrailerBytes)
}

// trailersTooLargeText is the reason given for trailers past
// trailerBytes.
func trailersTooLargeText(limit int) string {
	return "request trailers exceed " + strconv.Itoa(limit) + " bytes (Server.MaxHeaderBytes, at most 16 KiB for trailers)"
}

// maxYieldProcs is the largest GOMAXPROCS at which connections yield
// before an idle read (see waitRequest). Gosched goes through the
// scheduler's global run queue, a lock shared by all Ps: measured to pay on
// 1 and 2 Ps, not yet measured on many, so larger machines keep the plain
// netpoller wait.
const maxYieldProcs = 4

func defaultDuration(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

func (s *Server) resolve() {
	s.cfgOnce.Do(func() {
		limits := wire.Limits{
			MaxRequestLineBytes: s.MaxRequestLineBytes,
			MaxHeaderBytes:      s.MaxHeaderBytes,
			MaxHeaders:          s.MaxHeaderCount,
			MaxBodyBytes:        s.MaxRequestBodyBytes,
		}
		if limits.MaxHeaders == 0 {
			limits.MaxHeaders = s.MaxHeaderValueCount
		}
		if limits.MaxBodyBytes == 0 {
			limits.MaxBodyBytes = -1
			if s.Native != nil {
				limits.MaxBodyBytes = DefaultNativeMaxRequestBodyBytes
			}
		}
		s.cfg = config{
			limits:            limits.WithDefaults(),
			readHeaderTimeout: defaultDuration(s.ReadHeaderTimeout, DefaultReadHeaderTimeout),
			readStall:         defaultDuration(s.ReadStallTimeout, DefaultReadStallTimeout),
			writeStall:        defaultDuration(s.WriteStallTimeout, DefaultWriteStallTimeout),
			readTimeout:       max(s.ReadTimeout, 0),
			writeTimeout:      max(s.WriteTimeout, 0),
			idleTimeout:       defaultDuration(s.IdleTimeout, DefaultIdleTimeout),
			maxRequests:       s.MaxRequestsPerConn,
			yieldBeforeRead:   runtime.GOMAXPROCS(0) <= maxYieldProcs,
			http1:             true,
			h2TLS:             true,
			h2Streams:         h2.DefaultMaxConcurrentStreams,
			h2StreamWindow:    h2StreamWindow,
			h2ConnWindow:      h2ConnWindow,
		}
		s.cfg.writeStallCheck = s.cfg.writeStall // off (<= 0) alike
		if d := s.cfg.writeStall; d > 0 {
			s.cfg.writeStallCheck = stallCheck(d)
		}
		s.orphans.init(s.MaxOrphanedHandlersPerClient, s.MaxOrphanedHandlers)
		if park.Supported && !s.noIdlePark && !parkOffByEnv() {
			// Under mu: Close may run at the same time (a Serve
			// started just before it), and after it none are made.
			s.mu.Lock()
			if !s.parksClosed {
				s.parks = park.NewSets()
				s.parkQuit = make(chan struct{})
				s.resumers = park.NewResumers(parker.resume, s.parkQuit)
			}
			s.mu.Unlock()
		}
		if s.Native == nil {
			s.cfg.handler = s.Handler
			if s.cfg.handler == nil {
				s.cfg.handler = http.DefaultServeMux
			}
		}
		s.cfg.extendedConnect = s.ExtendedConnect || godebugExtendedConnect()
		if p := s.Protocols; p != nil {
			s.cfg.http1, s.cfg.h2TLS, s.cfg.h2c = p.HTTP1(), p.HTTP2(), p.UnencryptedHTTP2()
		}
		if s.TLSNextProto != nil && s.TLSNextProto["h2"] == nil {
			s.cfg.h2TLS = false // net/http's idiom: a non-nil map without h2 turns it off
		}
		if c := s.HTTP2; c != nil {
			if c.MaxConcurrentStreams > 0 {
				s.cfg.h2Streams = uint32(min(c.MaxConcurrentStreams, 1<<31-1))
			}
			if n := c.MaxReceiveBufferPerStream; n > 0 {
				s.cfg.h2StreamWindow = uint32(min(n, h2.MaxWindowSize))
			}
			if n := c.MaxReceiveBufferPerConnection; n > 0 {
				s.cfg.h2ConnWindow = uint32(max(min(n, h2.MaxWindowSize), h2.DefaultInitialWindowSize))
			}
		}
		s.httpServer = &http.Server{Addr: s.Addr, Handler: s.cfg.handler, ErrorLog: s.ErrorLog,
			ReadHeaderTimeout: s.cfg.readHeaderTimeout, ReadTimeout: s.cfg.readTimeout,
			WriteTimeout: s.cfg.writeTimeout, IdleTimeout: s.cfg.idleTimeout,
			MaxHeaderBytes: s.cfg.limits.MaxHeaderBytes, BaseContext: s.BaseContext,
			ConnContext: s.ConnContext, DisableGeneralOptionsHandler: s.DisableGeneralOptionsHandler,
			HTTP2: s.HTTP2, Protocols: s.Protocols}
	})
}

// godebugExtendedConnect reports whether GODEBUG turns RFC 8441's
// extended CONNECT on, as it does for net/http's HTTP/2 server
// (Server.ExtendedConnect).
var godebugExtendedConnect = sync.OnceValue(func() bool {
	return strings.Contains(os.Getenv("GODEBUG"), "http2xconnect=1")
})
