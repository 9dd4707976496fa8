//go:build go1.21

package route

import (
	"net/http"
	"strings"
)

func oldA(w http.ResponseWriter, r *http.Request) {}
func oldB(w http.ResponseWriter, r *http.Request) {}

// must not flag: this file is built as go 1.21 (its build constraint lowers the
// version), which has no method or wildcard patterns.
func oldHandler(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/a/"):
		oldA(w, r)
	case strings.HasPrefix(r.URL.Path, "/b/"):
		oldB(w, r)
	}
}
