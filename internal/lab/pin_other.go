//go:build !linux

package lab

// pinToCPU is not supported on this platform.
func pinToCPU(int) bool { return false }
