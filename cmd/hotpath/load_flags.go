package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// headerFlags collects repeated -H "Name: value" flags.
type headerFlags http.Header

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	http.Header(h).Add(name, strings.TrimSpace(value))
	return nil
}

// secondsFlag is a duration flag that also takes a bare number of seconds
// ("-d 2", as wrk and ab users type), noting it for a hint.
type secondsFlag struct {
	d    *time.Duration
	bare string // the bare value given, if any
}

func (f *secondsFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f *secondsFlag) Set(s string) error {
	d, bare, ok := parseSeconds(s)
	if !ok {
		return fmt.Errorf("%q is not a duration: write it as 10s, 1m30s or 500ms", s)
	}
	*f.d, f.bare = d, ""
	if bare {
		f.bare = s
	}
	return nil
}

// parseSeconds parses a duration (10s, 1m30s) or a bare number of
// seconds, reporting which, and false for neither.
func parseSeconds(s string) (d time.Duration, bare, ok bool) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, false, true
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) {
		return 0, false, false
	}
	return time.Duration(secs * float64(time.Second)), true, true
}

// dataFlag is a request body: the text given, or with "@file" (as curl
// reads it) a file's contents; binary keeps them byte for byte, else
// CR and LF are removed, as curl's --data does.
type dataFlag struct {
	body   *[]byte
	binary bool
}

func (f *dataFlag) String() string { return "" }

func (f *dataFlag) Set(s string) error {
	name, ok := strings.CutPrefix(s, "@")
	if !ok {
		*f.body = []byte(s)
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if !f.binary {
		b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), nil), []byte("\n"), nil)
	}
	*f.body = b
	return nil
}

// thresholdFlags collects repeated --threshold flags, checked as they
// come.
type thresholdFlags []load.Threshold

func (t *thresholdFlags) String() string { return "" }

func (t *thresholdFlags) Set(s string) error {
	th := load.Threshold(s)
	if err := th.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "load: "))
	}
	*t = append(*t, th)
	return nil
}

// parseShard reads --shard "i/N"; without it, a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX with HOTPATH_SHARDS=N (the completions count,
// which Kubernetes does not pass to pods) names the shard.
func parseShard(flagValue string, getenv func(string) string) (shard, shards int, err error) {
	what := "--shard " + flagValue
	v := flagValue
	if v == "" {
		idx, n := getenv("JOB_COMPLETION_INDEX"), getenv("HOTPATH_SHARDS")
		if idx == "" && n == "" {
			return 0, 0, nil
		}
		if idx == "" || n == "" {
			return 0, 0, fmt.Errorf("JOB_COMPLETION_INDEX=%q and HOTPATH_SHARDS=%q: a shard from the environment needs both (or use --shard i/N)", idx, n)
		}
		v, what = idx+"/"+n, "JOB_COMPLETION_INDEX/HOTPATH_SHARDS "+idx+"/"+n
	}
	i, n, ok := strings.Cut(v, "/")
	shard, err1 := strconv.Atoi(i)
	shards, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil || shards < 1 || shard < 0 || shard >= shards {
		return 0, 0, fmt.Errorf("%s: want i/N with 0 ≤ i < N, e.g. --shard 0/4", what)
	}
	return shard, shards, nil
}

// parseStartAt reads --start-at: RFC 3339 or unix milliseconds.
func parseStartAt(v string) (time.Time, error) {
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, errors.New("want RFC 3339 (2026-11-24T10:00:00Z) or unix milliseconds")
	}
	return t, nil
}
