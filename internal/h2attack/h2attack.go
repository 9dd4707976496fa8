// Package h2attack is a small library of attacks on HTTP/2 servers,
// spoken in raw frames. It is for hotpath's tests and benchmarks only:
// the server package's CI tests run each attack, bounded, on loopback
// against hotpath's HTTP/2 engine, and bench/h2attack compares engines
// under them. Point it only at servers you run.
//
// An attack dials Config.Addr (cleartext HTTP/2 with prior knowledge, or
// TLS with ALPN h2 and no certificate check when Config.TLS is set),
// sends the client preface and its SETTINGS, waits for the server's
// SETTINGS and acknowledges them (as a client must: a server may cut a
// connection that never does), then runs until its context ends, it is
// done, or the server closes the connection. Its Result says what it saw:
// frames answered, GOAWAY and its code, whether the server closed the
// connection, bytes sent.
//
// Attacks come in three kinds (see Kind): holds set a trap and wait,
// costing the attacker nothing, so a robust server must spend nothing on
// them either; floods send frames as fast as the server reads them until
// it cuts the connection; one-shots send one bad request and read the
// answer. All lists them, for tables; each is also a function of its own.
// Probe times one ordinary request on a connection of its own, to show
// whether the server still serves others during an attack.
package h2attack

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotpathhq/hotpath/wire/h2"
)

// Config says where and how to attack. The zero value of each field but
// Addr is a sensible default.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// TLS dials TLS, offering only ALPN "h2" and skipping certificate
	// verification, instead of cleartext HTTP/2 with prior knowledge.
	TLS bool
	// Authority is the :authority of the attack's requests; "" means Addr.
	Authority string
	// Path is the path an attack requests, for the attacks that make a
	// request; "" means the attack's own default (see each attack).
	Path string
	// LocalAddr is the IP address the attack's connections come from
	// (127.0.0.2, say, to be another client than 127.0.0.1); "" lets the
	// system choose.
	LocalAddr string
	// Conns is how many connections RapidReset, the MadeYouReset attacks
	// and Reconnect keep busy; 0 means 4.
	Conns int
	// CutAfter is how long the partial-frame attacks wait, after their
	// request's answer, before they cut a frame in two; 0 means 300 ms,
	// past the 100 ms after which hotpath's engine trims an idle
	// connection.
	CutAfter time.Duration
	// Hold is how long the partial-frame attacks hold their cut frame
	// before they complete it, close their write side or close the
	// connection; 0 means until the context ends.
	Hold time.Duration
	// Rate is how many bytes a second SlowReader reads; 0 means 2 MB/s.
	Rate int
	// Window is the receive window SlowReader advertises, for each stream
	// and for the connection; 0 means 65,535, the protocol's default.
	Window uint32
	// Reply bounds each wait for an answer an attack needs to go on or to
	// report (the server's SETTINGS, a response, a PING ACK, the server
	// closing after a GOAWAY); 0 means 5 s.
	Reply time.Duration
	// LeaveOnGoAway makes floods and one-shots let go of a connection as
	// soon as the server sends GOAWAY, as an attacker in a hurry would,
	// instead of waiting (up to Reply) for the server to close it:
	// Result.ServerClosed then counts only the closes seen by then.
	LeaveOnGoAway bool
	// OnHold, if set, is called once when the attack proper starts: a
	// hold has set its trap and only waits, a flood starts flooding, a
	// one-shot sends its request. From then on the server's work is the
	// attack's. It may be called on any goroutine.
	OnHold func()
}

func (c *Config) reply() time.Duration {
	if c.Reply > 0 {
		return c.Reply
	}
	return 5 * time.Second
}

func (c *Config) path(def string) string {
	if c.Path != "" {
		return c.Path
	}
	return def
}

// Result is what an attack observed. Counts cover every connection the
// attack made.
type Result struct {
	// Attack is the attack's name.
	Attack string
	// Elapsed is how long the attack ran, dialing included.
	Elapsed time.Duration
	// Conns is how many connections it made; ServerClosed how many of
	// them the server closed (the attacker read EOF or a reset before it
	// let go itself).
	Conns, ServerClosed int
	// Streams is how many streams it opened.
	Streams int
	// BytesSent and BytesRead count the bytes written to and read from
	// the connections (after TLS, when TLS is on).
	BytesSent, BytesRead int64
	// DataRead counts the payload of the DATA frames received.
	DataRead int64
	// Frames counts the frames received; Resets the RST_STREAM frames
	// among them; GoAways the GOAWAY frames.
	Frames, Resets, GoAways int
	// GoAwayCode and GoAwayDebug are the last GOAWAY's error code and
	// debug data, when GoAways > 0.
	GoAwayCode  h2.ErrCode
	GoAwayDebug string
	// GoAwayAfter is how long after the attack proper started (see
	// Config.OnHold) the first GOAWAY came; 0 when none did.
	GoAwayAfter time.Duration
	// Status is the :status of the response to the attack's request,
	// for the attacks that make one; "" when none came.
	Status string
	// PingAcked reports that the server acknowledged PartialFrame's PING.
	PingAcked bool
}

// String sums a Result up on one line.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v, %d conns (%d closed by the server), %d streams, sent %d B, read %d B in %d frames",
		r.Attack, r.Elapsed.Round(time.Millisecond), r.Conns, r.ServerClosed, r.Streams, r.BytesSent, r.BytesRead, r.Frames)
	if r.DataRead > 0 {
		fmt.Fprintf(&b, " (%d B of DATA)", r.DataRead)
	}
	if r.Resets > 0 {
		fmt.Fprintf(&b, ", %d RST_STREAM", r.Resets)
	}
	if r.Status != "" {
		fmt.Fprintf(&b, ", :status %s", r.Status)
	}
	if r.PingAcked {
		b.WriteString(", PING acknowledged")
	}
	if r.GoAways > 0 {
		fmt.Fprintf(&b, ", %d GOAWAY (last %v %q)", r.GoAways, r.GoAwayCode, r.GoAwayDebug)
	}
	return b.String()
}

// Kind is an attack's shape: what it costs the attacker, and so how a
// server should answer it.
type Kind uint8

const (
	// Hold: the attacker sets a trap and waits. A server should spend
	// no CPU on the connection while it waits, and serve others as usual.
	Hold Kind = iota
	// Flood: the attacker sends frames as fast as the server reads them.
	// A server should cut the connection (GOAWAY, then close).
	Flood
	// OneShot: the attacker sends one bad request and reads the answer: a
	// status (431) or a GOAWAY naming the error.
	OneShot
)

// String returns the kind's name in lower case.
func (k Kind) String() string {
	switch k {
	case Hold:
		return "hold"
	case Flood:
		return "flood"
	case OneShot:
		return "one-shot"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Attack is one attack, for tables of them.
type Attack struct {
	// Name is short and lower-case, with dashes: "rapid-reset".
	Name string
	// Kind is the attack's shape.
	Kind Kind
	// Want says what a robust server does about it.
	Want string
	// Run runs the attack.
	Run func(ctx context.Context, cfg Config) (Result, error)
}

// All lists every attack, holds first.
var All = []Attack{
	{"partial-frame", Hold, "no CPU while the frame is cut; PING ACK once it completes", PartialFrame},
	{"partial-frame-early", Hold, "no CPU while the frame is cut; PING ACK once it completes", PartialFrameEarly},
	{"partial-frame-eof", Hold, "closes the connection when the client half-closes mid-frame", PartialFrameEOF},
	{"partial-frame-close", Hold, "drops the connection when the client closes mid-frame", PartialFrameClose},
	{"zero-window", Hold, "no CPU while the client's window stays shut", ZeroWindow},
	{"slow-reader", Hold, "CPU in proportion to the bytes sent", SlowReader},
	{"rapid-reset", Flood, "handlers bounded per connection; GOAWAY ENHANCE_YOUR_CALM", RapidReset},
	{"made-you-reset-window-update-zero", Flood, reconnectWant, MadeYouResetWindowUpdateZero},
	{"made-you-reset-priority-length", Flood, reconnectWant, MadeYouResetPriorityLength},
	{"made-you-reset-priority-self", Flood, reconnectWant, MadeYouResetPrioritySelf},
	{"made-you-reset-window-overflow", Flood, reconnectWant, MadeYouResetWindowOverflow},
	{"made-you-reset-headers-after-end", Flood, reconnectWant, MadeYouResetHeadersAfterEnd},
	{"made-you-reset-data-after-end", Flood, reconnectWant, MadeYouResetDataAfterEnd},
	{"reconnect", Flood, reconnectWant, Reconnect},
	{"refused-stream-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM within a second", RefusedStreamFlood},
	{"data-after-end-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM within a second", DataAfterEndFlood},
	{"window-update-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", WindowUpdateFlood},
	{"unknown-frame-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", UnknownFrameFlood},
	{"settings-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", SettingsFlood},
	{"ping-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", PingFlood},
	{"priority-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", PriorityFlood},
	{"empty-data-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", EmptyDataFlood},
	{"continuation-flood", Flood, "GOAWAY ENHANCE_YOUR_CALM", ContinuationFlood},
	{"hpack-bomb", Flood, "GOAWAY ENHANCE_YOUR_CALM or COMPRESSION_ERROR, or 431s at little cost", HPACKBomb},
	{"header-list-too-large", OneShot, ":status 431", HeaderListTooLarge},
	{"invalid-huffman", OneShot, "GOAWAY COMPRESSION_ERROR", InvalidHuffman},
	{"garbage-after-preface", OneShot, "GOAWAY (FRAME_SIZE_ERROR or PROTOCOL_ERROR)", GarbageAfterPreface},
}

// Lookup returns the attack named name.
func Lookup(name string) (Attack, bool) {
	for _, a := range All {
		if a.Name == name {
			return a, true
		}
	}
	return Attack{}, false
}

// run is one attack's run: its config and the counts all its
// connections add to.
type run struct {
	name  string
	cfg   Config
	start time.Time
	hold  sync.Once

	conns, closed, streams, frames, resets, goAways atomic.Int64
	sent, read, data                                atomic.Int64

	mu          sync.Mutex
	heldAt      time.Time // when the attack proper started (onHold)
	firstGoAway time.Time
	code        h2.ErrCode
	debug       string
	status      string
	pingAcked   bool
}

func newRun(name string, cfg Config) *run {
	return &run{name: name, cfg: cfg, start: time.Now()}
}

// onHold calls Config.OnHold, once.
func (r *run) onHold() {
	r.hold.Do(func() {
		r.mu.Lock()
		r.heldAt = time.Now()
		r.mu.Unlock()
		if r.cfg.OnHold != nil {
			r.cfg.OnHold()
		}
	})
}

func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	var goAwayAfter time.Duration
	if !r.firstGoAway.IsZero() && !r.heldAt.IsZero() {
		goAwayAfter = r.firstGoAway.Sub(r.heldAt)
	}
	return Result{
		GoAwayAfter:  goAwayAfter,
		Attack:       r.name,
		Elapsed:      time.Since(r.start),
		Conns:        int(r.conns.Load()),
		ServerClosed: int(r.closed.Load()),
		Streams:      int(r.streams.Load()),
		BytesSent:    r.sent.Load(),
		BytesRead:    r.read.Load(),
		DataRead:     r.data.Load(),
		Frames:       int(r.frames.Load()),
		Resets:       int(r.resets.Load()),
		GoAways:      int(r.goAways.Load()),
		GoAwayCode:   r.code,
		GoAwayDebug:  r.debug,
		Status:       r.status,
		PingAcked:    r.pingAcked,
	}
}

// Probe times one GET / on a connection of its own (dial, TLS handshake
// and HTTP/2 setup included), as an ordinary client would see it: run
// beside an attack, it shows whether the server still serves others. It
// fails unless the answer is a 200 within cfg.Reply. Of cfg it uses
// Addr, LocalAddr, TLS, Authority and Reply.
func Probe(ctx context.Context, cfg Config) (time.Duration, error) {
	start := time.Now()
	r := newRun("probe", Config{Addr: cfg.Addr, LocalAddr: cfg.LocalAddr, TLS: cfg.TLS, Authority: cfg.Authority, Reply: cfg.Reply})
	ctx, cancel := context.WithTimeout(ctx, r.cfg.reply())
	defer cancel()
	c, err := r.dial(ctx, dialOpts{credit: true})
	if err != nil {
		return 0, err
	}
	defer c.close()
	id, err := c.request("GET", "/", true, nil)
	if err != nil {
		return 0, err
	}
	if !c.wait(ctx, func() bool { return c.ended[id] || c.closed }) {
		return 0, fmt.Errorf("h2attack: probe: no answer within %v", r.cfg.reply())
	}
	d := time.Since(start)
	c.mu.Lock()
	status, ended := c.status[id], c.ended[id]
	c.mu.Unlock()
	if !ended || status != "200" {
		return 0, fmt.Errorf("h2attack: probe: got %s", r.result())
	}
	return d, nil
}
