package main

// The text forms `hotpath load` reads from its flags and files: --body,
// --stages and --conn-stages, --targets. They are the command line's;
// the load package takes the values they describe (load.ResponseBody,
// []load.Stage, []load.Target). Thresholds are not here: their
// expressions are load's own (load.Threshold), kept in results and
// evaluated again by a merge.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// parseResponseBody parses --body: "drain", "close" or "limit:N" (N
// bytes, N ≥ 0), the text form load.ResponseBody's String writes.
func parseResponseBody(s string) (load.ResponseBody, error) {
	switch {
	case s == "drain" || s == "":
		return load.ResponseBody{Mode: load.DrainBody}, nil
	case s == "close":
		return load.ResponseBody{Mode: load.CloseBody}, nil
	case strings.HasPrefix(s, "limit:"):
		n, err := strconv.ParseInt(s[len("limit:"):], 10, 64)
		if err != nil || n < 0 {
			return load.ResponseBody{}, fmt.Errorf("body mode %q: want limit:N with N a whole number of bytes ≥ 0", s)
		}
		return load.ResponseBody{Mode: load.LimitBody, Limit: n}, nil
	}
	return load.ResponseBody{}, fmt.Errorf("unknown body mode %q: use drain, close or limit:N", s)
}

// parseStages parses --stages and --conn-stages: "DURATION:VALUE,..."
// (30s:1000,1m:5000,30s:0), VALUE a rate or a connection count.
func parseStages(s string) ([]load.Stage, error) {
	var out []load.Stage
	for _, part := range strings.Split(s, ",") {
		d, r, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return nil, fmt.Errorf("stage %q: want DURATION:RATE, e.g. 30s:1000", part)
		}
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur <= 0 {
			return nil, fmt.Errorf("stage %q: %q is not a positive duration (30s, 2m)", part, d)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("stage %q: %q is not a rate (requests per second, 0 or more)", part, r)
		}
		out = append(out, load.Stage{Duration: dur, Rate: rate})
	}
	return out, nil
}

// parseTargets reads --targets, a file in either of vegeta's formats,
// told apart by the first byte that is not a space:
//
//   - JSON lines: {"method": "GET", "url": "http://...", "header": {"K":
//     ["v"]}, "body": "<base64>"}, one per line, with an optional
//     "weight" (an integer, default 1);
//   - HTTP text: a request line "METHOD URL", header lines "Name: value",
//     an optional "@path" line naming a file whose bytes are the body, and
//     a blank line between targets; lines starting with # are comments.
//
// Body files are read relative to dir.
func parseTargets(r io.Reader, dir string) ([]load.Target, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("no targets")
	}
	var ts []load.Target
	if trimmed[0] == '{' {
		ts, err = parseJSONTargets(trimmed)
	} else {
		ts, err = parseHTTPTargets(trimmed, dir)
	}
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, errors.New("no targets")
	}
	return ts, nil
}

func parseJSONTargets(data []byte) ([]load.Target, error) {
	var ts []load.Target
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
			return nil, fmt.Errorf("targets line %d: %v", n+1, err)
		}
		t := load.Target{Method: j.Method, URL: j.URL, Header: j.Header, Body: j.Body, Weight: 1}
		if j.Weight != nil {
			if *j.Weight < 1 {
				return nil, fmt.Errorf("targets line %d: weight %d: want 1 or more", n+1, *j.Weight)
			}
			t.Weight = *j.Weight
		}
		ts = append(ts, t)
	}
	return ts, nil
}

func parseHTTPTargets(data []byte, dir string) ([]load.Target, error) {
	var ts []load.Target
	var cur *load.Target
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
				return nil, fmt.Errorf("targets line %d: want \"METHOD URL\", got %q", n, line)
			}
			ts = append(ts, load.Target{Method: method, URL: strings.TrimSpace(u), Header: http.Header{}, Weight: 1})
			cur = &ts[len(ts)-1]
		case strings.HasPrefix(line, "@"):
			name := line[1:]
			if !filepath.IsAbs(name) {
				name = filepath.Join(dir, name)
			}
			b, err := os.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("targets line %d: %v", n, err)
			}
			cur.Body = b
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, fmt.Errorf("targets line %d: want \"Name: value\" or \"@body-file\", got %q", n, line)
			}
			cur.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return ts, sc.Err()
}
