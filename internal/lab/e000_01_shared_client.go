package lab

import (
	"fmt"
	"net/http"
	"time"
)

// Seed 000, exercise 1: an http.Client per request vs one shared client,
// over localhost TLS.

var sharedClient = &Experiment{ID: "000-01", Seed: "000", Title: "per-request http.Client vs shared client over localhost TLS",
	Check: checkSharedClient, Run: runSharedClient}

// sharedClientArms are the three ways to get a client, each fetching the
// server's body once per call and counting its dials.
type sharedClientArms struct {
	fresh, literal, shared   func() ([]byte, error)
	dcFresh, dcLit, dcShared *dialCounter
	close                    func()
}

func setupSharedClient(env *Env) (*sharedClientArms, *serverHandle, error) {
	h, err := env.startServer("hello-tls")
	if err != nil {
		return nil, nil, err
	}
	url := h.URL() + "/"
	a := &sharedClientArms{dcFresh: &dialCounter{}, dcLit: &dialCounter{}, dcShared: &dialCounter{}}
	// What the seed means: every client with its own Transport.
	a.fresh = func() ([]byte, error) {
		t := newTransport(h.TLS, a.dcFresh)
		defer t.CloseIdleConnections() // the seed leaks it; we close it to keep the machine sane
		return fetch(&http.Client{Timeout: 5 * time.Second, Transport: t}, url)
	}
	// What the seed's code does: a new Client whose nil Transport is
	// the shared http.DefaultTransport (here, a shared clone of it).
	litT := newTransport(h.TLS, a.dcLit)
	a.literal = func() ([]byte, error) {
		return fetch(&http.Client{Timeout: 5 * time.Second, Transport: litT}, url)
	}
	shared := &http.Client{Timeout: 5 * time.Second, Transport: newTransport(h.TLS, a.dcShared)}
	a.shared = func() ([]byte, error) { return fetch(shared, url) }
	a.close = func() { litT.CloseIdleConnections(); shared.CloseIdleConnections(); h.Close() }
	return a, h, nil
}

func checkSharedClient(env *Env) error {
	a, _, err := setupSharedClient(env)
	if err != nil {
		return err
	}
	defer a.close()
	return sameBodies(string(hello), a.fresh, a.literal, a.shared)
}

func runSharedClient(env *Env) (*Result, error) {
	a, h, err := setupSharedClient(env)
	if err != nil {
		return nil, err
	}
	defer a.close()
	fresh := newArm("new Client + new Transport per request", "client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{...}}\nresp, err := client.Get(url)\ndefer resp.Body.Close()\nreturn io.ReadAll(resp.Body)")
	literal := newArm("new Client per request, shared Transport (the seed's literal code)", "client := &http.Client{Timeout: 5 * time.Second} // Transport nil: http.DefaultTransport\nresp, err := client.Get(url)")
	shared := newArm("one shared Client", "var httpClient = &http.Client{Timeout: 5 * time.Second}\nresp, err := httpClient.Get(url)")
	r := newResult(clientMetrics, fresh, literal, shared)
	dcs := map[*Arm]*dialCounter{fresh: a.dcFresh, literal: a.dcLit, shared: a.dcShared}
	fns := map[*Arm]func() error{fresh: expectBody(string(hello), a.fresh), literal: expectBody(string(hello), a.literal), shared: expectBody(string(hello), a.shared)}
	if err := env.measure(r, func(arm *Arm, _ int) error {
		return concurrentRun(env.ctx(), arm, 1, env.Budget.RunTime*2, dcs[arm], fns[arm])
	}); err != nil {
		return nil, err
	}
	r.Setup = "sequential GETs of \"Hello, World!\" over TLS to 127.0.0.1 (net/http server with httptest's certificate); " + h.where() + "."
	r.SameWork = "all three arms fetch the same body over TLS from the same server."
	r.compareCosts(fresh, shared, costClaims{
		Time:    Claim{Quote: "6.8 ms → 95 µs per request, ~70× faster", Ratio: 6800000.0 / 95000},
		Garbage: Claim{Quote: "42000 → 8400 B/op, ~4× less garbage", Ratio: 42000.0 / 8400},
	})
	r.compare("seed's literal code", literal.Name, shared.Name, NsPerOp, Claim{Quote: "\"each client gets its own Transport\": a new Client per call should be as slow as a new connection", Info: true})
	r.compare("connections", fresh.Name, shared.Name, ConnsPer1k, Claim{Quote: "connection pooling never engages per request", Info: true})
	r.finish(explain(r, map[outcome]string{
		asClaimed: "a fresh Transport pays TCP + TLS handshake every time; the shared one reuses a connection",
		partlyAsClaimed: fmt.Sprintf("a fresh Transport pays TCP + TLS setup per request: %.2f ms here (seed: 6.8 ms) against %.0f µs reused (seed: 95 µs), so the ratio differs",
			r.median(fresh.Name, NsPerOp.Name)/1e6, r.median(shared.Name, NsPerOp.Name)/1e3),
		notAsClaimed: "this machine does not see the claimed gap",
	}), "The seed's own \"before\" code does not do what its text says: &http.Client{Timeout: …} has a nil Transport and so uses the shared http.DefaultTransport, which pools connections. The \"seed's literal code\" arm shows it costs about the same as the shared client; the cost is a new Transport, not a new Client (the seed says so itself in its myths section).")
	return r, nil
}
