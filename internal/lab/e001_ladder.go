package lab

import "fmt"

// Seed 001: the server ladder net/http → hotpath's http.Handler adapter →
// hotpath's native API, same "Hello, World!" response.

var serverLadder = &Experiment{ID: "001-ladder", Seed: "001", Title: "server ladder: net/http → hotpath adapter → hotpath native",
	Check: checkServerLadder, Run: runServerLadder}

// ladderKinds are the ladder's servers, bottom to top.
var ladderKinds = []string{"hello-nethttp", "hello-adapter", "hello-native"}

func checkServerLadder(env *Env) error {
	return checkServers(env, "/", hello, ladderKinds...)
}

func runServerLadder(env *Env) (*Result, error) {
	conns := env.Budget.N(200, 4) // 50 from the quick budget up, as the GUIDE measures
	conns = min(conns, 50)
	std := newArm("net/http", "srv := &http.Server{Handler: hello}")
	adapter := newArm("hotpath, http.Handler adapter", "srv := &server.Server{Handler: hello}")
	native := newArm("hotpath, native API", "srv := &server.Server{Native: func(c *server.Ctx) {\n\tc.SetContentType(\"text/plain; charset=utf-8\")\n\tc.Write(hello)\n}}")
	r := newResult(serverMetrics)
	where, err := env.measureServers(r, "/", serverArm{std, ladderKinds[0], conns}, serverArm{adapter, ladderKinds[1], conns}, serverArm{native, ladderKinds[2], conns})
	if err != nil {
		return nil, err
	}
	r.Setup = fmt.Sprintf("closed loop, %d keep-alive HTTP/1.1 connections from hotpath load's fast engine (package load; no pipelining), GET / answered \"Hello, World!\" with Date, Content-Type, Content-Length; %s. On two cores the driver competes with the server, so CPU-µs per request is the fairer figure.", conns, where)
	r.SameWork = "all three servers answer the same body to the same request."
	r.compare("seed's 20k → 60k", std.Name, native.Name, ReqPerSec, Claim{Quote: "20k → 60k req/s (3×) with per-connection buffers, zero-copy headers, long connections (their baseline was their own first server, not net/http)", Ratio: 3})
	r.compare("adapter CPU (GUIDE target)", std.Name, adapter.Name, ServerCPUUs, Claim{Quote: "hotpath's own target (GUIDE), not a seed claim: ≤ 8.5 CPU-µs/req, ≥ 1.6× better than net/http", Info: true})
	r.compare("native CPU (GUIDE target)", std.Name, native.Name, ServerCPUUs, Claim{Quote: "hotpath's own target (GUIDE), not a seed claim: ≤ 6.0 CPU-µs/req (net/http ≈ 13.4: 2.2×)", Info: true})
	r.compare("native allocations", std.Name, native.Name, ServerAllocs, Claim{Quote: "hotpath's target: 0 allocs/req steady state", Info: true})
	r.finish(explain(r, map[outcome]string{
		asClaimed:       "the native API and the adapter save CPU per request as targeted",
		partlyAsClaimed: "hotpath saves server CPU per request, but req/s on two shared cores is bounded by the load driver, so throughput ratios understate it",
		notAsClaimed:    "this machine does not see the targeted gains",
	}))
	return r, nil
}
