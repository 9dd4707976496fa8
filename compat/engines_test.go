package compat_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// The protocol the suite speaks, chosen with the environment variable
// COMPAT_PROTO: "h1" (the default, also when unset) for HTTP/1.1, or "h2"
// for HTTP/2 in cleartext with prior knowledge (h2c). In h2 mode hotpath
// serves h2c (Protocols with UnencryptedHTTP2, on its own HTTP/2 engine, the default),
// net/http with HTTP/1 and unencrypted HTTP/2 enabled in
// http.Server.Protocols, and every client the tests build speaks only h2c
// (protoTransport) and requires every response to be HTTP/2
// (protoClientCheck), so the mode cannot fall back to HTTP/1.1 unseen.
//
//	cd compat && COMPAT_PROTO=h2 go test -race ./...
var (
	compatProto = os.Getenv("COMPAT_PROTO")
	h2Mode      = compatProto == "h2"
	// reqProto is Request.Proto as both engines' handlers see it.
	reqProto = map[bool]string{false: "HTTP/1.1", true: "HTTP/2.0"}[h2Mode]
)

// skipInH2 skips a test that cannot apply to HTTP/2, saying why.
func skipInH2(t *testing.T, why string) {
	t.Helper()
	if h2Mode {
		t.Skip("HTTP/2 mode: " + why)
	}
}

// An engine serves an http.Handler on a loopback port until the test ends
// and returns the base URL. Every test here runs its scenario on each
// engine and compares: hotpath's adapter must give the results net/http
// gives.
type engine struct {
	name  string
	serve func(t *testing.T, h http.Handler) string
}

var engines = []engine{
	{"hotpath", serveHotpath},
	{"net/http", serveNetHTTP},
}

func serveHotpath(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &server.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0),
		Protocols: protocols(h2Mode)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != server.ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func serveNetHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	if h2Mode {
		ts.Config.Protocols = new(http.Protocols)
		ts.Config.Protocols.SetHTTP1(true)
		ts.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// protoTransport sets tr up for the suite's protocol: in h2 mode it
// speaks only HTTP/2 with prior knowledge (h2c) to http:// URLs, with no
// HTTP/1.1 to fall back to; in h1 mode it leaves tr as it is.
func protoTransport(tr *http.Transport) *http.Transport {
	if h2Mode {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return tr
}

// protoClientCheck returns the RoundTripper a test's client (or proxy)
// uses over tr: tr itself in h1 mode; in h2 mode tr behind a check that
// every response is HTTP/2 (ProtoMajor 2), and that the test got at
// least one, checked when it ends.
func protoClientCheck(t *testing.T, tr *http.Transport) http.RoundTripper {
	if !h2Mode {
		return tr
	}
	rt := &protoCheckRT{tr: tr}
	t.Cleanup(func() {
		if t.Skipped() {
			return
		}
		h2, other := rt.h2.Load(), rt.other.Load()
		if other > 0 {
			t.Errorf("HTTP/2 mode: %d responses were not HTTP/2 (%d were)", other, h2)
		} else if h2 == 0 {
			t.Errorf("HTTP/2 mode: a client got no response at all: nothing showed it speaks HTTP/2")
		}
	})
	return rt
}

// protoCheckRT counts the responses by protocol.
type protoCheckRT struct {
	tr        *http.Transport
	h2, other atomic.Int64
}

func (rt *protoCheckRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.tr.RoundTrip(req)
	if err == nil {
		if resp.ProtoMajor == 2 {
			rt.h2.Add(1)
		} else {
			rt.other.Add(1)
		}
	}
	return resp, err
}

func (rt *protoCheckRT) CloseIdleConnections() { rt.tr.CloseIdleConnections() }

// newClient returns a client with its own keep-alive pool, so requests of
// a scenario share connections the way a real client's do.
func newClient(t *testing.T) *http.Client {
	tr := protoTransport(&http.Transport{MaxIdleConnsPerHost: 4})
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport: protoClientCheck(t, tr),
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// syncBuffer is a bytes.Buffer safe for the servers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond for up to five seconds: a log line or a span is
// recorded when the handler returns, which a client may see a moment
// after its response.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// knownDifferences lists the differences between the engines that the
// tests accept, each with its reason, keyed by "TestName: what" (the test,
// subtests included, that compares, and the observation compared). Every
// other difference fails its test, and so does a listed difference that no
// longer shows: the list says what is true today. A bug in hotpath is not
// a known difference: its test stays failing until the server is fixed.
// The entries here apply in every mode; knownDifferencesH2 adds those of
// h2 mode alone.
var knownDifferences = map[string]string{}

// knownDifferencesH2 lists, as knownDifferences does, the differences
// between hotpath's HTTP/2 engine and net/http's HTTP/2 that the
// tests accept in h2 mode (COMPAT_PROTO=h2) and only there.
var knownDifferencesH2 = map[string]string{
	// server/h2_native_semantics_test.go lists the same difference.
	"TestResponseTrailers: responses": "hotpath's HTTP/2 writer holds up to 16 KiB of body before it commits the head " +
		"(one DATA frame's worth), net/http's 4 KiB: a handler that writes 4-16 KiB and returns gets a Content-Length " +
		"from hotpath (here 15,000 bytes with trailers), which tells the client more, not less",
	"TestTimeoutHandlerBodyAfterTimeout: responses": "a handler reading its request body after ServeHTTP returned " +
		"(here TimeoutHandler's inner handler) gets http.ErrBodyReadAfterClose from hotpath on both protocols, while " +
		"net/http's HTTP/2 server still hands out what was buffered (\"part2\"); reading after return is outside " +
		"the Handler contract, and on HTTP/2 no other request's bytes are at stake either way",
}

// netHTTPKeepsMultipartFiles: net/http's HTTP/2 server in Go 1.27 leaves
// the temporary files of a multipart form parsed by the handler
// (Request.MultipartForm) behind after the request, where its HTTP/1.1
// server, Go 1.26's HTTP/2 server and hotpath remove them.
var netHTTPKeepsMultipartFiles = h2Mode && strings.HasPrefix(runtime.Version(), "go1.27")

func init() {
	if netHTTPKeepsMultipartFiles {
		knownDifferencesH2["TestGinMultipartUpload: upload"] = "net/http's HTTP/2 server in Go 1.27 leaves a " +
			"multipart form's temporary files behind after the request; hotpath removes them, as net/http's " +
			"HTTP/1.1 server and Go 1.26's HTTP/2 server do"
	}
}

// knownDifference returns the reason a difference keyed key is accepted
// in this mode, if it is.
func knownDifference(key string) (string, bool) {
	if h2Mode {
		if reason, ok := knownDifferencesH2[key]; ok {
			return reason, true
		}
	}
	reason, ok := knownDifferences[key]
	return reason, ok
}

// knownUsed records the keys of knownDifferences that a comparison looked
// up, for TestMain's check that no entry names a comparison that is gone.
var knownUsed sync.Map

func TestMain(m *testing.M) {
	switch compatProto {
	case "", "h1", "h2":
	default:
		fmt.Printf("COMPAT_PROTO=%q: want h1 (the default) or h2\n", compatProto)
		os.Exit(2)
	}
	code := m.Run()
	// Only a run of every test looks up every entry.
	if flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		active := []map[string]string{knownDifferences}
		if h2Mode {
			active = append(active, knownDifferencesH2)
		}
		for _, known := range active {
			for key := range known {
				if _, ok := knownUsed.Load(key); !ok {
					fmt.Printf("knownDifferences[%q]: no test compares this any more: remove it\n", key)
					code = 1
				}
			}
		}
	}
	os.Exit(code)
}

// compareLines requires the engines' observations to be the same, line by
// line, unless knownDifferences (or knownDifferencesH2, in h2 mode) lists
// the difference; a listed difference must show.
func compareLines(t testing.TB, what string, hotpath, nethttp []string) {
	t.Helper()
	key := t.Name() + ": " + what
	reason, listed := knownDifference(key)
	knownUsed.Store(key, true)
	diff := diffLines(hotpath, nethttp)
	switch {
	case diff != "" && !listed:
		t.Errorf("%s differ between the engines:\n%s", what, diff)
	case diff != "" && listed:
		t.Logf("%s differ, as knownDifferences lists (%s):\n%s", what, reason, diff)
	case diff == "" && listed:
		t.Errorf("%s: knownDifferences[%q] lists a difference that no longer shows (%s): remove the entry",
			what, key, reason)
	}
}

// diffLines describes how two lists of lines differ, or returns "".
func diffLines(hotpath, nethttp []string) string {
	var b strings.Builder
	if len(hotpath) != len(nethttp) {
		fmt.Fprintf(&b, "hotpath has %d lines, net/http %d\n", len(hotpath), len(nethttp))
	}
	for i := range max(len(hotpath), len(nethttp)) {
		h, n := "(none)", "(none)"
		if i < len(hotpath) {
			h = hotpath[i]
		}
		if i < len(nethttp) {
			n = nethttp[i]
		}
		if h != n {
			fmt.Fprintf(&b, "line %d:\n  hotpath:  %s\n  net/http: %s\n", i, h, n)
		}
	}
	return b.String()
}

// observed collects what each engine showed, line by line, keyed by the
// engine's name. Subtests run one after the other, so a test fills it
// from its engine subtests without locking.
type observed map[string][]string

func (o observed) add(engine, format string, args ...any) {
	o[engine] = append(o[engine], fmt.Sprintf(format, args...))
}

// compare requires both engines to have shown the same (see compareLines).
func (o observed) compare(t testing.TB, what string) {
	t.Helper()
	compareLines(t, what, o["hotpath"], o["net/http"])
}

// newClientTimeout is newClient with another overall timeout, for the
// big bodies.
func newClientTimeout(t *testing.T, d time.Duration) *http.Client {
	c := newClient(t)
	c.Timeout = d
	return c
}

// dialCountingClient is newClient that counts the connections it opens,
// to see whether a request reused the previous one's connection.
func dialCountingClient(t *testing.T) (*http.Client, *atomic.Int64) {
	var dials atomic.Int64
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := protoTransport(&http.Transport{
		MaxIdleConnsPerHost: 4,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	})
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: protoClientCheck(t, tr), Timeout: 10 * time.Second}, &dials
}

// patternBlock is the stuff big bodies are made of: 64 KiB of
// pseudo-random bytes.
var patternBlock = func() []byte {
	b := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	return b
}()

// pattern is a reader of n deterministic bytes: patternBlock over and
// over, each 64 KiB block stamped with its index in its first 8 bytes so
// that a lost, repeated or reordered block changes the hash. It streams:
// a 100 MB body costs no 100 MB slice.
type pattern struct{ off, n int64 }

func newPattern(n int64) *pattern { return &pattern{n: n} }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	if int64(len(b)) > p.n-p.off {
		b = b[:p.n-p.off]
	}
	total := 0
	for len(b) > 0 {
		blk, in := p.off>>16, int(p.off&0xffff)
		c := copy(b, patternBlock[in:])
		if in < 8 {
			var stamp [8]byte
			binary.LittleEndian.PutUint64(stamp[:], uint64(blk))
			copy(b[:c], stamp[in:])
		}
		b = b[c:]
		p.off += int64(c)
		total += c
	}
	return total, nil
}

// patternSums caches patternSum's results: each size is hashed once.
var patternSums sync.Map

// patternSum is the SHA-256 of newPattern(n), in hex.
func patternSum(n int64) string {
	if s, ok := patternSums.Load(n); ok {
		return s.(string)
	}
	s, _, _ := hashStream(newPattern(n))
	patternSums.Store(n, s)
	return s
}

// hashStream reads r to its end and returns its SHA-256 in hex, its
// length, and the error that ended it (nil at EOF).
func hashStream(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, r, make([]byte, 64<<10))
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// errString is err's message, or "<nil>", with what differs run to run
// (loopback ports) taken out.
func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return portRE.ReplaceAllString(err.Error(), "127.0.0.1:PORT")
}

var portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// recordTB is a testing.TB that records the failures compareLines
// reports instead of failing, for TestCompareLines.
type recordTB struct {
	testing.TB
	name   string
	errors []string
}

func (r *recordTB) Name() string        { return r.name }
func (r *recordTB) Helper()             {}
func (r *recordTB) Logf(string, ...any) {}
func (r *recordTB) Errorf(format string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}

// TestCompareLines checks the comparison every test relies on: an
// unlisted difference fails, a listed one passes, and a listed one that
// no longer shows fails.
func TestCompareLines(t *testing.T) {
	const key = "TestCompareLines/fake: bodies"
	knownDifferences[key] = "a difference this test makes up"
	defer delete(knownDifferences, key)
	defer knownUsed.Delete(key)
	for _, c := range []struct {
		name             string
		hotpath, nethttp []string
		wantFail         bool
	}{
		{"TestCompareLines/other", []string{"a", "b"}, []string{"a", "b"}, false},
		{"TestCompareLines/other", []string{"a", "b"}, []string{"a", "c"}, true},
		{"TestCompareLines/other", []string{"a"}, []string{"a", "b"}, true},
		{"TestCompareLines/fake", []string{"a", "b"}, []string{"a", "c"}, false},
		{"TestCompareLines/fake", []string{"a", "b"}, []string{"a", "b"}, true},
	} {
		r := &recordTB{TB: t, name: c.name}
		compareLines(r, "bodies", c.hotpath, c.nethttp)
		if failed := len(r.errors) > 0; failed != c.wantFail {
			t.Errorf("%s %q vs %q: failed=%v %q, want failed=%v", c.name, c.hotpath, c.nethttp, failed, r.errors, c.wantFail)
		}
	}
}

// protocols is the server's Protocols: h2c beside HTTP/1.1 when h2 is
// set (the h2c runs), nil (the defaults) otherwise.
func protocols(h2 bool) *http.Protocols {
	if !h2 {
		return nil
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}
