package nethttpsuite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Outcome is a test unit's result on one server.
type Outcome string

// The outcomes of a unit.
const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
	Hang Outcome = "hang" // still running when the binary's timeout fired
)

// Results maps each test unit (a leaf test: a test without subtests, by
// its full name) to its outcome.
type Results map[string]Outcome

// Run runs the generated suite on one server (tags "nethttp" for
// net/http's, "" for hotpath's) in -short mode, as Go's own all.bash does.
// pattern, when set, is passed as -run. A unit that hangs is recorded as
// such and the run goes on without it, so one hang costs one timeout,
// not the run.
func Run(ctx context.Context, dir, tags, pattern string, timeout time.Duration) (Results, string, error) {
	res := Results{}
	var skip []string
	var log bytes.Buffer
	for attempt := 0; attempt < 8; attempt++ {
		args := []string{"test", "-short", "-count=1", "-json", "-vet=off", "-timeout", timeout.String()}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		if pattern != "" {
			args = append(args, "-run", pattern)
		}
		if len(skip) > 0 {
			args = append(args, "-skip", strings.Join(skip, "|"))
		}
		args = append(args, ".")
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = dir
		out, _ := cmd.CombinedOutput() // a failing test exits 1: the JSON says which
		if bytes.Contains(out, []byte("[setup failed]")) || bytes.Contains(out, []byte("[build failed]")) {
			return nil, log.String(), fmt.Errorf("nethttpsuite: the generated tests do not build:\n%s", tail(out))
		}
		running, crashed, err := parseJSON(out, res, &log)
		if err != nil {
			return nil, log.String(), fmt.Errorf("nethttpsuite: go %s: %w\n%s", strings.Join(args, " "), err, tail(out))
		}
		if len(running) == 0 {
			return res, log.String(), nil
		}
		// The binary timed out: what was running hangs; or it crashed:
		// what was running fails. Run the rest.
		for _, name := range running {
			res[name] = Hang
			if crashed {
				res[name] = Fail
			}
			top, _, _ := strings.Cut(name, "/")
			skip = append(skip, "^"+regexp.QuoteMeta(top)+"$")
		}
		// The units of the skipped tests that finished keep their
		// outcome; the run starts over without them.
	}
	return nil, log.String(), fmt.Errorf("nethttpsuite: too many hangs or crashes: %v", skip)
}

// parseJSON reads go test -json output into res (leaf units only; a
// parent's own outcome is implied by its units) and returns the tests
// that were still running when the binary's timeout fired, or, when it
// crashed (crashed is then true), the units that had started and not
// ended (a crash names no test: all of them).
func parseJSON(out []byte, res Results, log *bytes.Buffer) (running []string, crashed bool, err error) {
	type event struct {
		Action string
		Test   string
		Output string
	}
	outcome := map[string]Outcome{}
	var order, started []string
	timedOut := false
	crashedIn := "" // the test the crash's output was attributed to
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	inRunning := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, false, err
		}
		switch e.Action {
		case "run":
			started = append(started, e.Test)
		case "pass", "fail", "skip":
			if e.Test != "" {
				if _, seen := outcome[e.Test]; !seen {
					order = append(order, e.Test)
				}
				outcome[e.Test] = Outcome(e.Action)
			}
		case "output":
			switch {
			case strings.HasPrefix(e.Output, "panic: test timed out"):
				timedOut = true
				log.WriteString(e.Output)
			case strings.HasPrefix(e.Output, "panic: "):
				// The binary crashed: the units after it did not run.
				crashed = true
				crashedIn = e.Test
				log.WriteString(e.Output)
			case strings.Contains(e.Output, "running tests:"):
				inRunning = timedOut
			case inRunning:
				name := strings.TrimSpace(e.Output)
				if i := strings.LastIndex(name, " ("); i > 0 && strings.HasSuffix(name, ")") {
					running = append(running, name[:i])
				} else {
					inRunning = false
				}
			}
			if e.Test != "" && (strings.Contains(e.Output, "--- FAIL") || strings.HasPrefix(e.Output, "    ")) {
				log.WriteString(e.Output)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, err
	}
	if crashed && !timedOut {
		// The units of the test the crash is attributed to (others,
		// paused by t.Parallel, run again); all, when it names none.
		top, _, _ := strings.Cut(crashedIn, "/")
		for _, name := range started {
			if top != "" && name != top && !strings.HasPrefix(name, top+"/") {
				continue
			}
			if _, ended := outcome[name]; !ended && !hasStartedChild(name, started) {
				running = append(running, name)
			}
		}
	}
	for _, name := range order {
		if hasChild(name, outcome) || slices.ContainsFunc(running, func(r string) bool { return strings.HasPrefix(r, name+"/") }) {
			continue
		}
		res[name] = outcome[name]
	}
	if timedOut && len(running) == 0 {
		return nil, false, fmt.Errorf("timed out, but no running test named")
	}
	return running, crashed && !timedOut, nil
}

func hasStartedChild(name string, started []string) bool {
	return slices.ContainsFunc(started, func(s string) bool { return strings.HasPrefix(s, name+"/") })
}

func hasChild(name string, outcome map[string]Outcome) bool {
	for other := range outcome {
		if strings.HasPrefix(other, name+"/") {
			return true
		}
	}
	return false
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Modes are the modes of net/http's run harness, and "other" for tests
// that start their servers themselves (HTTP/1.1, most of them).
var Modes = []string{"h1", "https1", "h2", "h2unencrypted", "other"}

// ModeOf names the mode a unit ran in.
func ModeOf(unit string) string {
	for _, part := range strings.Split(unit, "/")[1:] {
		if slices.Contains(Modes[:4], part) {
			return part
		}
	}
	return "other"
}

// Tally counts the units of one mode.
type Tally struct {
	Both        int // pass on both servers
	OnlyNet     int // pass on net/http only: differences
	Deliberate  int // of OnlyNet, listed as deliberate
	Open        int // of OnlyNet, listed as open: to fix
	OnlyHotpath int // pass on hotpath only
	Neither     int // fail (or skip) on both: the harness's, not the server's
	Skipped     int // skipped on both
}

func (t *Tally) units() int { return t.Both + t.OnlyNet + t.OnlyHotpath + t.Neither + t.Skipped }

func (t *Tally) add(o *Tally) {
	t.Both += o.Both
	t.OnlyNet += o.OnlyNet
	t.Deliberate += o.Deliberate
	t.Open += o.Open
	t.OnlyHotpath += o.OnlyHotpath
	t.Neither += o.Neither
	t.Skipped += o.Skipped
}

// row is the tally as a row of Table's.
func (t *Tally) row(mode string) string {
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", mode, t.units(), t.Both, t.OnlyNet, t.Deliberate, t.Open, t.OnlyHotpath, t.Neither, t.Skipped)
}

// Comparison is the outcome of a run on both servers.
type Comparison struct {
	Units      int
	Modes      map[string]*Tally
	Unexpected []string // pass on net/http, not on hotpath, not deliberate
	Deliberate []string // pass on net/http, not on hotpath, listed as deliberate
	Open       []string // pass on net/http, not on hotpath, listed as open
	Stale      []string // listed as deliberate or open, yet pass on both
	Gained     []string // pass on hotpath, not on net/http
}

// Compare compares the units of the tests that start a server.
func Compare(net, hot Results, serverTests map[string]bool, deliberate, open map[string]string) *Comparison {
	c := &Comparison{Modes: map[string]*Tally{}}
	for _, m := range Modes {
		c.Modes[m] = &Tally{}
	}
	units := make([]string, 0, len(net))
	for u := range net {
		top, _, _ := strings.Cut(u, "/")
		if serverTests[top] {
			units = append(units, u)
		}
	}
	sort.Strings(units)
	for _, u := range units {
		t := c.Modes[ModeOf(u)]
		c.Units++
		n, h := net[u], hot[u]
		switch {
		case n == Pass && h == Pass:
			t.Both++
			if _, ok := deliberateReason(u, deliberate); ok {
				c.Stale = append(c.Stale, u)
			} else if _, ok := deliberateReason(u, open); ok {
				c.Stale = append(c.Stale, u)
			}
		case n == Pass:
			t.OnlyNet++
			if _, ok := deliberateReason(u, deliberate); ok {
				t.Deliberate++
				c.Deliberate = append(c.Deliberate, u)
			} else if _, ok := deliberateReason(u, open); ok {
				t.Open++
				c.Open = append(c.Open, u)
			} else {
				c.Unexpected = append(c.Unexpected, u+" ("+string(h)+")")
			}
		case h == Pass:
			t.OnlyHotpath++
			c.Gained = append(c.Gained, u)
		case n == Skip && h == Skip:
			t.Skipped++
		default:
			t.Neither++
		}
	}
	return c
}

// deliberateReason finds the listed reason for a unit: a key matches the
// unit itself, or a test whose units all differ on purpose.
func deliberateReason(unit string, deliberate map[string]string) (string, bool) {
	for key, why := range deliberate {
		if unit == key || strings.HasPrefix(unit, key+"/") {
			return why, true
		}
	}
	return "", false
}

// Table renders the counts per mode as Markdown.
func (c *Comparison) Table() string {
	var b strings.Builder
	b.WriteString("| mode | units | pass on both | only net/http | of which deliberate | of which open | only hotpath | fail on both | skipped on both |\n|---|---|---|---|---|---|---|---|---|\n")
	var sum Tally
	for _, m := range Modes {
		t := c.Modes[m]
		if t.units() == 0 {
			continue
		}
		b.WriteString(t.row(m))
		sum.add(t)
	}
	b.WriteString(sum.row("all"))
	return b.String()
}
