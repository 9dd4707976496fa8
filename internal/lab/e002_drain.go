package lab

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"slices"
	"time"
)

// Seed 002: closing response bodies without reading them vs draining
// them, over HTTP/1.1 and real HTTP/2: net/http's HTTP/2 server and
// hotpath's native HTTP/2 engine (server.Server's default).

// body1000 is the seed server's 1,000 random bytes, made once from a
// fixed seed (the same in a child server process) rather than per request.
var body1000 = func() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1000)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}()

func bytesHandler(w http.ResponseWriter, _ *http.Request) { w.Write(body1000) }

var drainVsClose = &Experiment{ID: "002-drain", Seed: "002", Title: "drain vs close × HTTP/1.1 vs HTTP/2",
	Check: checkDrainVsClose, Run: runDrainVsClose}

// drainArm is an arm with its server kind, protocol and body handling.
type drainArm struct {
	*Arm
	kind  string
	proto int
	drain bool
}

func drainArms() []drainArm {
	return []drainArm{
		{newArm("HTTP/1.1, close", "resp, err := client.Do(req.Clone(ctx))\nresp.Body.Close() // nothing read"), "bytes-h1", 1, false},
		{newArm("HTTP/1.1, drain", "resp, err := client.Do(req.Clone(ctx))\nio.Copy(io.Discard, resp.Body)\nresp.Body.Close()"), "bytes-h1", 1, true},
		{newArm("HTTP/2 (net/http), close", ""), "bytes-h2", 2, false},
		{newArm("HTTP/2 (net/http), drain", ""), "bytes-h2", 2, true},
		{newArm("HTTP/2 (hotpath), close", ""), "bytes-h2-hotpath", 2, false},
		{newArm("HTTP/2 (hotpath), drain", ""), "bytes-h2-hotpath", 2, true},
	}
}

// drainClient returns a request function for one arm: one request, body
// drained or not, protocol checked, connection reuse counted.
func drainClient(h *serverHandle, a drainArm, dc *dialCounter, got *[]byte) (func() error, func()) {
	t := newTransport(h.TLS, dc)
	if a.proto == 1 {
		t.Protocols = new(http.Protocols)
		t.Protocols.SetHTTP1(true)
	} else {
		t.Protocols = new(http.Protocols)
		t.Protocols.SetHTTP2(true)
	}
	c := &http.Client{Transport: t, Timeout: 10 * time.Second}
	tmpl, _ := http.NewRequest("GET", h.URL()+"/", nil)
	trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) {}}
	tmpl = tmpl.WithContext(httptrace.WithClientTrace(tmpl.Context(), trace))
	return func() error {
		resp, err := c.Do(tmpl.Clone(tmpl.Context()))
		if err != nil {
			return err
		}
		if resp.ProtoMajor != a.proto {
			resp.Body.Close()
			return fmt.Errorf("negotiated %s, want HTTP/%d", resp.Proto, a.proto)
		}
		if a.drain {
			if got != nil {
				*got, err = io.ReadAll(resp.Body)
			} else {
				_, err = io.Copy(io.Discard, resp.Body)
			}
		}
		resp.Body.Close()
		return err
	}, t.CloseIdleConnections
}

func checkDrainVsClose(env *Env) error {
	for _, a := range drainArms() {
		h, err := env.startServer(a.kind)
		if err != nil {
			return err
		}
		var got []byte
		a.drain = true // the check reads the body in every arm
		do, done := drainClient(h, a, &dialCounter{}, &got)
		err = do()
		done()
		h.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		if string(got) != string(body1000) {
			return fmt.Errorf("%s: body differs", a.Name)
		}
	}
	return nil
}

func runDrainVsClose(env *Env) (*Result, error) {
	arms := drainArms()
	metrics := []Metric{LatMeanUs, LatP50Us, LatP99Us, ClientCPUUs, ServerCPUUs, ConnsPer1k}
	r := newResult(metrics)
	servers := map[string]*serverHandle{}
	byArm := map[*Arm]drainArm{}
	dos := map[*Arm]func() error{}
	dcs := map[*Arm]*dialCounter{}
	defer func() {
		for _, h := range servers {
			h.Close()
		}
	}()
	for _, a := range arms {
		h := servers[a.kind]
		if h == nil {
			var err error
			if h, err = env.startServer(a.kind); err != nil {
				return nil, err
			}
			servers[a.kind] = h
		}
		dcs[a.Arm] = &dialCounter{}
		do, done := drainClient(h, a, dcs[a.Arm], nil)
		defer done()
		dos[a.Arm], byArm[a.Arm] = do, a
		r.Arms = append(r.Arms, a.Arm)
	}
	n := env.Budget.N(2000, 20)
	err := env.measure(r, func(a *Arm, _ int) error {
		h := servers[byArm[a].kind]
		s0, err := h.Stats()
		if err != nil {
			return err
		}
		d0, c0 := dcs[a].n.Load(), processCPU()
		lat := make([]float64, 0, n)
		for range n {
			start := time.Now()
			if err := dos[a](); err != nil {
				return err
			}
			lat = append(lat, float64(time.Since(start).Nanoseconds())/1e3)
		}
		cpu := processCPU() - c0
		s1, err := h.Stats()
		if err != nil {
			return err
		}
		slices.Sort(lat)
		f := float64(n)
		a.record(LatMeanUs.Name, mean(lat))
		a.record(LatP50Us.Name, percentile(lat, 50))
		a.record(LatP99Us.Name, percentile(lat, 99))
		a.record(ClientCPUUs.Name, float64(cpu.Microseconds())/f)
		a.record(ServerCPUUs.Name, float64((s1.CPU-s0.CPU).Microseconds())/f)
		a.record(ConnsPer1k.Name, float64(dcs[a].n.Load()-d0)*1000/f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	h1c, h1d, h2c, h2d, hpc, hpd := arms[0].Name, arms[1].Name, arms[2].Name, arms[3].Name, arms[4].Name, arms[5].Name
	r.Setup = fmt.Sprintf("%d sequential GETs per run of 1,000 random bytes, as the seed's client; HTTP/1.1 over plain TCP (as the seed) from net/http's server; HTTP/2 over TLS (the only HTTP/2 net/http's client speaks without h2c setup) from two servers, both with httptest's certificate: net/http's and hotpath's own HTTP/2 engine (server.Server's default); the protocol checked on every response (resp.ProtoMajor); %s. CPU is CPU time per request (getrusage), not a %% of a sampled interval.", n, servers["bytes-h1"].where())
	r.SameWork = "every arm gets the same 1,000-byte body when it reads it (checked once per arm); the close arms then skip reading, which is the point."
	r.compare("HTTP/1.1 mean latency", h1c, h1d, LatMeanUs, Claim{Quote: "1.279 ms → 0.706 ms mean (~44.5% faster)", Ratio: 1.279138 / 0.705606})
	r.compare("HTTP/1.1 median latency", h1c, h1d, LatP50Us, Claim{Quote: "836 µs → 286 µs median (~65%)", Ratio: 836.046 / 285.943})
	r.compare("HTTP/1.1 client CPU", h1c, h1d, ClientCPUUs, Claim{Quote: "client CPU 72.6% → 35.9% mean", Ratio: 72.64 / 35.87})
	r.compare("HTTP/1.1 server CPU", h1c, h1d, ServerCPUUs, Claim{Quote: "server CPU 51.6% → 27.2% mean", Ratio: 51.61 / 27.23})
	r.compare("HTTP/1.1 connections", h1c, h1d, ConnsPer1k, Claim{Quote: "connection reuse preserved with draining, disabled without it", Ratio: 0})
	// The seed's HTTP/2 claims, on each HTTP/2 server.
	for _, p := range []struct{ server, close, drain string }{{"net/http", h2c, h2d}, {"hotpath", hpc, hpd}} {
		r.compare("HTTP/2 ("+p.server+") mean latency", p.close, p.drain, LatMeanUs, Claim{Quote: "1.274 ms → 0.707 ms mean (\"both HTTP/1.1 and HTTP/2\")", Ratio: 1.273813 / 0.707408})
		r.compare("HTTP/2 ("+p.server+") median latency", p.close, p.drain, LatP50Us, Claim{Quote: "829 µs → 290 µs median", Ratio: 829.245 / 289.669})
		r.compare("HTTP/2 ("+p.server+") client CPU", p.close, p.drain, ClientCPUUs, Claim{Quote: "client CPU 71.1% → 34.1% mean", Ratio: 71.06 / 34.10})
		r.compare("HTTP/2 ("+p.server+") connections", p.close, p.drain, ConnsPer1k, Claim{Quote: "HTTP/2 closes and reopens like HTTP/1.1", Info: true})
	}
	r.compare("HTTP/1.1 p99 latency", h1c, h1d, LatP99Us, Claim{Quote: "not reported by the seed", Info: true})
	r.compare("HTTP/2 server CPU, drain: net/http → hotpath", h2d, hpd, ServerCPUUs, Claim{Quote: "not a seed claim: the two HTTP/2 servers side by side", Info: true})
	// What HTTP/1.1 did is read from the measurement: Go 1.27's client
	// drains a small unread body on Close by itself, and then the
	// undrained arm keeps its connections too.
	h1 := "over HTTP/1.1 an unread body costs a new connection per request, as claimed"
	for _, c := range r.Comparisons {
		if c.Name == "HTTP/1.1 connections" && c.Verdict != Confirmed && c.Verdict != Smaller && c.Verdict != Larger {
			ratio, _ := c.MeasuredText()
			h1 = fmt.Sprintf("over HTTP/1.1 the undrained arm kept its connections too (connections opened, undrained over drained: %s): this Go's client (%s) drains a small unread body when it is closed, as Go's does from 1.27, so draining by hand no longer changes much", ratio, runtime.Version())
		}
	}
	const h2 = "over real HTTP/2, on net/http's server as on hotpath's native engine, closing an unread body only resets its stream and the connection stays, so draining changes little. The seed's \"HTTP/2\" figures, near-identical to its HTTP/1.1 ones, were likely HTTP/1.1 too (an http:// URL without h2c stays on HTTP/1.1; the seed does not show its client code)"
	r.finish(explain(r, map[outcome]string{
		partlyAsClaimed: h1 + "; " + h2,
		asClaimed:       "draining keeps connections alive on both protocols and both HTTP/2 servers",
		notAsClaimed:    h1 + "; " + h2,
	}))
	return r, nil
}
