//go:build !go1.27

package server

// Differences from net/http before Go 1.27 only: Go 1.27's net/http
// counts header fields and frames a 2xx answer to CONNECT as hotpath
// does.
func init() {
	const fields = "more than 500 header fields: 431; net/http has no count limit before Go 1.27"
	const connect = "a 2xx answer to CONNECT carries no Content-Length and the connection closes after it " +
		"(a tunnel, RFC 9110 §9.3.6), as net/http from Go 1.27; before, net/http framed it with a Content-Length"
	for name, reason := range map[string]string{
		"vectors/limits/501-fields":              fields,
		"vectors/limits/1000-fields":             fields,
		"vectors/reqTests/connect-domain":        connect,
		"vectors/reqTests/connect-ip":            connect,
		"vectors/reqTests/connect-rpc-path":      connect,
		"vectors/validatesHost/connect-no-host":  connect,
		"vectors/reqTests/connect-domain+host":   connect,
		"vectors/reqTests/connect-ip+host":       connect,
		"vectors/reqTests/connect-rpc-path+host": connect,
		"vectors/targets/connect":                connect,
		"vectors/targets/connect-ipv6":           connect,
	} {
		deliberateDifferences[name] = reason
	}
}
