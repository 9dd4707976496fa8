//go:build unix

package load

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time this process has used so far.
func cpuTime() cpuUsage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return cpuUsage{}
	}
	return cpuUsage{
		user: time.Duration(ru.Utime.Nano()),
		sys:  time.Duration(ru.Stime.Nano()),
	}
}
