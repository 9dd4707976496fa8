//go:build go1.27

package client

// stdlibDrainsOnClose: from Go 1.27 http.Transport drains a response body
// closed before its end (golang/go#77370).
const stdlibDrainsOnClose = true
