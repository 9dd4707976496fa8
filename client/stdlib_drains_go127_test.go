//go:build go1.27

package client_test

// stdlibDrains: Go 1.27's http.Transport drains bodies closed early.
const stdlibDrains = true
