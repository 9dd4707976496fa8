package server

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// BenchmarkIdleHeap measures what an idle keep-alive connection keeps in
// the server's process, where bench/server.sh and bench/h2.sh read the
// process's RSS from outside: 5,000 connections from
// bench/peers/cmd/idleconns (another process), one request each, then
// idle past the parking; reported per connection, after a GC: the live
// heap (live-B/conn), what the runtime holds outside the heap
// (offheap-B/conn: the netpoller's descriptors), and the RSS growth once
// the freed memory is returned (rss-B/conn). Run each case in a process
// of its own: the runtime keeps the netpoller's descriptors and
// goroutines' records for reuse, so a second case in the same process
// finds them made. HOTPATH_IDLEHEAP_PROFILE=file writes a heap profile
// of the server with the connections parked.
//
//	(cd bench/peers && go build -o /tmp/idleconns ./cmd/idleconns)
//	for c in h1/native h1/handler h2c/native h2c/handler; do
//		HOTPATH_IDLECONNS=/tmp/idleconns go test ./server -run '^$' -bench "IdleHeap/$c\$" -benchtime 1x
//	done
func BenchmarkIdleHeap(b *testing.B) {
	bin := os.Getenv("HOTPATH_IDLECONNS")
	if bin == "" {
		b.Skip("HOTPATH_IDLECONNS names no idleconns binary (see the doc comment)")
	}
	for _, tc := range []struct {
		name string
		m    mode
	}{
		{"h1/native", mode{"h1", true}}, {"h1/handler", mode{"h1", false}},
		{"h2c/native", mode{"h2c", true}}, {"h2c/handler", mode{"h2c", false}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for range b.N {
				live, offHeap, rss := idleHeap(b, bin, tc.m, 5000)
				b.ReportMetric(live, "live-B/conn")
				b.ReportMetric(offHeap, "offheap-B/conn")
				b.ReportMetric(rss, "rss-B/conn")
			}
		})
	}
}

// idleHeap serves n idle connections of mode m from idleconns and
// returns the per-connection growth of the live heap, of the runtime's
// memory outside the heap, and of RSS.
func idleHeap(b *testing.B, bin string, m mode, n int) (live, offHeap, rss float64) {
	s := &Server{ErrorLog: discardLog}
	if m.native {
		s.Native = parkNative
	} else {
		s.Handler = parkHandler
	}
	// A loopback source address of its own: runs back to back would
	// exhaust one address's ports with the last run's TIME_WAITs.
	src := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(250), rand.IntN(250), 1+rand.IntN(250))
	args := []string{"-n", fmt.Sprint(n), "-hold", "600s", "-src", src}
	if m.proto == "h2c" {
		s.Protocols = h2cProtocols()
		args = append(args, "-h2c")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	settle := func() (runtime.MemStats, int) {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms, rssKB()
	}
	ms0, rss0 := settle()
	cmd := exec.Command(bin, append(args, "-addr", ln.Addr().String())...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "ready ") {
	}
	if !strings.HasPrefix(lines.Text(), fmt.Sprintf("ready open=%d ", n)) {
		b.Fatalf("idleconns: %q", lines.Text())
	}
	deadline := time.Now().Add(30 * time.Second)
	for parkedConns(s) != n {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d connections parked", parkedConns(s), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second) // the writers and workers leave too
	ms, rss1 := settle()
	if path := os.Getenv("HOTPATH_IDLEHEAP_PROFILE"); path != "" {
		// What holds the heap (go tool pprof -sample_index=inuse_space):
		// run with -test.memprofilerate=1 to see every allocation.
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	per := func(after, before uint64) float64 { return (float64(after) - float64(before)) / float64(n) }
	return per(ms.HeapAlloc, ms0.HeapAlloc), per(ms.Sys-ms.HeapSys-ms.StackSys, ms0.Sys-ms0.HeapSys-ms0.StackSys),
		float64(rss1-rss0) * 1024 / float64(n)
}

// rssKB is the process's resident set, in KB.
func rssKB() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int
			fmt.Sscan(strings.TrimSpace(v), &kb)
			return kb
		}
	}
	return 0
}
