package endpoints

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hotpathhq/hotpath/server"
)

// Stall makes a server freeze on a schedule, to show coordinated omission:
// in every period of Every, counted from Start, the last Pause holds every
// request back until the period ends. A closed-loop load generator sends
// nothing while it waits, so the stall costs it only a few slow samples;
// an open-loop one keeps its schedule, and the requests due during the
// stall show their wait.
type Stall struct {
	Pause, Every time.Duration
	Start        time.Time
}

// ParseStall parses "PAUSE/EVERY", e.g. "1s/5s": pause 1 s in every 5 s.
// The schedule starts now.
func ParseStall(s string) (Stall, error) {
	p, e, ok := strings.Cut(s, "/")
	pause, err1 := time.ParseDuration(p)
	every, err2 := time.ParseDuration(e)
	if !ok || err1 != nil || err2 != nil || pause <= 0 || every <= pause {
		return Stall{}, fmt.Errorf("bad stall %q: want PAUSE/EVERY with 0 < PAUSE < EVERY, e.g. 1s/5s", s)
	}
	return Stall{Pause: pause, Every: every, Start: time.Now()}, nil
}

// Until returns how long a request arriving at t must wait: the rest of
// the pause it arrived in, or 0.
func (s *Stall) Until(t time.Time) time.Duration {
	phase := t.Sub(s.Start) % s.Every
	if phase < 0 {
		return 0
	}
	if start := s.Every - s.Pause; phase >= start {
		return s.Every - phase
	}
	return 0
}

// wait sleeps through the pause in progress, if any.
func (s *Stall) wait() {
	if d := s.Until(time.Now()); d > 0 {
		time.Sleep(d)
	}
}

// Native wraps a native handler so it stalls on s's schedule.
func (s *Stall) Native(next func(*server.Ctx)) func(*server.Ctx) {
	return func(c *server.Ctx) {
		s.wait()
		next(c)
	}
}

// Handler wraps an http.Handler so it stalls on s's schedule.
func (s *Stall) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.wait()
		next.ServeHTTP(w, r)
	})
}
