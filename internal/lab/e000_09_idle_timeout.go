package lab

import (
	"net/http"
	"time"
)

// Seed 000, exercise 9: a server without IdleTimeout vs one with the
// seed's timeouts, under clients that reconnect periodically.

var idleTimeout = &Experiment{ID: "000-09", Seed: "000", Title: "IdleTimeout 0 vs 90 s with reconnecting clients",
	Check: checkIdleTimeout, Run: runIdleTimeout}

// seedTimeouts are the seed's server timeouts (server kind
// "hello-nethttp-timeouts").
func seedTimeouts(s *http.Server) {
	s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout = 5*time.Second, 30*time.Second, 30*time.Second, 90*time.Second
}

const reconnectEvery = 10 // the client drops its idle connections every 10 requests

// idleSide is one server and the client that calls it.
type idleSide struct {
	h  *serverHandle
	c  *http.Client
	dc *dialCounter
	n  int
}

func openIdleSide(env *Env, kind string) (*idleSide, error) {
	h, err := env.startServer(kind)
	if err != nil {
		return nil, err
	}
	dc := &dialCounter{}
	return &idleSide{h: h, dc: dc, c: &http.Client{Timeout: 5 * time.Second, Transport: newTransport(nil, dc)}}, nil
}

// get fetches the server's body, dropping the client's idle connections
// every reconnectEvery requests.
func (s *idleSide) get() ([]byte, error) {
	s.n++
	if s.n%reconnectEvery == 0 {
		s.c.CloseIdleConnections() // a middlebox or the client drops the connection
	}
	return fetch(s.c, s.h.URL())
}

// openIdleSides starts both servers, without and with the timeouts.
func openIdleSides(env *Env) (a, b *idleSide, err error) {
	if a, err = openIdleSide(env, "hello-nethttp"); err != nil {
		return nil, nil, err
	}
	if b, err = openIdleSide(env, "hello-nethttp-timeouts"); err != nil {
		a.h.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func checkIdleTimeout(env *Env) error {
	a, b, err := openIdleSides(env)
	if err != nil {
		return err
	}
	defer a.h.Close()
	defer b.h.Close()
	return sameBodies(string(hello), a.get, b.get)
}

func runIdleTimeout(env *Env) (*Result, error) {
	sa, sb, err := openIdleSides(env)
	if err != nil {
		return nil, err
	}
	defer sa.h.Close()
	defer sb.h.Close()
	before := newArm("http.Server without timeouts", "srv := &http.Server{Addr: \":8080\", Handler: mux}")
	after := newArm("http.Server with IdleTimeout 90 s", "srv := &http.Server{\n\tReadHeaderTimeout: 5 * time.Second,\n\tReadTimeout: 30 * time.Second,\n\tWriteTimeout: 30 * time.Second,\n\tIdleTimeout: 90 * time.Second,\n}")
	r := newResult(clientMetrics, before, after)
	sides := map[*Arm]*idleSide{before: sa, after: sb}
	if err := env.measure(r, func(a *Arm, _ int) error {
		s := sides[a]
		return concurrentRun(env.ctx(), a, 1, env.Budget.RunTime*2, s.dc, expectBody(string(hello), s.get))
	}); err != nil {
		return nil, err
	}
	r.Setup = "sequential GETs over plain HTTP; the client drops its idle connections every 10 requests (\"periodic reconnects\"); both servers are net/http with the same handler; " + sa.h.where() + "."
	r.SameWork = "both servers answer the same body to the same client code."
	r.compare("time", before.Name, after.Name, NsPerOp, Claim{Quote: "65 µs → 24 µs per request, ~2.7× faster on a keep-alive-heavy workload", Ratio: 65000.0 / 24000})
	r.compare("connections", before.Name, after.Name, ConnsPer1k, Claim{Quote: "the server holds connections open between requests", Info: true})
	r.finish(explain(r, map[outcome]string{
		asClaimed:       "the timeouts changed the cost per request",
		partlyAsClaimed: "a difference in one figure only",
		notAsClaimed:    "IdleTimeout can only make a server close idle connections sooner; it never makes reuse more likely, and with IdleTimeout 0 net/http already keeps connections open. The timeouts bound resources (zombie connections), they do not speed up requests",
	}))
	return r, nil
}
