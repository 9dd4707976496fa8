package load

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hotpathhq/hotpath/wire"
)

// Proto names the HTTP protocol a run must use. Every response is checked
// against it and a run that got another protocol fails (a server without
// h2 would otherwise be measured over HTTP/1.1 without a word).
type Proto string

// The protocols.
const (
	H1  Proto = "h1"  // HTTP/1.1 (http:// or https://)
	H2  Proto = "h2"  // HTTP/2 over TLS, negotiated with ALPN (https:// only)
	H2C Proto = "h2c" // HTTP/2 in cleartext with prior knowledge (http:// only)
)

// ResponseBodyMode is what the generator does with each response body
// (see ResponseBody).
type ResponseBodyMode uint8

// The response body modes.
const (
	// DrainBody reads each body to its end: the connection can be reused.
	DrainBody ResponseBodyMode = iota
	// CloseBody closes each body unread: HTTP/1.1 then closes the
	// connection unless the body was empty; HTTP/2 resets the stream.
	CloseBody
	// LimitBody reads at most ResponseBody.Limit bytes of each body and
	// closes it if more remain.
	LimitBody
)

// ResponseBody is what the generator does with each response body, to
// compare what each costs (seed 002): drain it, close it unread, or read
// up to a limit. The zero value drains. It is the policy for bodies
// received; Config.Body is the body sent.
type ResponseBody struct {
	Mode  ResponseBodyMode
	Limit int64 // with LimitBody: the bytes read before closing, 0 or more
}

// String returns the policy as results record it (Result.ResponseBody):
// "drain", "close" or "limit:N".
func (b ResponseBody) String() string {
	switch b.Mode {
	case CloseBody:
		return "close"
	case LimitBody:
		return "limit:" + strconv.FormatInt(b.Limit, 10)
	}
	return "drain"
}

// Engine selects the code that sends requests.
type Engine string

// The engines.
const (
	// EngineAuto picks EngineFast for cleartext HTTP/1.1, h2 and h2c, and
	// EngineNetHTTP for HTTP/1.1 over TLS.
	EngineAuto Engine = "auto"
	// EngineFast is hotpath's own wire-level engine: requests rendered
	// once, responses parsed in place, no allocation per request. For
	// cleartext HTTP/1.1 it runs on the wire package, one goroutine per
	// connection; for h2 (TLS, ALPN) and h2c on wire/h2, Streams slots
	// sharing a connection with one reader and one writer goroutine that
	// batch many frames per syscall. Not HTTP/1.1 over TLS.
	EngineFast Engine = "fast"
	// EngineNetHTTP is net/http's Transport, one per connection slot, with
	// a full httptrace: HTTP/2, h2c and TLS.
	EngineNetHTTP Engine = "nethttp"
	// EngineHotpath is hotpath's client.Transport, one per connection slot
	// as EngineNetHTTP's: HTTP/2 (h2, h2c) on hotpath's own HTTP/2 client,
	// HTTP/1.1 over TLS on its own TLS connections. Connection phases:
	// the connect time of each dial; DNS and TLS are not timed apart.
	EngineHotpath Engine = "hotpath"
)

// Config describes a run. Zero fields take the defaults their comments
// give; Run checks the rest and fails with an error that names the first
// bad field.
type Config struct {
	// URL is the target, http:// or https://.
	URL string
	// Method is the request method; default GET.
	Method string
	// Header holds extra request headers (Host included, to override it).
	Header http.Header
	// Body is the request body, sent with every request when non-empty
	// (ResponseBody says what is done with the responses' bodies).
	Body []byte
	// Targets, when set, are the requests of a mix, each sent in
	// proportion to its weight; URL, Method, Header and Body then serve
	// as defaults (Header is added to every target's), and URL may be
	// left empty (the first target's is taken). All targets must be on
	// one scheme and host: one set of connections serves the mix.
	Targets []Target

	// Connections is the number of connections (closed loop: the number
	// of requests in flight). Default 10.
	Connections int
	// Streams is how many requests each HTTP/2 connection carries at
	// once (h2 and h2c, every engine): Connections 50 with Streams 10
	// keeps 500 requests in flight on 50 connections, as h2load's -c and
	// -m. 0 means 1.
	Streams int
	// Duration stops the run after this long. With neither Duration nor
	// Requests set the run lasts 10 s.
	Duration time.Duration
	// Requests stops the run after this many requests in all.
	Requests int64
	// Rate, when > 0, makes the run open loop: Rate requests per second
	// in all, each sent at its intended time and its latency timed from
	// that time (coordinated omission corrected, as in wrk2).
	Rate float64
	// Stages ramp the open-loop rate (k6's ramping arrival rate): each
	// moves the rate in a straight line, from where the previous one
	// ended (0 for the first), to its Rate over its Duration. They replace
	// Rate and Duration (the run lasts their sum); Requests still stops
	// the run.
	Stages []Stage
	// ConnStages ramp a closed-loop run's connections (k6's ramping
	// virtual users): each moves the number of connections sending in a
	// straight line, from where the previous one ended (0 for the first),
	// to its Rate (here a connection count) over its Duration. They
	// replace Connections (the peak) and Duration (their sum).
	ConnStages []Stage

	// Proto is the protocol every response must use; default H1.
	Proto Proto
	// Engine picks the sending code; default EngineAuto.
	Engine Engine
	// ResponseBody is what happens to each response body; the zero
	// value drains it.
	ResponseBody ResponseBody
	// DisableKeepAlive closes the connection after every request.
	DisableKeepAlive bool
	// Timeout bounds each request (connect and response); default 10 s.
	Timeout time.Duration
	// TLS configures https targets; nil means crypto/tls defaults.
	TLS *tls.Config

	// Thresholds are pass/fail conditions evaluated on the result
	// (Result.Thresholds; see [Threshold] for how they are written).
	Thresholds []Threshold
	// Command is the command line that asked for the run, recorded in
	// the result's Meta.
	Command []string

	// Shards, when more than 1, splits this run across that many
	// processes (machines, Kubernetes pods) of which this is shard Shard
	// (from 0). Connections, Rate and Requests stay the whole run's: the
	// shard opens its part of the connections (connection g of the run
	// belongs to shard g mod Shards), sends at its part of the rate on
	// the run's one schedule, so the shards' arrivals interleave as if
	// one process sent them all, and takes its part of Requests. Merge
	// the shards' results with Merge.
	Shard, Shards int
	// StartAt, when set, is when the run starts: the run waits for it, and
	// every shard's schedule starts at it, so shards on several machines
	// start together (their clocks must agree: NTP keeps them within a
	// few ms). A shard that wakes late by more than 10 ms says so in
	// its result's warnings.
	StartAt time.Time
	// RunID labels a sharded run: every shard's result carries it, and
	// Merge refuses results of different runs.
	RunID string

	// Progress, if set, is called about every ProgressEvery (default
	// 250 ms) with the requests completed so far and the time elapsed.
	Progress      func(done int64, elapsed time.Duration)
	ProgressEvery time.Duration
	// CheckResponse, if set, sees each response's status and whole body
	// (the fast engine, cleartext HTTP/1.1, reads bodies whole then); a
	// response it returns an error for counts as an error of kind
	// "check". It runs on the connection's goroutine, concurrently for
	// different connections, and must not keep body past its return.
	// The lab checks that the arms it compares do the same work with it.
	CheckResponse func(status int, body []byte) error

	ramp     *ramp  // from Stages
	connRamp *ramp  // from ConnStages
	mix      *mix   // from Targets
	engine   engine // when set (by tests), replaces the engine Engine selects
}

// Defaults of Config.
const (
	DefaultConnections = 10
	DefaultDuration    = 10 * time.Second
	DefaultTimeout     = 10 * time.Second
)

// target is a Config resolved for the engines.
type target struct {
	url    *url.URL
	addr   string // host:port to dial
	host   string // Host header value
	tls    bool
	method string
}

// withDefaults returns c with defaults applied, or an error naming the
// first bad field.
func (c Config) withDefaults() (Config, target, error) {
	var t target
	if c.Method == "" {
		c.Method = http.MethodGet
	}
	if err := checkStages(c.ConnStages, "connection stage"); err != nil {
		return c, t, err
	}
	if err := checkStages(c.Stages, "stage"); err != nil {
		return c, t, err
	}
	if len(c.ConnStages) > 0 {
		if c.Rate != 0 || c.Duration != 0 || len(c.Stages) > 0 || c.Connections != 0 {
			return c, t, errors.New("load: connection stages set the connections and the duration, in closed loop: give them without -c, -d, --rate and --stages")
		}
		rp := newRamp(c.ConnStages)
		if rp.peak() < 1 {
			return c, t, fmt.Errorf("load: connection stages %s open no connection", formatStages(c.ConnStages))
		}
		for _, st := range c.ConnStages {
			c.Duration += st.Duration
		}
		c.Connections = int(math.Ceil(rp.peak()))
		c.connRamp = rp
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if len(c.Stages) > 0 {
		if c.Rate != 0 || c.Duration != 0 {
			return c, t, errors.New("load: stages set the rate and the duration: give --stages without --rate and -d")
		}
		rp := newRamp(c.Stages)
		if rp.total < 1 {
			return c, t, fmt.Errorf("load: stages %s send no request", formatStages(c.Stages))
		}
		for _, st := range c.Stages {
			c.Duration += st.Duration
		}
		// The open-loop machinery runs on the mean rate; the schedule on
		// the ramp.
		c.Rate = rp.mean()
		c.ramp = rp
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Proto == "" {
		c.Proto = H1
	}
	if c.Engine == "" {
		c.Engine = EngineAuto
	}
	switch {
	case c.Connections < 0:
		return c, t, fmt.Errorf("load: %d connections: want at least 1", c.Connections)
	case c.Duration < 0 || c.Requests < 0 || c.Timeout < 0:
		return c, t, errors.New("load: duration, request count and timeout must not be negative")
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || (c.Rate > 0 && c.Rate < minRate):
		return c, t, fmt.Errorf("load: rate %v: want a finite number of requests per second from %v up (or 0 for closed loop)", c.Rate, minRate)
	}
	if !wire.ValidHeaderName(c.Method) { // a method is a token, as a field name is
		return c, t, fmt.Errorf("load: bad method %q", c.Method)
	}
	if c.URL == "" && len(c.Targets) > 0 {
		c.URL = c.Targets[0].URL
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err // its text would repeat the URL
		}
		return c, t, fmt.Errorf("load: bad URL %q: %v", c.URL, err)
	}
	if u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return c, t, fmt.Errorf("load: bad URL %q: want http://host[:port]/path or https://host[:port]/path", c.URL)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return c, t, fmt.Errorf("load: bad URL %q: port %q is not 1-65535", c.URL, p)
		}
	}
	t.url, t.tls, t.method = u, u.Scheme == "https", c.Method
	if len(c.Targets) > 0 {
		ts := make([]Target, len(c.Targets))
		for i, tg := range c.Targets {
			if tg.Method == "" {
				tg.Method = c.Method
			}
			if tg.Body == nil {
				tg.Body = c.Body
			}
			h := c.Header.Clone()
			if h == nil {
				h = http.Header{}
			}
			for k, vv := range tg.Header {
				h[http.CanonicalHeaderKey(k)] = append(h[http.CanonicalHeaderKey(k)], vv...)
			}
			tg.Header = h
			ts[i] = tg
		}
		if c.mix, err = newMix(ts, &t); err != nil {
			return c, t, err
		}
	}
	t.host = u.Host
	t.addr = u.Host
	if u.Port() == "" {
		if t.tls {
			t.addr = u.Host + ":443"
		} else {
			t.addr = u.Host + ":80"
		}
	}
	switch c.Proto {
	case H1:
	case H2:
		if !t.tls {
			return c, t, errors.New("load: --proto h2 needs an https:// URL (HTTP/2 over TLS); for cleartext HTTP/2 use --proto h2c")
		}
	case H2C:
		if t.tls {
			return c, t, errors.New("load: --proto h2c is cleartext HTTP/2 and needs an http:// URL; for https:// use --proto h2")
		}
	default:
		return c, t, fmt.Errorf("load: unknown protocol %q: use h1, h2 or h2c", c.Proto)
	}
	switch c.Engine {
	case EngineAuto:
		switch {
		case c.Proto == H1 && !t.tls:
			c.Engine = EngineFast
		case c.Proto == H1:
			c.Engine = EngineNetHTTP
		default:
			c.Engine = EngineFast
		}
	case EngineFast:
		if c.Proto == H1 && t.tls {
			return c, t, errors.New("load: the fast engine speaks h2, h2c and cleartext HTTP/1.1 only: use --engine hotpath or nethttp for HTTP/1.1 over TLS")
		}
	case EngineNetHTTP, EngineHotpath:
	default:
		return c, t, fmt.Errorf("load: unknown engine %q: use auto, fast, hotpath or nethttp", c.Engine)
	}
	for _, th := range c.Thresholds {
		if err := th.Validate(); err != nil {
			return c, t, err
		}
	}
	switch b := c.ResponseBody; {
	case b.Mode > LimitBody:
		return c, t, fmt.Errorf("load: unknown response body mode %d: use DrainBody, CloseBody or LimitBody", b.Mode)
	case b.Limit < 0:
		return c, t, fmt.Errorf("load: response body limit %d: want 0 or more bytes", b.Limit)
	}
	if c.CheckResponse != nil && (c.Engine != EngineFast || c.Proto != H1 || c.ResponseBody.Mode != DrainBody) {
		return c, t, errors.New("load: CheckResponse needs the fast engine on cleartext HTTP/1.1, with bodies read whole")
	}
	switch {
	case c.Shards < 0 || c.Shards > 0 && (c.Shard < 0 || c.Shard >= c.Shards) || c.Shards == 0 && c.Shard != 0:
		return c, t, fmt.Errorf("load: shard %d of %d: want 0 ≤ shard < shards", c.Shard, c.Shards)
	case c.Shards > c.Connections:
		return c, t, fmt.Errorf("load: %d shards need at least %d connections in all (each shard opens its part): got %d", c.Shards, c.Shards, c.Connections)
	case c.Shards > 1 && c.Requests > 0 && c.Requests < int64(c.Shards):
		return c, t, fmt.Errorf("load: %d requests cannot be split over %d shards", c.Requests, c.Shards)
	}
	switch {
	case c.Streams < 0 || c.Streams > 1000:
		return c, t, fmt.Errorf("load: %d streams per connection: want 1 to 1000", c.Streams)
	case c.Streams > 1 && c.Proto == H1:
		return c, t, errors.New("load: streams per connection are HTTP/2's: use --proto h2 or h2c")
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 250 * time.Millisecond
	}
	return c, t, nil
}

// minRate is the smallest open-loop rate: one request every 100 s.
const minRate = 0.01

// mode returns "open-loop" when c has a Rate and "closed-loop" otherwise.
func (c *Config) mode() string {
	if c.Rate > 0 {
		return "open-loop"
	}
	return "closed-loop"
}

// startSlack is how late after Config.StartAt a shard may begin before
// its result warns that it started late.
const startSlack = 10 * time.Millisecond

// streams returns the requests in flight per connection (at least 1).
func (c *Config) streams() int { return max(c.Streams, 1) }

// shards returns how many shards the run has (at least 1).
func (c *Config) shards() int { return max(c.Shards, 1) }

// share returns shard's part of n split over shards: n/shards, plus one
// for the first n%shards shards, so the parts add up to n exactly.
func share(n int64, shard, shards int) int64 {
	part := n / int64(shards)
	if int64(shard) < n%int64(shards) {
		part++
	}
	return part
}
