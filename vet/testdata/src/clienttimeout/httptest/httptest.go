// Package httptest is named after net/http/httptest: its clients are
// throwaway by design, and HP016 does not report them.
package httptest

import "net/http"

// Client returns a client for a test server.
func Client() *http.Client { return &http.Client{} }
