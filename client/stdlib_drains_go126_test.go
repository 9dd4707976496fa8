//go:build !go1.27

package client_test

// stdlibDrains: up to Go 1.26 http.Transport closes the connection of a
// body closed before its end.
const stdlibDrains = false
