//go:build linux && race

package client

import "syscall"

// With the race detector, reads and writes go through package syscall,
// whose annotations tell the detector that the kernel wrote the buffer and
// that a write to one socket happens before the read of it on another (a
// test's handler sets a variable, then answers): raw system calls would
// hide both. The path through RawConn is the same.

func sysRead(fd uintptr, p []byte) (int, syscall.Errno) { return errnoOf(syscall.Read(int(fd), p)) }

func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) { return errnoOf(syscall.Write(int(fd), p)) }

func errnoOf(n int, err error) (int, syscall.Errno) {
	if err != nil {
		return 0, err.(syscall.Errno)
	}
	return n, 0
}
