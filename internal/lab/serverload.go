package lab

import (
	"bytes"
	"fmt"
	"time"
)

var serverMetrics = []Metric{ReqPerSec, ServerCPUUs, ServerAllocs, ConnsPer1k}

// serverArm is an arm that is a server kind driven by the closed-loop
// driver with conns connections.
type serverArm struct {
	arm   *Arm
	kind  string
	conns int
}

// checkServers fails unless every kind answers a GET of path with want.
func checkServers(env *Env, path string, want []byte, kinds ...string) error {
	for _, k := range kinds {
		h, err := env.startServer(k)
		if err != nil {
			return err
		}
		var got []byte
		_, err = drive(env.ctx(), h.Addr, path, 1, 50*time.Millisecond, func(b []byte) { got = append(got[:0], b...) })
		h.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s answered %q, want %q", k, got, want)
		}
	}
	return nil
}

// measureServers starts each arm's server and drives it, run after run,
// recording req/s, server CPU-µs/req, server allocs/req and connections
// opened per 1,000 requests. It returns where the servers ran.
func (env *Env) measureServers(r *Result, path string, arms ...serverArm) (string, error) {
	handles := map[*Arm]*serverHandle{}
	spec := map[*Arm]serverArm{}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	var list []*Arm
	for _, a := range arms {
		h, err := env.startServer(a.kind)
		if err != nil {
			return "", err
		}
		handles[a.arm], spec[a.arm] = h, a
		list = append(list, a.arm)
		// warm up: connections, buffers, pools
		if _, err := drive(env.ctx(), h.Addr, path, a.conns, max(env.Budget.RunTime/2, 20*time.Millisecond), nil); err != nil {
			return "", fmt.Errorf("%s: %w", a.arm.Name, err)
		}
	}
	r.Arms = append(r.Arms, list...)
	err := env.measureArms(r, list, func(a *Arm, _ int) error {
		s := spec[a]
		rps, cpu, allocs, conns, err := serverLoad(env.ctx(), handles[a], s.conns, env.Budget.RunTime*2, path)
		if err != nil {
			return err
		}
		a.record(ReqPerSec.Name, rps)
		a.record(ServerCPUUs.Name, cpu)
		a.record(ServerAllocs.Name, allocs)
		a.record(ConnsPer1k.Name, conns)
		return nil
	})
	return handles[arms[0].arm].where(), err
}
