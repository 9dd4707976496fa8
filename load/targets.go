package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// A Target is one request of a mix (Config.Targets): each is sent in
// proportion to its Weight, and the result breaks its figures down per
// target (Result.Targets).
type Target struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	Weight int // 0 means 1
}

// ParseTargets reads targets in either of vegeta's formats, told apart by
// the first byte that is not a space:
//
//   - JSON lines: {"method": "GET", "url": "http://...", "header": {"K":
//     ["v"]}, "body": "<base64>"}, one per line, with an optional
//     "weight" (an integer, default 1);
//   - HTTP text: a request line "METHOD URL", header lines "Name: value",
//     an optional "@path" line naming a file whose bytes are the body, and
//     a blank line between targets; lines starting with # are comments.
//
// Body files are read relative to dir.
func ParseTargets(r io.Reader, dir string) ([]Target, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("load: no targets")
	}
	var ts []Target
	if trimmed[0] == '{' {
		ts, err = parseJSONTargets(trimmed)
	} else {
		ts, err = parseHTTPTargets(trimmed, dir)
	}
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, errors.New("load: no targets")
	}
	return ts, nil
}

func parseJSONTargets(data []byte) ([]Target, error) {
	var ts []Target
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var j struct {
			Method string      `json:"method"`
			URL    string      `json:"url"`
			Header http.Header `json:"header"`
			Body   []byte      `json:"body"` // base64, as vegeta writes it
			Weight *int        `json:"weight"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return nil, fmt.Errorf("load: targets line %d: %v", n+1, err)
		}
		t := Target{Method: j.Method, URL: j.URL, Header: j.Header, Body: j.Body, Weight: 1}
		if j.Weight != nil {
			if *j.Weight < 1 {
				return nil, fmt.Errorf("load: targets line %d: weight %d: want 1 or more", n+1, *j.Weight)
			}
			t.Weight = *j.Weight
		}
		ts = append(ts, t)
	}
	return ts, nil
}

func parseHTTPTargets(data []byte, dir string) ([]Target, error) {
	var ts []Target
	var cur *Target
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "":
			cur = nil
		case cur == nil:
			method, u, ok := strings.Cut(line, " ")
			if !ok || strings.TrimSpace(u) == "" {
				return nil, fmt.Errorf("load: targets line %d: want \"METHOD URL\", got %q", n, line)
			}
			ts = append(ts, Target{Method: method, URL: strings.TrimSpace(u), Header: http.Header{}, Weight: 1})
			cur = &ts[len(ts)-1]
		case strings.HasPrefix(line, "@"):
			name := line[1:]
			if !filepath.IsAbs(name) {
				name = filepath.Join(dir, name)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("load: targets line %d: %v", n, err)
			}
			cur.Body = b
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("load: targets line %d: want \"Name: value\" or \"@body-file\", got %q", n, line)
			}
			cur.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return ts, sc.Err()
}

// mix is a run's targets as the engines use them: each with its parsed
// URL, and the order in which they are sent.
type mix struct {
	targets []mixTarget
	// seq is one cycle of target indexes, each target as often as its
	// weight and spread evenly (smooth weighted round-robin): request n of
	// a run goes to seq[n % len(seq)].
	seq []uint16
}

type mixTarget struct {
	Target
	url *url.URL
}

// maxMixCycle bounds the sum of the weights (the cycle's length).
const maxMixCycle = 1 << 20

// newMix checks targets against the run's target t (all of a run's
// requests go to one scheme and host, over one set of connections) and
// builds the cycle.
func newMix(targets []Target, t *target) (*mix, error) {
	if len(targets) > 1<<16 {
		return nil, fmt.Errorf("load: %d targets: at most %d", len(targets), 1<<16)
	}
	m := &mix{}
	total := 0
	for i, tg := range targets {
		if tg.Method == "" {
			tg.Method = http.MethodGet
		}
		if tg.Weight == 0 {
			tg.Weight = 1
		}
		if tg.Weight < 0 {
			return nil, fmt.Errorf("load: target %d: weight %d: want 1 or more", i+1, tg.Weight)
		}
		u, err := url.Parse(tg.URL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("load: target %d: bad URL %q", i+1, tg.URL)
		}
		if u.Scheme != t.url.Scheme || u.Host != t.url.Host {
			return nil, fmt.Errorf("load: target %d: %s: every target must be on %s://%s (one set of connections serves the mix)", i+1, tg.URL, t.url.Scheme, t.url.Host)
		}
		total += tg.Weight
		if total > maxMixCycle {
			return nil, fmt.Errorf("load: target weights add up to more than %d", maxMixCycle)
		}
		m.targets = append(m.targets, mixTarget{Target: tg, url: u})
	}
	// Smooth weighted round-robin: each step, every target gains its
	// weight, the richest is picked and pays the total.
	cur := make([]int, len(m.targets))
	m.seq = make([]uint16, 0, total)
	for range total {
		best := 0
		for i := range m.targets {
			cur[i] += m.targets[i].Weight
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		m.seq = append(m.seq, uint16(best))
	}
	return m, nil
}
