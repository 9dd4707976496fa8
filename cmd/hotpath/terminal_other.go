//go:build !linux

package main

import "io"

// isTerminal is false off Linux: no progress bar there.
func isTerminal(io.Writer) bool { return false }
