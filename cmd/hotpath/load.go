package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

const loadExample = `
Closed loop (-c connections, each sends as soon as its last response is in) measures
throughput; its latency hides stalls in fewer samples. Open loop (--rate) sends on a fixed
schedule and times each request from when it was due, so stalls show (coordinated omission
corrected, as wrk2 does). Every response's protocol is checked against --proto.

Examples:
  hotpath load -c 50 -d 10s http://127.0.0.1:8080/
  hotpath load --rate 10000 -c 50 -d 30s --html report.html http://127.0.0.1:8080/
  hotpath load --proto h2 -k -c 8 -n 100000 https://localhost:8443/
  hotpath load --body close -c 10 -d 5s http://127.0.0.1:8080/bytes/1000   # what closing bodies unread costs
  hotpath load --targets mix.txt -c 50 -d 30s     # vegeta's target files, weighted in JSON
  hotpath load --stages 30s:1000,1m:1000,30s:0 -c 50 http://127.0.0.1:8080/   # ramp up, hold, down
  hotpath load --rate 500 -d 30s --threshold 'p99<50ms' --threshold 'errors<0.1%' \
      --threshold 'rate>99%' http://127.0.0.1:8080/   # a CI gate: exit 3 if one fails
  hotpath load --json -d 30s http://host:8080/ > a.json   # on each machine, then:
  hotpath load merge a.json b.json

Beyond one machine: run shard i of N on each machine (or pod), started together, then merge:
  hotpath load --shard 0/4 --start-at 2026-11-24T10:00:00Z --run-id r1 --rate 10000 -c 40 \
      -d 60s --json http://host:8080/ > s0.json        # ... --shard 3/4 > s3.json
  hotpath load merge s0.json s1.json s2.json s3.json
  Each shard opens its part of -c, sends its part of --rate on the run's one schedule (the
  shards' arrivals interleave) and takes its part of -n; merge checks the run id, drops a
  shard reported twice, names missing shards and reports the start skew.

Merge: hotpath load merge [--json] [--hgrm FILE] [--html FILE] RESULT.json...
  merges runs made at the same time from several machines, exactly (histograms add up
  bucket by bucket), and prints the combined summary. Runs that are not one load (another
  URL, mode or protocol; started or lasting more than max(1s, 10%) apart) are refused
  (exit 2); see hotpath load merge -h.

Exit codes:
  0  the run measured something: at least one request got a 1xx-3xx response (errors
     and 4xx/5xx responses beside those are counted in the summary, not failures)
  1  the run failed: no request got a response (every one an error: the summary's
     Errors line says of which kind, e.g. connection refused; a run refused for its whole
     first second stops then), or every response had a
     4xx/5xx status; or a response came over another protocol than --proto; or the run
     was interrupted; or an output file could not be written
  2  usage: a bad flag, value, URL or combination of flags (nothing was run)
  3  the run measured, and a --threshold failed (each failed one is named on stderr with
     its measured value): a regression, where 1 and 2 are a broken pipeline

The --json schema is described in load/README.md and load/schema.json.
`

// exitThreshold is the exit code of a run (or merge) whose measurement
// worked and a threshold failed: distinct from usage (2) and from a run
// that failed (1), so CI can tell a regression from a broken pipeline.
const exitThreshold = 3

// thresholdVerdict names every threshold res failed on stderr and returns
// the exit code: exitThreshold if one failed, else 0.
func thresholdVerdict(cmd string, res *load.Result, stderr io.Writer) int {
	code := 0
	for _, t := range res.Thresholds {
		if !t.Pass {
			code = exitThreshold
			note := ""
			if t.Note != "" {
				note = ": " + t.Note
			}
			fmt.Fprintf(stderr, "hotpath %s: threshold failed: %s (measured %s%s)\n", cmd, t.Threshold, t.Measured, note)
		}
	}
	return code
}

// runLoad implements `hotpath load`.
func runLoad(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "merge" {
		return runLoadMerge(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "k8s" {
		return runLoadK8s(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "collect" {
		return runLoadCollect(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var cfg load.Config
	fs.IntVar(&cfg.Connections, "c", load.DefaultConnections, "`connections` to open (closed loop: requests in flight)")
	durFlag := &secondsFlag{d: &cfg.Duration}
	fs.Var(durFlag, "d", "`duration` of the run, e.g. 30s or 2m (a bare number is seconds; default 10s unless -n is given)")
	fs.Int64Var(&cfg.Requests, "n", 0, "stop after this many `requests` in all")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop: send `R` requests per second in all, latency timed from each one's intended send time")
	targetsFile := fs.String("targets", "", "send a mix of requests from `FILE`, in vegeta's formats (HTTP text: \"METHOD URL\", header lines, @body-file, blank line between; or JSON lines {\"method\",\"url\",\"header\",\"body\" (base64)} with an optional \"weight\"); each in proportion to its weight, all on one host; the URL argument may then be left out")
	connStages := fs.String("conn-stages", "", "closed loop with a ramping number of connections: `DUR:CONNS,...` each stage moves the connections sending in a straight line to CONNS over DUR, from the previous stage's (0 at first), e.g. 30s:10,1m:50,30s:0 (instead of -c and -d)")
	stages := fs.String("stages", "", "open loop with a ramping rate: `DUR:RATE,...` each stage moves the rate in a straight line to RATE over DUR, from the previous stage's (0 at first), e.g. 30s:1000,1m:1000,30s:0 (instead of --rate and -d)")
	fs.IntVar(&cfg.Streams, "streams", 1, "HTTP/2 (--proto h2 or h2c): `requests` in flight on each connection at once (h2load's -m); -c 50 --streams 10 keeps 500 in flight on 50 connections")
	proto := fs.String("proto", "h1", "`protocol` every response must use: h1, h2 (TLS) or h2c (cleartext HTTP/2); another one fails the run")
	engine := fs.String("engine", "auto", "`engine`: fast (hotpath's own wire-level engine: cleartext h1, h2 and h2c), hotpath (hotpath's client.Transport: h2, h2c, TLS), nethttp (net/http: TLS, h2, h2c, httptrace), auto (fast for cleartext h1, h2 and h2c; nethttp for h1 over TLS)")
	body := fs.String("body", "drain", "what to do with each response `body`: drain, close (unread), limit:N (read N bytes, then close)")
	keepalive := fs.Bool("keepalive", true, "reuse connections; --keepalive=false sends Connection: close and opens one per request")
	fs.StringVar(&cfg.Method, "m", "GET", "request `method` (default POST with --data or --data-binary, as curl)")
	fs.StringVar(&cfg.Method, "X", "GET", "request `method` (as curl's -X; the same as -m)")
	hdr := headerFlags(http.Header{})
	fs.Var(hdr, "H", "add a request header `\"Name: value\"` (repeatable)")
	fs.Var(&dataFlag{body: &cfg.Body}, "data", "request `body` to send with every request, as a POST unless -m says otherwise; @file reads a file, without its CR and LF (as curl)")
	fs.Var(&dataFlag{body: &cfg.Body, binary: true}, "data-binary", "request `body` to send with every request, as a POST unless -m says otherwise; @file reads a file byte for byte")
	cfg.Timeout = load.DefaultTimeout
	timeoutFlag := &secondsFlag{d: &cfg.Timeout}
	fs.Var(timeoutFlag, "timeout", "per-request `timeout` (connect and response), e.g. 10s (a bare number is seconds)")
	insecure := fs.Bool("k", false, "do not verify the server's TLS certificate")
	jsonOut := fs.Bool("json", false, "write the result as JSON to stdout instead of the summary")
	hgrm := fs.String("hgrm", "", "write the latency percentile distribution (HdrHistogram .hgrm, ms) to `file` (- for stdout)")
	html := fs.String("html", "", "write a self-contained HTML report (latency over time, percentiles) to `file`")
	summaryMD := fs.String("summary-md", "", "write a Markdown summary (figures, thresholds) to `file`, e.g. $GITHUB_STEP_SUMMARY")
	quiet := fs.Bool("quiet", false, "no progress bar")
	shard := fs.String("shard", "", "run shard `i/N` (from 0) of a load split over N processes or machines: -c, --rate and -n stay the whole run's, this process takes its part; default from JOB_COMPLETION_INDEX and HOTPATH_SHARDS (a Kubernetes Indexed Job)")
	startAt := fs.String("start-at", "", "wait and start at `TIME` (RFC 3339, or unix milliseconds): every shard starts together")
	fs.StringVar(&cfg.RunID, "run-id", "", "a label every shard's result carries: merge refuses shards of other runs")
	var thresholds thresholdFlags
	fs.Var(&thresholds, "threshold", "fail the run (exit 3) unless `COND` holds on the result (repeatable): p99<50ms, p99.9<200ms, max<1s, errors<0.1%, rate>99% (of --rate), rps>1000, status:5xx<1, status:503<0.5%")
	resultLine := fs.Bool("result-line", false, "print the result as one line, \"hotpath-load-result: \" and compact JSON, instead of the summary (for collecting from pod logs)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: hotpath load [flags] URL\n       hotpath load merge [flags] RESULT.json...   merge results of runs made together\n       hotpath load k8s --shards N [flags] URL      print a Kubernetes Job that runs the load as N shards\n       hotpath load collect --job NAME              merge the results of that Job's pods\n\nGenerates HTTP load and reports latency percentiles (HdrHistogram), throughput,\nconnection reuse, phase timings, status codes, errors and the generator's own CPU.\n\nFlags:")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), loadExample)
	}
	pos, rc, ok := parseFlags(fs, args, true, stdout, stderr)
	if !ok {
		return rc
	}
	if *targetsFile != "" {
		f, err := os.Open(*targetsFile)
		if err != nil {
			printErr(stderr, "load", "--targets: ", err)
			return 2
		}
		cfg.Targets, err = parseTargets(f, filepath.Dir(*targetsFile))
		f.Close()
		if err != nil {
			printErr(stderr, "load", *targetsFile+": ", err)
			return 2
		}
		if len(pos) == 0 {
			pos = []string{cfg.Targets[0].URL}
		}
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "hotpath load: want one URL, got %d arguments (see hotpath load -h)\n", len(pos))
		return 2
	}
	cfg.URL = pos[0]
	if !strings.Contains(cfg.URL, "://") {
		cfg.URL = "http://" + cfg.URL
		fmt.Fprintf(stderr, "hotpath load: %s has no scheme: taken as %s (write https:// for TLS)\n", pos[0], cfg.URL)
	}
	// Zero means "the default" to the load package; on the command line a
	// zero (or a negative value) is a mistake worth saying so.
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		var ok bool
		switch f.Name {
		case "c":
			ok = cfg.Connections > 0
		case "d":
			ok = cfg.Duration > 0
		case "n":
			ok = cfg.Requests > 0
		case "timeout":
			ok = cfg.Timeout > 0
		default:
			return
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("-%s %s", f.Name, f.Value))
		}
	})
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "hotpath load: %s: must be greater than 0 (see hotpath load -h)\n", strings.Join(bad, ", "))
		return 2
	}
	var err error
	if cfg.Shard, cfg.Shards, err = parseShard(*shard, os.Getenv); err != nil {
		fmt.Fprintf(stderr, "hotpath load: %v\n", err)
		return 2
	}
	if *startAt != "" {
		if cfg.StartAt, err = parseStartAt(*startAt); err != nil {
			fmt.Fprintf(stderr, "hotpath load: --start-at %q: %v\n", *startAt, err)
			return 2
		}
	}
	if *stages != "" {
		if cfg.Stages, err = parseStages(*stages); err != nil {
			printErr(stderr, "load", "--stages: ", err)
			return 2
		}
	}
	if *connStages != "" {
		if cfg.ConnStages, err = parseStages(*connStages); err != nil {
			printErr(stderr, "load", "--conn-stages: ", err)
			return 2
		}
		cSet := false
		fs.Visit(func(f *flag.Flag) { cSet = cSet || f.Name == "c" })
		if !cSet {
			cfg.Connections = 0 // the stages' peak
		}
	}
	// A body without a method is a POST, as curl sends it; -m or -X
	// (GET included) keeps the method written.
	var data, method bool
	fs.Visit(func(f *flag.Flag) {
		data = data || f.Name == "data" || f.Name == "data-binary"
		method = method || f.Name == "m" || f.Name == "X"
	})
	if data && !method {
		cfg.Method = http.MethodPost
	}
	cfg.Proto, cfg.Engine = load.Proto(*proto), load.Engine(*engine)
	if cfg.ResponseBody, err = parseResponseBody(*body); err != nil {
		printErr(stderr, "load", "", err)
		return 2
	}
	cfg.DisableKeepAlive = !*keepalive
	cfg.Thresholds = thresholds
	cfg.Command = append([]string{"hotpath", "load"}, args...)
	cfg.Header = http.Header(hdr)
	for _, f := range []struct {
		name string
		flag *secondsFlag
	}{{"d", durFlag}, {"timeout", timeoutFlag}} {
		if f.flag.bare != "" {
			fmt.Fprintf(stderr, "hotpath load: -%s %s taken as %v (write the unit: -%s %v)\n", f.name, f.flag.bare, *f.flag.d, f.name, *f.flag.d)
		}
	}
	if *insecure {
		cfg.TLS = &tls.Config{InsecureSkipVerify: true}
	}
	var bar *progressBar
	if !*quiet && isTerminal(stderr) {
		bar = newProgressBar(stderr, cfg)
		cfg.Progress = bar.update
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := load.Run(ctx, cfg)
	if bar != nil {
		// Before any output: stdout and stderr are often the same
		// terminal, and the summary must not start on the bar's line.
		bar.clear()
	}
	if res == nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			// The fast engine resolves the host before the run: a name that
			// does not resolve fails the run, as it does on the nethttp engine.
			printErr(stderr, "load", "run failed: ", err)
			return 1
		}
		printErr(stderr, "load", "", err)
		return 2 // the configuration was refused
	}
	code := 0
	if *resultLine {
		if werr := writeResultLine(res, stdout); werr != nil {
			printErr(stderr, "load", "", werr)
			code = 1
		}
	} else if werr := writeOutputs(res, *jsonOut, *hgrm, *html, *summaryMD, stdout); werr != nil {
		printErr(stderr, "load", "", werr)
		code = 1
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "hotpath load: interrupted: the results above cover the run so far")
			return 1
		}
		printErr(stderr, "load", "run failed: ", err)
		return 1
	}
	if err := res.Check(); err != nil {
		printErr(stderr, "load", "run failed: ", err)
		return 1
	}
	if tc := thresholdVerdict("load", res, stderr); code == 0 {
		code = tc
	}
	return code
}

// writeOutputs writes the summary or JSON to stdout and the optional
// files.
func writeOutputs(res *load.Result, jsonOut bool, hgrm, html, summaryMD string, stdout io.Writer) error {
	var err error
	if jsonOut {
		err = res.WriteJSON(stdout)
	} else {
		err = res.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if hgrm == "-" {
		if err := res.WriteHgrm(stdout); err != nil {
			return err
		}
	} else if hgrm != "" {
		if err := writeFile(hgrm, res.WriteHgrm); err != nil {
			return err
		}
	}
	if summaryMD != "" {
		if err := writeFile(summaryMD, res.WriteMarkdown); err != nil {
			return err
		}
	}
	if html != "" {
		return writeFile(html, res.WriteHTML)
	}
	return nil
}

func writeFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", name, err)
	}
	return f.Close()
}

// progressBar draws one line on a terminal: elapsed of total (or requests
// of -n), a bar, the count and the rate of the last update.
type progressBar struct {
	w        io.Writer
	total    time.Duration
	requests int64
	last     int64
	lastT    time.Duration
	width    int // of the last frame drawn, for clear
}

func newProgressBar(w io.Writer, cfg load.Config) *progressBar {
	b := &progressBar{w: w, total: cfg.Duration, requests: cfg.Requests}
	if b.total == 0 && b.requests == 0 {
		b.total = load.DefaultDuration
	}
	return b
}

func (b *progressBar) update(done int64, elapsed time.Duration) {
	frac := 0.0
	if b.total > 0 {
		frac = elapsed.Seconds() / b.total.Seconds()
	} else if b.requests > 0 {
		frac = float64(done) / float64(b.requests)
	}
	frac = min(max(frac, 0), 1)
	const width = 30
	fill := int(frac * width)
	rate := 0.0
	if dt := (elapsed - b.lastT).Seconds(); dt > 0 {
		rate = float64(done-b.last) / dt
	}
	b.last, b.lastT = done, elapsed
	frame := fmt.Sprintf("[%s%s] %5.1fs %12d requests %10.0f req/s ", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), elapsed.Seconds(), done, rate)
	b.width = max(b.width, len(frame))
	fmt.Fprint(b.w, "\r"+frame)
}

// clear erases the bar: back to the line's start, blanks over the widest
// frame drawn, back again. The caller clears before printing anything
// else, so no output starts on the bar's line.
func (b *progressBar) clear() {
	if b.width > 0 {
		fmt.Fprintf(b.w, "\r%s\r", strings.Repeat(" ", b.width))
	}
}

// ResultLinePrefix starts the line --result-line prints: a result among
// other log lines (a pod's) is found by it.
const ResultLinePrefix = "hotpath-load-result: "

// writeResultLine prints res as one line: ResultLinePrefix and compact
// JSON.
func writeResultLine(res *load.Result, w io.Writer) error {
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s%s\n", ResultLinePrefix, b)
	return err
}
