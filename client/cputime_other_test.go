//go:build !unix

package client

import "time"

// cpuTime is the process's CPU time so far: not read on this platform
// (BenchmarkH2Client's cpu-ns/op then reads 0).
func cpuTime() (user, sys time.Duration) { return 0, 0 }
