// Package client stands in for hotpath's client package (its New drains
// bodies on Close), so that testdata can import it.
package client

import "net/http"

// New returns a client whose bodies are drained on Close.
func New() *http.Client { return &http.Client{} }
