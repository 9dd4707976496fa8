//go:build !go1.27

package client

// stdlibDrainsOnClose: up to Go 1.26 http.Transport closes the connection
// of a response body closed before its end.
const stdlibDrainsOnClose = false
