package lab

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hotpathhq/hotpath/load"
)

// drive runs hotpath's load generator (package load, the engine behind
// `hotpath load`: its fast HTTP/1.1 engine) against path on addr with
// conns keep-alive connections for d, closed loop. check, if set, sees
// each response body (for same-work checks). A run so short that no
// request was sent before it ended (the smoke budget's 2 ms on a busy
// machine) is run again, longer, up to firstResponseWait: one with
// nothing measured would fail. Every response must be a 2xx.
func drive(ctx context.Context, addr, path string, conns int, d time.Duration, check func(body []byte)) (*load.Result, error) {
	cfg := load.Config{URL: "http://" + addr + path, Connections: conns, Engine: load.EngineFast}
	if check != nil {
		var mu sync.Mutex
		cfg.CheckResponse = func(_ int, body []byte) error {
			mu.Lock()
			defer mu.Unlock()
			check(body)
			return nil
		}
	}
	for {
		cfg.Duration = d
		res, err := load.Run(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if res.Sent == 0 && d < firstResponseWait {
			d *= 4
			continue
		}
		var ok int64
		for code, n := range res.Status {
			if code[0] == '2' {
				ok += n
			}
		}
		if res.Errors > 0 || ok != res.Requests || res.Requests == 0 {
			return nil, fmt.Errorf("lab: load run: %d responses, status %v, errors %v", res.Requests, res.Status, res.ErrorsByKind)
		}
		return res, nil
	}
}

// firstResponseWait bounds how long a run is stretched to get its first
// response.
const firstResponseWait = 10 * time.Second

// serverLoad runs one closed-loop run of hotpath's load generator against
// path on h and returns the request rate, the server's CPU-µs and
// allocations per request, and the connections opened per 1,000 requests
// beyond the first conns.
func serverLoad(ctx context.Context, h *serverHandle, conns int, d time.Duration, path string) (rps, cpuUs, allocs, connsPer1k float64, err error) {
	s0, err := h.Stats()
	if err != nil {
		return
	}
	res, err := drive(ctx, h.Addr, path, conns, d, nil)
	if err != nil {
		return
	}
	s1, err := h.Stats()
	if err != nil {
		return
	}
	n := float64(res.Requests)
	reopened := float64(max(0, res.Conns.Opened-int64(conns)))
	return res.ReqPerS, float64((s1.CPU - s0.CPU).Microseconds()) / n, float64(s1.Mallocs-s0.Mallocs) / n, reopened * 1000 / n, nil
}
