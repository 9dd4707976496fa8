//go:build !linux

package tcpcork

import "net"

// Set is Linux's TCP_CORK: elsewhere nothing is corked.
func Set(nc net.Conn, on bool) bool { return false }
