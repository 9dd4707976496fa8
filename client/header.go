package client

// Header field values as both engines write and read them.

import "github.com/hotpathhq/hotpath/wire"

// headerHasToken reports whether any of the values lists token.
func headerHasToken(vv []string, token string) bool {
	for _, v := range vv {
		if wire.HasToken([]byte(v), token) {
			return true
		}
	}
	return false
}

// splitList splits a comma-separated field value, trimming whitespace.
func splitList(v string) []string {
	var out []string
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		if s := wire.TrimOWS(v[:i]); s != "" {
			out = append(out, s)
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return out
}
