//go:build !linux

package client

import "net"

// fastSocket returns nc: the raw-system-call socket (sock_linux.go) is for
// Linux only.
func fastSocket(nc net.Conn) net.Conn { return nc }
