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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

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
	srv := &server.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
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
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// newClient returns a client with its own keep-alive pool, so requests of
// a scenario share connections the way a real client's do.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport: tr,
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
var knownDifferences = map[string]string{}

// knownUsed records the keys of knownDifferences that a comparison looked
// up, for TestMain's check that no entry names a comparison that is gone.
var knownUsed sync.Map

func TestMain(m *testing.M) {
	code := m.Run()
	// Only a run of every test looks up every entry.
	if flag.Lookup("test.run").Value.String() == "" && flag.Lookup("test.skip").Value.String() == "" {
		for key := range knownDifferences {
			if _, ok := knownUsed.Load(key); !ok {
				fmt.Printf("knownDifferences[%q]: no test compares this any more: remove it\n", key)
				code = 1
			}
		}
	}
	os.Exit(code)
}

// compareLines requires the engines' observations to be the same, line by
// line, unless knownDifferences lists the difference; a listed difference
// must show.
func compareLines(t testing.TB, what string, hotpath, nethttp []string) {
	t.Helper()
	key := t.Name() + ": " + what
	reason, listed := knownDifferences[key]
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
	tr := &http.Transport{
		MaxIdleConnsPerHost: 4,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, &dials
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
