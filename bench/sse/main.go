// Command sse holds many long-lived server-sent event streams against a
// server, all from one client address (as a reverse proxy or a fleet of
// browsers behind one NAT would), for bench/sse.sh: it checks that a
// server's protective defaults refuse none of them. Each stream is a GET
// of /events/{s} (hotpath serve's endpoint: one event a second); the
// streams open at -open-rate a second, are held until -hold after the
// last opened, and each must answer 200 and keep its events coming (no
// gap of more than -max-gap) until then.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
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
	"sync/atomic"
	"time"
)

const usage = `Usage: sse -addr HOST:PORT [flags]

Opens -streams server-sent event streams (GET /events/{s} of hotpath serve)
over HTTP/1.1 (one connection each), h2c or h2 (TLS; as many streams a
connection as the server allows, new connections as needed), all from one
client address, holds them for -hold, and prints what came back: how many
answered 200, how many kept their events coming to the end, the errors, and
the server's peak RSS (-pid) and goroutines (GET /goroutines from -probe-from).
Exit status 1 if any stream failed.

Flags:
`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sse", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr     = fs.String("addr", "", "the server's `host:port`")
		proto    = fs.String("proto", "h1", "h1, h2c (cleartext HTTP/2 with prior knowledge) or h2 (TLS, certificate unchecked)")
		streams  = fs.Int("streams", 15000, "streams to hold")
		hold     = fs.Duration("hold", 60*time.Second, "how long every stream is held once the last has opened")
		openRate = fs.Int("open-rate", 2000, "streams opened a second")
		maxGap   = fs.Duration("max-gap", 5*time.Second, "the longest wait for a stream's next event before it counts as stalled")
		pid      = fs.Int("pid", 0, "the server's process `id`, for its peak RSS (VmHWM)")
		from     = fs.String("probe-from", "127.0.0.2", "the local `IP` of the goroutine probe (not the streams' client)")
	)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *addr == "" || *streams <= 0 || *openRate <= 0 {
		fmt.Fprintln(stderr, "sse: need -addr, and -streams and -open-rate above 0 (see -h)")
		return 2
	}
	client, scheme, err := streamClient(*proto)
	if err != nil {
		fmt.Fprintln(stderr, "sse:", err)
		return 2
	}
	ramp := time.Duration(float64(*streams) / float64(*openRate) * float64(time.Second))
	end := time.Now().Add(ramp + *hold)
	seconds := int((ramp+*hold)/time.Second) + 10 // each stream outlasts the hold
	url := fmt.Sprintf("%s://%s/events/%d", scheme, *addr, seconds)

	var (
		ok, opened atomic.Int64
		held       atomic.Int64
		events     atomic.Int64
		mu         sync.Mutex
		errs       = map[string]int{}
		wg         sync.WaitGroup
	)
	fail := func(what string) {
		mu.Lock()
		errs[what]++
		mu.Unlock()
	}
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	tick := time.NewTicker(time.Second / time.Duration(min(*openRate, 1000)))
	perTick := max(1, *openRate/1000)
	start := time.Now()
	for i := 0; i < *streams; {
		<-tick.C
		for k := 0; k < perTick && i < *streams; k, i = k+1, i+1 {
			wg.Go(func() {
				opened.Add(1)
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				resp, err := client.Do(req)
				if err != nil {
					fail("request: " + shortErr(err))
					return
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					fail("status " + resp.Status)
					return
				}
				ok.Add(1)
				if err := follow(ctx, resp.Body, *maxGap, &events); err != "" {
					fail(err)
					return
				}
				held.Add(1)
			})
		}
	}
	tick.Stop()
	openedIn := time.Since(start)
	var peakGoroutines int
	probe := probeClient(*from, *proto == "h2")
	for time.Now().Before(end) {
		if n := goroutines(probe, scheme+"://"+*addr+"/goroutines"); n > peakGoroutines {
			peakGoroutines = n
		}
		time.Sleep(time.Second)
	}
	wg.Wait()
	mu.Lock()
	failed := 0
	var kinds []string
	for k, n := range errs {
		failed += n
		kinds = append(kinds, fmt.Sprintf("%d × %s", n, k))
	}
	mu.Unlock()
	sort.Strings(kinds)
	rss := "-"
	if *pid > 0 {
		rss = fmt.Sprintf("%.1f MB", float64(statusKB(*pid, "VmHWM"))/1024)
	}
	fmt.Fprintf(stdout, "%s: %d streams opened in %v from one address, held %v: %d answered 200, %d held to the end, %d failed; %d events; server peak RSS %s, peak goroutines %d\n",
		*proto, opened.Load(), openedIn.Round(time.Millisecond), *hold, ok.Load(), held.Load(), failed, events.Load(), rss, peakGoroutines)
	for _, k := range kinds {
		fmt.Fprintln(stdout, "  failed:", k)
	}
	if failed > 0 || held.Load() != int64(*streams) {
		return 1
	}
	return 0
}

// streamClient returns the one client every stream shares, for proto, and
// the URL scheme it speaks.
func streamClient(proto string) (*http.Client, string, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: -1, DisableCompression: true}
	scheme := "http"
	switch proto {
	case "h1":
	case "h2c":
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	case "h2":
		scheme = "https"
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(64)}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
	default:
		return nil, "", fmt.Errorf("-proto %q: want h1, h2c or h2", proto)
	}
	// No Timeout: it would cut the streams, which every request's context
	// (main's deadline, the end of the hold) bounds instead.
	return &http.Client{Transport: tr}, scheme, nil //nolint:client-timeout // streams, bounded by each request's context
}

// follow reads a stream's events until ctx ends (the hold is over: the
// stream held), returning "" then, or what went wrong before.
func follow(ctx context.Context, body io.Reader, maxGap time.Duration, events *atomic.Int64) string {
	lines := make(chan error, 1)
	got := make(chan struct{}, 1)
	go func() {
		br := bufio.NewReader(body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				lines <- err
				return
			}
			if strings.HasPrefix(line, "data: ") {
				events.Add(1)
				select {
				case got <- struct{}{}:
				default:
				}
			}
		}
	}()
	gap := time.NewTimer(maxGap)
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return ""
		case err := <-lines:
			if ctx.Err() != nil {
				return ""
			}
			return "stream ended early: " + shortErr(err)
		case <-got:
			gap.Reset(maxGap)
		case <-gap.C:
			return fmt.Sprintf("no event for %v", maxGap)
		}
	}
}

func shortErr(err error) string {
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Err != nil {
		return ne.Op + ": " + ne.Err.Error()
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 80 {
		s = s[i+2:]
	}
	return s
}

func probeClient(from string, overTLS bool) *http.Client {
	tr := &http.Transport{}
	if from != "" {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
		tr.DialContext = d.DialContext
	}
	if overTLS {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	}
	return &http.Client{Transport: tr, Timeout: 2 * time.Second}
}

func goroutines(c *http.Client, url string) int {
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// statusKB reads a kB field of /proc/PID/status; 0 if absent.
func statusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
