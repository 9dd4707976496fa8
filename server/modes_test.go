package server

import (
	"crypto/tls"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// A mode is one way a request reaches a handler: a protocol and a
// transport (proto) and an API. Tests of response semantics run on every
// mode they apply to, in the manner of net/http's run(t, f, modes), so
// that the engines cannot drift apart unseen.
type mode struct {
	// proto is "h1" (HTTP/1.1), "https1" (HTTP/1.1 over TLS), "h2"
	// (hotpath's HTTP/2 engine over TLS), "h2c" (the same, cleartext,
	// prior knowledge), "handoff" or "handoff-h2c" (HTTP/2 handed to
	// net/http's server with Server.HTTP2HandOff).
	proto string
	// native selects the native API (Server.Native) over http.Handler.
	native bool
}

// protos lists every proto, in the order subtests run.
var protos = []string{"h1", "https1", "h2", "h2c", "handoff", "handoff-h2c"}

// allModes is every mode that exists: the hand-off serves http.Handlers
// only (a native server offers HTTP/1.1 alone when it is set).
var allModes = func() []mode {
	var ms []mode
	for _, native := range []bool{false, true} {
		for _, p := range protos {
			if native && strings.HasPrefix(p, "handoff") {
				continue
			}
			ms = append(ms, mode{p, native})
		}
	}
	return ms
}()

func (m mode) String() string {
	if m.native {
		return m.proto + "/native"
	}
	return m.proto + "/handler"
}

// isH2 reports whether requests on m travel over HTTP/2.
func (m mode) isH2() bool { return m.proto != "h1" && m.proto != "https1" }

// isHandoff reports whether m hands HTTP/2 to net/http's server (HTTP2HandOff).
func (m mode) isHandoff() bool { return strings.HasPrefix(m.proto, "handoff") }

// cleartext reports whether m runs without TLS.
func (m mode) cleartext() bool { return m.proto == "h1" || strings.HasSuffix(m.proto, "h2c") }

// runModes runs f as a subtest on each of modes (allModes when none are
// given).
func runModes(t *testing.T, f func(t *testing.T, m mode), modes ...mode) {
	t.Helper()
	if len(modes) == 0 {
		modes = allModes
	}
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) { f(t, m) })
	}
}

// handlerModes is allModes for http.Handlers alone.
func handlerModes() []mode {
	var ms []mode
	for _, m := range allModes {
		if !m.native {
			ms = append(ms, m)
		}
	}
	return ms
}

// h2cProtocols is Server.Protocols for HTTP/1.1, HTTP/2 over TLS and
// h2c.
func h2cProtocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetHTTP2(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// serve starts s on m with h as its handler (Handler or Native by the
// mode's API: give both, or the one the mode uses) and returns the base
// URL and a client that speaks m's protocol. The server and the client's
// connections end with the test. An h of noHandler{} leaves
// Server.Handler nil.
func (m mode) serve(t *testing.T, s *Server, h http.Handler, native func(*Ctx)) (string, *http.Client) {
	t.Helper()
	return m.serveListener(t, s, h, native, nil)
}

// noHandler, given to serve as the http.Handler, leaves Server.Handler
// nil: the Server then serves http.DefaultServeMux, as net/http's.
type noHandler struct{}

func (noHandler) ServeHTTP(http.ResponseWriter, *http.Request) { panic("noHandler is never served") }

// serveListener is serve on a listener of the test's: wrap, when not nil,
// wraps the TCP listener (beneath TLS on a TLS mode), as a listener of
// the user's would (a PROXY-protocol reader, a TLS terminator).
func (m mode) serveListener(t *testing.T, s *Server, h http.Handler, native func(*Ctx), wrap func(net.Listener) net.Listener) (string, *http.Client) {
	t.Helper()
	if m.native {
		if native == nil {
			t.Fatalf("%v: no native handler given", m)
		}
		s.Native, s.Handler = native, nil
	} else {
		if h == nil {
			t.Fatalf("%v: no http.Handler given", m)
		}
		s.Handler, s.Native = h, nil
		if _, ok := h.(noHandler); ok {
			s.Handler = nil
		}
	}
	if s.ErrorLog == nil {
		s.ErrorLog = discardLog
	}
	s.HTTP2HandOff = m.isHandoff()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if wrap != nil {
		ln = wrap(ln)
	}
	if m.cleartext() {
		if m.isH2() {
			s.Protocols = h2cProtocols()
		}
		one, two := h2Clients(t, nil)
		serveOn(t, s, ln)
		if m.isH2() {
			return "http://" + addr, two
		}
		return "http://" + addr, one
	}
	cert, pool := testCert(t)
	s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	one, two := h2Clients(t, pool)
	serveTLSOn(t, s, ln)
	if m.isH2() {
		return "https://" + addr, two
	}
	return "https://" + addr, one
}

// TestModesServeTheirProtocol: the harness reaches each engine it names
// (a harness that silently fell back to HTTP/1.1 would make every test on
// it meaningless).
func TestModesServeTheirProtocol(t *testing.T) {
	runModes(t, func(t *testing.T, m mode) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) })
		nh := func(c *Ctx) { c.Write(c.Proto()) }
		base, c := m.serve(t, &Server{}, h, nh)
		resp, body := mustDo(t, c, mustRequest(t, "GET", base+"/"))
		want := "HTTP/1.1"
		if m.isH2() {
			want = "HTTP/2.0"
		}
		if string(body) != want || resp.Proto != want {
			t.Errorf("served %q, client saw %s; want %s", body, resp.Proto, want)
		}
		if (resp.TLS != nil) == m.cleartext() {
			t.Errorf("TLS %v on a mode that is cleartext=%v", resp.TLS != nil, m.cleartext())
		}
	})
}

// connStates records the ConnState changes a Server reports (its hook).
type connStates struct {
	mu  sync.Mutex
	all []ConnState
}

func (r *connStates) hook(_ net.Conn, st ConnState) {
	r.mu.Lock()
	r.all = append(r.all, st)
	r.mu.Unlock()
}

// states returns a copy of what was recorded so far.
func (r *connStates) states() []ConnState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ConnState(nil), r.all...)
}

// last returns the latest state recorded, -1 for none.
func (r *connStates) last() ConnState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.all) == 0 {
		return -1
	}
	return r.all[len(r.all)-1]
}
