package load

import (
	"fmt"
	"net/http"
	"net/url"
)

// A Target is one request of a mix (Config.Targets): each is sent in
// proportion to its Weight, and the result breaks its figures down per
// target (Result.Targets).
type Target struct {
	Method string      // empty: Config.Method
	URL    string      // every target on one scheme and host
	Header http.Header // Config.Header is added to it
	Body   []byte      // nil: Config.Body
	Weight int         // 0 means 1
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
