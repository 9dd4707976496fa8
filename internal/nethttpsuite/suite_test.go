package nethttpsuite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestNetHTTPServerTests runs Go's own net/http server tests, from the Go
// that runs this test, on net/http's server and on hotpath's, and fails on
// every unit that passes on net/http only and is not listed in
// Deliberate. NETHTTPSUITE_KEEP=1 keeps the generated package;
// NETHTTPSUITE_RUN=regexp narrows the run.
func TestNetHTTPServerTests(t *testing.T) {
	runSuite(t, ServerSuite, "server", Deliberate, Open)
}

// TestNetHTTPClientTests runs Go's own net/http client and transport
// tests on net/http's transport and on hotpath's client.Transport (built
// by client.FromHTTPTransport from each test's *http.Transport), against
// net/http's servers, and fails on every unit that passes on net/http
// only and is not listed in ClientDeliberate. The same variables as
// TestNetHTTPServerTests apply.
func TestNetHTTPClientTests(t *testing.T) {
	runSuite(t, ClientSuite, "client", ClientDeliberate, ClientOpen)
}

func runSuite(t *testing.T, suite Suite, side string, deliberate, open map[string]string) {
	if testing.Short() {
		t.Skipf("runs net/http's %s tests twice (minutes)", side)
	}
	if os.Getenv("NETHTTPSUITE_SKIP") != "" {
		t.Skip("NETHTTPSUITE_SKIP is set (CI runs this suite in a step of its own)")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	goroot := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(goroot, "src", "net", "http", "serve_test.go")); err != nil {
		t.Skipf("this Go has no net/http tests to run: %v", err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil { // a fresh clone has none
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "gen-")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("NETHTTPSUITE_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(dir) })
	} else {
		t.Logf("generated package kept in %s", dir)
	}
	g, err := GenerateSuite(suite, goroot, dir, "github.com/hotpathhq/hotpath/internal/nethttpsuite/"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for name, why := range g.Dropped {
		if strings.HasPrefix(name, "Test") || os.Getenv("NETHTTPSUITE_KEEP") != "" {
			left = append(left, name+": "+why)
		}
	}
	sort.Strings(left)
	t.Logf("%d %s tests start a server; %d tests left out, they need net/http's internals:\n\t%s", len(g.ServerRun), side, len(left), strings.Join(left, "\n\t"))

	ctx := context.Background()
	pattern := os.Getenv("NETHTTPSUITE_RUN")
	const timeout = 2 * time.Minute
	start := time.Now()
	net, netLog, err := Run(ctx, dir, "nethttp", pattern, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on net/http: %d units in %v", len(net), time.Since(start).Round(time.Second))
	for _, v := range variantsOf(suite) {
		t.Run(v.name, func(t *testing.T) {
			compareVariant(t, v, dir, net, netLog, g, deliberate, open, side, pattern, timeout)
		})
	}
}

// A variant is how the swapped side is built: the swap package's file for
// a build tag.
type variant struct {
	name string // as the report says it
	tag  string // build tag of its swap file
}

// variantsOf are the swapped sides suite runs: the server suite twice,
// with the one-line swap (http.Server becomes server.Server) and with the
// tests' http.Server mapped to a server.Server field by field when it
// serves (swap_mapped.go.txt), as a user who keeps an *http.Server would;
// the client suite once.
func variantsOf(suite Suite) []variant {
	if suite.Client {
		return []variant{{"hotpath", ""}}
	}
	return []variant{{"hotpath", ""}, {"hotpath mapped from http.Server", "mapped"}}
}

// compareVariant runs the suite in dir on v and fails on every unit that
// passes on net/http (net) only and is not listed in deliberate.
func compareVariant(t *testing.T, v variant, dir string, net Results, netLog string, g *Generated, deliberate, open map[string]string, side, pattern string, timeout time.Duration) {
	ctx := context.Background()
	start := time.Now()
	hot, hotLog, err := Run(ctx, dir, v.tag, pattern, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on %s: %d units in %v", v.name, len(hot), time.Since(start).Round(time.Second))
	// A crash ends a test binary; its remaining units run again, so the
	// counts below hold. A crash on hotpath's side that net/http's run
	// does not have fails this test even when the units pass on their
	// second run: it is a defect (a goroutine of the server's left
	// blocked in a testing/synctest bubble was one), hidden by the rerun.
	netCrashed := false
	for _, l := range strings.Split(netLog, "\n") {
		if strings.HasPrefix(l, "panic: ") {
			netCrashed = true
			t.Logf("a test binary crashed on net/http (its remaining units run again): %s", l)
		}
	}
	for _, l := range strings.Split(hotLog, "\n") {
		switch {
		case !strings.HasPrefix(l, "panic: "):
		case netCrashed || strings.HasPrefix(l, "panic: test timed out"): // hangs are counted per unit below
			t.Logf("a test binary crashed on %s (its remaining units run again): %s", v.name, l)
		default:
			t.Errorf("a test binary crashed on %s and not on net/http (its remaining units run again): %s", v.name, l)
		}
	}
	for _, r := range []struct {
		server string
		res    Results
	}{{"net/http", net}, {v.name, hot}} {
		for u, o := range r.res {
			if o == Hang {
				t.Logf("on %s, %s hung (a timeout of %v; the run went on without its test)", r.server, u, timeout)
			}
		}
	}
	c := Compare(net, hot, g.ServerRun, deliberate, open)
	if c.Units == 0 && pattern == "" {
		t.Fatalf("no unit of net/http's %s tests ran", side)
	}
	// A unit that differs once runs again, alone, on both servers: a
	// difference is one that holds.
	if len(c.Unexpected) > 0 {
		var tops []string
		for _, u := range c.Unexpected {
			if strings.HasSuffix(u, "(hang)") {
				continue // a hang costs a timeout: once is enough
			}
			top, _, _ := strings.Cut(u, "/")
			top, _, _ = strings.Cut(top, " ")
			tops = append(tops, "^"+regexp.QuoteMeta(top)+"$")
		}
		again := strings.Join(tops, "|")
		if again == "" {
			again = "^$"
		}
		net2, _, err := Run(ctx, dir, "nethttp", again, timeout)
		if err != nil {
			t.Fatal(err)
		}
		hot2, log2, err := Run(ctx, dir, v.tag, again, timeout)
		if err != nil {
			t.Fatal(err)
		}
		for u, o := range net2 {
			if net[u] == Pass && o != Pass {
				net[u] = o // flaky on net/http itself: not a difference
			}
		}
		for u, o := range hot2 {
			if o == Pass {
				hot[u] = Pass
			}
		}
		hotLog += "\n(second run)\n" + log2
		c = Compare(net, hot, g.ServerRun, deliberate, open)
	}
	t.Logf("%d units of net/http's %s tests (Go %s), per mode:\n%s", c.Units, side, runtime.Version(), c.Table())
	for _, u := range c.Stale {
		t.Logf("listed as deliberate or open, yet passes on hotpath: %s", u)
	}
	for _, u := range c.Open {
		t.Logf("open difference: %s", u)
	}
	for _, u := range c.Gained {
		t.Logf("passes on hotpath only: %s", u)
	}
	if len(c.Unexpected) > 0 {
		t.Errorf("%d units pass on net/http and not on hotpath:\n\t%s", len(c.Unexpected), strings.Join(c.Unexpected, "\n\t"))
		t.Logf("hotpath's failures:\n%s", hotLog)
	}
}
