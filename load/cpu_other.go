//go:build !unix

package load

// cpuTime is not measured on this system: zero.
func cpuTime() cpuUsage { return cpuUsage{} }
