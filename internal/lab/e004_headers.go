package lab

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/hotpathhq/hotpath/server"
)

// Seed 004: response headers as fresh []string per key ("fat") vs slices
// of one reused bucket ("slim"), and hotpath's native header API.

var body12 = []byte("hello world!")

func fatHandler(w http.ResponseWriter, _ *http.Request) {
	header := w.Header()
	header["Content-Length"] = []string{"12"}
	header["Cache-Control"] = []string{"public,max-age=30"}
	header["Content-Type"] = []string{"text/plain"}
	w.WriteHeader(200)
	w.Write(body12)
}

// headerBucket is the seed's global bucket: fine for one goroutine (the
// micro-benchmark), a data race in a server.
var headerBucket = []string{"", "", ""}

func slimHandler(w http.ResponseWriter, _ *http.Request) {
	headerBucket[0] = "12"
	headerBucket[1] = "public,max-age=30" // the seed wrote "public,age=30" here: a typo that changes the response
	headerBucket[2] = "text/plain"
	header := w.Header()
	header["Content-Length"] = headerBucket[0:1]
	header["Cache-Control"] = headerBucket[1:2]
	header["Content-Type"] = headerBucket[2:3]
	w.WriteHeader(200)
	w.Write(body12)
}

// The seed's "concurrent-friendly" fix: a pool of buckets. The bucket
// goes back to the pool when the handler returns, after net/http has
// written the head (WriteHeader + Write with a known length flush it).
var bucketPool = sync.Pool{New: func() any { return new([3]string) }}

func slimPooledHandler(w http.ResponseWriter, _ *http.Request) {
	b := bucketPool.Get().(*[3]string)
	defer bucketPool.Put(b)
	b[0], b[1], b[2] = "12", "public,max-age=30", "text/plain"
	header := w.Header()
	header["Content-Length"] = b[0:1]
	header["Cache-Control"] = b[1:2]
	header["Content-Type"] = b[2:3]
	w.WriteHeader(200)
	w.Write(body12)
}

func headersNative(c *server.Ctx) {
	c.SetHeader("Cache-Control", "public,max-age=30")
	c.SetContentType("text/plain")
	c.Write(body12)
}

var fatVsSlimHeader = &Experiment{ID: "004-headers", Seed: "004", Title: "fat vs slim header handler, and hotpath's native header API",
	Check: checkFatVsSlimHeader, Run: runFatVsSlimHeader}

func checkFatVsSlimHeader(env *Env) error {
	var outs []string
	for _, h := range []http.HandlerFunc{fatHandler, slimHandler, slimPooledHandler} {
		w := newSinkWriter(true)
		h(w, nil)
		outs = append(outs, w.response())
	}
	if outs[0] != outs[1] || outs[0] != outs[2] {
		return fmt.Errorf("handlers differ: %q, %q, %q", outs[0], outs[1], outs[2])
	}
	return checkServers(env, "/", body12, "fat-nethttp", "slim-nethttp", "headers-native")
}

func runFatVsSlimHeader(env *Env) (*Result, error) {
	fat := newArm("fat (handler only)", "header := writer.Header()\nheader[\"Content-Length\"] = []string{\"12\"}\nheader[\"Cache-Control\"] = []string{\"public,max-age=30\"}\nheader[\"Content-Type\"] = []string{\"text/plain\"}")
	slim := newArm("slim (handler only)", "headerbucket[0] = \"12\"\nheaderbucket[1] = \"public,max-age=30\"\nheaderbucket[2] = \"text/plain\"\nheader[\"Content-Length\"] = headerbucket[0:1]\nheader[\"Cache-Control\"] = headerbucket[1:2]\nheader[\"Content-Type\"] = headerbucket[2:3]")
	r := newResult([]Metric{NsPerOp, BytesPerOp, AllocsPerOp, ReqPerSec, ServerCPUUs, ServerAllocs})
	w := newSinkWriter(false)
	call := func(h http.HandlerFunc) func() error { return func() error { w.reset(); h(w, nil); return nil } }
	if err := env.bench(r, benchOp{fat, repeat(call(fatHandler))}, benchOp{slim, repeat(call(slimHandler))}); err != nil {
		return nil, err
	}
	conns := min(50, env.Budget.N(200, 2))
	sFat := newArm("fat, net/http server", "")
	sSlim := newArm("slim with pooled buckets, net/http server", "b := bucketPool.Get().(*[3]string)\ndefer bucketPool.Put(b)\nheader[\"Content-Length\"] = b[0:1] // …")
	sNative := newArm("hotpath native header API", "c.SetHeader(\"Cache-Control\", \"public,max-age=30\")\nc.SetContentType(\"text/plain\")\nc.Write(body) // Content-Length is computed")
	where, err := env.measureServers(r, "/", serverArm{sFat, "fat-nethttp", conns}, serverArm{sSlim, "slim-nethttp", conns}, serverArm{sNative, "headers-native", conns})
	if err != nil {
		return nil, err
	}
	r.Setup = fmt.Sprintf("two parts. Handler only: called directly with a reused in-memory ResponseWriter whose header map lives across calls (as the seed's 48 B/op implies). End to end: each handler in a server, %d keep-alive connections, closed loop; %s.", conns, where)
	r.SameWork = "the three handlers produce the same status, headers and body; the three servers answer the same body."
	r.compareCosts(fat, slim, costClaims{
		Time:    Claim{Quote: "1M calls: 432 ms → 188 ms (2.3×)", Ratio: 432.0 / 188},
		Garbage: Claim{Quote: "1M calls: 48 MB → 85 KB", Ratio: 48e6 / 85e3},
		Names:   [3]string{"handler time", "handler garbage"},
	})
	r.compare("in a net/http server", sFat.Name, sSlim.Name, ServerCPUUs, Claim{Quote: "\"tens of thousands of requests per second on a few machines rather than a few hundred\" (rhetoric, not a measurement: shown for context)", Info: true})
	r.compare("server allocations, slim", sFat.Name, sSlim.Name, ServerAllocs, Claim{Quote: "2,999,999 fewer arrays per 1M calls: 3 allocs/req fewer", Info: true})
	r.compare("hotpath native vs fat", sFat.Name, sNative.Name, ServerCPUUs, Claim{Quote: "hotpath's native API: no header map, no allocations", Info: true})
	r.compare("native allocations", sFat.Name, sNative.Name, ServerAllocs, Claim{Quote: "hotpath's target: 0 allocs/req", Info: true})
	r.finish(explain(r, map[outcome]string{
		partlyAsClaimed: fmt.Sprintf("the slim handler does drop its three []string allocations, but inside a real net/http server that is %.1f → %.1f allocations per request, so the server barely speeds up; hotpath's native API has %.2f",
			r.median(sFat.Name, ServerAllocs.Name), r.median(sSlim.Name, ServerAllocs.Name), r.median(sNative.Name, ServerAllocs.Name)),
		asClaimed:    "slimmer headers pay off in the handler and in the server",
		notAsClaimed: "the saving is too small to see",
	}), "The seed's slim handler writes \"public,age=30\" where the fat one writes \"public,max-age=30\": not the same response. The lab uses max-age in both.")
	return r, nil
}
