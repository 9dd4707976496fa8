//go:build !go1.27

package server

import (
	"runtime"
	"strconv"
	"strings"
)

// Differences from net/http before Go 1.27 only: Go 1.27's net/http
// counts header fields as hotpath does, and from Go 1.26.9 on (the
// security release of 2026-10-08, GO-2026-6613) it frames a 2xx answer
// to CONNECT as hotpath does.
func init() {
	const fields = "more than 500 header fields: 431; net/http has no count limit before Go 1.27"
	const connect = "a 2xx answer to CONNECT carries no Content-Length and the connection closes after it " +
		"(a tunnel, RFC 9110 §9.3.6), as net/http from Go 1.26.9 and 1.27; before, net/http framed it with a Content-Length"
	diffs := map[string]string{
		"vectors/limits/501-fields":  fields,
		"vectors/limits/1000-fields": fields,
	}
	if !goPatchAtLeast(9) {
		for _, name := range []string{
			"vectors/reqTests/connect-domain", "vectors/reqTests/connect-ip", "vectors/reqTests/connect-rpc-path",
			"vectors/validatesHost/connect-no-host", "vectors/reqTests/connect-domain+host", "vectors/reqTests/connect-ip+host",
			"vectors/reqTests/connect-rpc-path+host", "vectors/targets/connect", "vectors/targets/connect-ipv6",
		} {
			diffs[name] = connect
		}
	}
	for name, reason := range diffs {
		deliberateDifferences[name] = reason
	}
}

// goPatchAtLeast reports whether the running Go 1.26 is patch release n
// or later (a development build counts as later).
func goPatchAtLeast(n int) bool {
	v, ok := strings.CutPrefix(runtime.Version(), "go1.26.")
	if !ok {
		return true
	}
	if i := strings.IndexAny(v, " -+"); i >= 0 {
		v = v[:i]
	}
	p, err := strconv.Atoi(v)
	return err != nil || p >= n
}
