// Command h2attack runs one attack of internal/h2attack against an
// HTTP/2 server for bench/h2attack.sh, and prints one row of its table:
// the server's CPU over the attack (from /proc/PID/stat), its peak RSS
// and threads (from /proc/PID/status), the latency of probe requests
// made on connections of their own beside the attack, and what the
// attacker saw.
//
// The attack runs again each time it ends, until -duration has passed,
// as a determined attacker would: a flood the server cuts after a
// thousand frames is a flood of new connections. It leaves a connection
// as soon as the server sends GOAWAY (h2attack.Config.LeaveOnGoAway), so
// that a server that keeps connections open after GOAWAY for a while
// (net/http: 1 s) is not attacked more slowly for it.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/internal/h2attack"
)

const usage = `Usage: h2attack -addr HOST:PORT -attack NAME [flags]
       h2attack -list | -header

Runs one HTTP/2 attack against a server you run, again and again for
-duration (leaving each connection as soon as the server sends GOAWAY),
and prints one table row: the server's CPU (%% of one core, from
/proc/PID/stat utime+stime over the attack), its peak RSS (VmHWM) and
peak thread count (from /proc/PID/status; -pid), its peak goroutine
count (GET /goroutines of hotpath serve over HTTP/1.1, every 100 ms), the
latency of a probe
GET / on a fresh connection every -probe-every (p50, p99; failures
counted), and what the attacker saw. bench/h2attack.sh runs it for
every engine and attack.

Attacks:
%s
Flags:
`

const example = `
Example:
  hotpath serve --h2c --addr 127.0.0.1:18300 &
  h2attack -addr 127.0.0.1:18300 -pid $! -attack zero-window -duration 5s -label hotpath
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("h2attack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr     = fs.String("addr", "", "the server's `host:port`")
		useTLS   = fs.Bool("tls", false, "dial TLS with ALPN h2 (certificate unchecked) instead of h2c with prior knowledge")
		name     = fs.String("attack", "", "the attack to run (see the list above)")
		duration = fs.Duration("duration", 10*time.Second, "how long to attack")
		conns    = fs.Int("conns", 4, "rapid-reset, made-you-reset-*, reconnect: connections kept busy, each dialed again when cut")
		path     = fs.String("path", "", "the path the attack requests (\"\": the attack's default)")
		rate     = fs.Int("rate", 2<<20, "slow-reader: bytes read a second")
		hold     = fs.Duration("hold", time.Second, "partial-frame attacks: how long each holds its cut frame")
		pid      = fs.Int("pid", 0, "the server's process `id`, for its CPU, RSS and threads (0: not measured)")
		label    = fs.String("label", "", "the engine's name, first column of the row")
		every    = fs.Duration("probe-every", 100*time.Millisecond, "how often to probe (one probe at a time)")
		from     = fs.String("from", "127.0.0.2", "the local `IP` address of the probes and the goroutine sampler: another client than the attacker, which dials from the system's choice (127.0.0.1 on loopback); \"\" for the system's choice")
		list     = fs.Bool("list", false, "print the attacks' names, one a line, and exit")
		header   = fs.Bool("header", false, "print the table's header and exit")
	)
	fs.Usage = func() {
		var b strings.Builder
		for _, a := range h2attack.All {
			fmt.Fprintf(&b, "  %-33s %-8s want: %s\n", a.Name, a.Kind, a.Want)
		}
		fmt.Fprintf(fs.Output(), usage, b.String())
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), example)
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	switch {
	case *list:
		for _, a := range h2attack.All {
			fmt.Fprintln(stdout, a.Name)
		}
		return 0
	case *header:
		fmt.Fprintf(stdout, "%-10s %-33s %8s %9s %7s %10s %9s %9s %8s  %s\n",
			"engine", "attack", "CPU %", "RSS MB", "threads", "goroutines", "probe p50", "p99 ms", "failed", "outcome")
		return 0
	}
	a, ok := h2attack.Lookup(*name)
	if !ok || *addr == "" {
		fmt.Fprintf(stderr, "h2attack: need -addr and -attack with one of: %s (see -h)\n", names())
		return 2
	}
	// An attacker in a hurry: on to the next connection as soon as the
	// server sends GOAWAY, however long the server keeps the old one.
	cfg := h2attack.Config{Addr: *addr, TLS: *useTLS, Path: *path, Conns: *conns, Rate: *rate, Hold: *hold, LeaveOnGoAway: true}

	var (
		started   = make(chan struct{})
		startOnce sync.Once
		cpu0      int64
		t0        time.Time
		proc      procStats
	)
	cfg.OnHold = func() {
		startOnce.Do(func() {
			cpu0, t0 = proc.cpuTicks(*pid), time.Now()
			close(started)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()

	// Threads and goroutines, sampled; probes, one at a time, from the
	// attack's start.
	var wg sync.WaitGroup
	gor := goroutineSampler{url: "http://" + *addr + "/goroutines", from: *from, tls: *useTLS}
	if *useTLS {
		gor.url = "https://" + *addr + "/goroutines"
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			proc.sampleThreads(*pid)
			gor.sample()
			sleep(ctx, 100*time.Millisecond)
		}
	})
	var lat []time.Duration
	failed := 0
	wg.Go(func() {
		select {
		case <-started:
		case <-ctx.Done():
			return
		}
		pcfg := h2attack.Config{Addr: *addr, TLS: *useTLS, LocalAddr: *from}
		for ctx.Err() == nil {
			d, err := h2attack.Probe(context.Background(), pcfg)
			if err != nil {
				failed++
			} else {
				lat = append(lat, d)
			}
			sleep(ctx, *every)
		}
	})

	var sum summary
	for ctx.Err() == nil {
		r, err := a.Run(ctx, cfg)
		sum.add(r, err, ctx.Err() != nil)
		if err != nil && ctx.Err() == nil {
			sleep(ctx, 100*time.Millisecond) // not a hot loop of failed dials
		}
	}
	cfg.OnHold() // a run that never held: measure from here (an empty window)
	cpu1, window := proc.cpuTicks(*pid), time.Since(t0)
	wg.Wait()
	proc.sampleThreads(*pid)
	gor.sample()

	cpuCol, rssCol, thrCol, gorCol := "-", "-", "-", "-"
	if gor.max > 0 {
		gorCol = strconv.Itoa(gor.max)
	}
	if *pid > 0 {
		cpuCol = fmt.Sprintf("%.1f", float64(cpu1-cpu0)/clockTicks/window.Seconds()*100)
		rssCol = fmt.Sprintf("%.1f", float64(proc.hwmKB(*pid))/1024)
		thrCol = strconv.Itoa(proc.maxThreads)
	}
	p50, p99 := "-", "-"
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		p50 = ms(lat[(len(lat)-1)/2])
		p99 = ms(lat[max(0, (len(lat)*99+99)/100-1)])
	}
	fmt.Fprintf(stdout, "%-10s %-33s %8s %9s %7s %10s %9s %9s %8s  %s\n",
		*label, a.Name, cpuCol, rssCol, thrCol, gorCol, p50, p99, fmt.Sprintf("%d/%d", failed, failed+len(lat)), sum.String(a))
	return 0
}

func names() string {
	var n []string
	for _, a := range h2attack.All {
		n = append(n, a.Name)
	}
	return strings.Join(n, ", ")
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/1e6) }

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// summary adds up the runs of an attack.
type summary struct {
	runs, errs, conns, closed, goAways, streams, acked int
	codes                                              map[string]int
	data                                               int64
	statuses                                           map[string]int
	lastErr                                            error
}

func (s *summary) add(r h2attack.Result, err error, cut bool) {
	if err != nil && cut {
		return // the duration ended the run as it set up
	}
	s.runs++
	if err != nil {
		s.errs++
		s.lastErr = err
	}
	s.conns += r.Conns
	s.closed += r.ServerClosed
	s.goAways += r.GoAways
	s.streams += r.Streams
	s.data += r.DataRead
	if r.PingAcked {
		s.acked++
	}
	if r.GoAways > 0 {
		if s.codes == nil {
			s.codes = map[string]int{}
		}
		s.codes[r.GoAwayCode.String()]++
	}
	if r.Status != "" {
		if s.statuses == nil {
			s.statuses = map[string]int{}
		}
		s.statuses[r.Status]++
	}
}

// String is the outcome column: what the attacker saw over its runs.
func (s *summary) String(a h2attack.Attack) string {
	parts := []string{fmt.Sprintf("%d runs, %d conns, %d closed by server", s.runs, s.conns, s.closed)}
	if a.Name == "rapid-reset" {
		parts = append(parts, fmt.Sprintf("%d streams", s.streams))
	}
	if s.goAways > 0 {
		parts = append(parts, "GOAWAY "+counts(s.codes))
	}
	if strings.HasPrefix(a.Name, "partial-frame") && a.Name != "partial-frame-eof" && a.Name != "partial-frame-close" {
		parts = append(parts, fmt.Sprintf("PING acked %d/%d", s.acked, s.runs))
	}
	if a.Name == "header-list-too-large" && len(s.statuses) > 0 {
		parts = append(parts, ":status "+counts(s.statuses))
	}
	if s.data > 0 && a.Name == "slow-reader" {
		parts = append(parts, fmt.Sprintf("%.1f MB of body", float64(s.data)/1e6))
	}
	if s.errs > 0 {
		parts = append(parts, fmt.Sprintf("%d errors (last: %v)", s.errs, s.lastErr))
	}
	return strings.Join(parts, ", ")
}

// counts writes a count map as "A x3, B x1", largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s x%d", k, m[k])
	}
	return strings.Join(keys, ", ")
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime:
// 100 on every Linux architecture Go runs on.
const clockTicks = 100

// procStats reads a process's counters from /proc.
type procStats struct {
	mu         sync.Mutex
	maxThreads int
}

// cpuTicks returns the process's utime+stime in clock ticks (0 without
// a pid).
func (p *procStats) cpuTicks(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) in its
	// parentheses: state is field 3, utime 14, stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// status returns a field of /proc/PID/status, as a number (kB for sizes).
func status(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

func (p *procStats) sampleThreads(pid int) {
	if pid <= 0 {
		return
	}
	n := status(pid, "Threads")
	p.mu.Lock()
	p.maxThreads = max(p.maxThreads, n)
	p.mu.Unlock()
}

// hwmKB is the process's peak resident set, in kB.
func (p *procStats) hwmKB(pid int) int { return status(pid, "VmHWM") }

// goroutineSampler keeps the highest goroutine count a server's
// /goroutines endpoint answered (hotpath serve's, on either engine), over
// an HTTP/1.1 connection of its own; 0 if it never answered.
type goroutineSampler struct {
	url    string
	from   string // the local IP address to dial from; "" for any
	tls    bool   // the server speaks TLS (its certificate unchecked)
	client http.Client
	max    int
}

func (g *goroutineSampler) sample() {
	if g.client.Timeout == 0 {
		g.client.Timeout = time.Second
		tr := &http.Transport{} // HTTP/1.1, kept alive
		if g.from != "" {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(g.from)}}
			tr.DialContext = d.DialContext
		}
		if g.tls {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		}
		g.client.Transport = tr
	}
	resp, err := g.client.Get(g.url)
	if err != nil {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	resp.Body.Close()
	if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && resp.StatusCode == http.StatusOK {
		g.max = max(g.max, n)
	}
}
