//go:build linux

package lab

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinToCPU binds every thread of this process to one CPU, as the GUIDE's
// server measurements do, and reports whether it could. Threads the Go
// runtime starts later inherit the mask from the thread that starts them.
func pinToCPU(cpu int) bool {
	var set unix.CPUSet
	set.Set(cpu)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return unix.SchedSetaffinity(0, &set) == nil
	}
	ok := true
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if unix.SchedSetaffinity(tid, &set) != nil {
			ok = false
		}
	}
	return ok
}
