// Package demo is a small module with one finding per line marked BAD, for
// the hotpath vet driver tests and for go vet -vettool.
package demo

import (
	"encoding/json"
	"net/http"
)

var client = &http.Client{} // BAD HP016

// Fetch decodes one value and closes the body undrained.
func Fetch(url string, v any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close() // BAD HP012
	return json.NewDecoder(resp.Body).Decode(v)
}

// Serve serves with no timeouts.
func Serve(h http.Handler) error {
	return http.ListenAndServe(":8080", h) // BAD HP013
}

// Probe is suppressed.
func Probe(url string) {
	resp, err := client.Get(url)
	if err != nil {
		return
	}
	resp.Body.Close() //nolint:undrained-body // health probe, never reused
}

// Leak never closes the body: HP015, reported only when asked for.
func Leak(url string) int {
	resp, err := client.Get(url) // BAD HP015 (off by default)
	if err != nil {
		return 0
	}
	return resp.StatusCode
}
