// Package b has no time import: the fixes add it.
package b

import "net/http"

var client = &http.Client{} // want `http.Client has no Timeout`

func multiline() *http.Client {
	return &http.Client{ // want `http.Client has no Timeout`
		Transport: http.DefaultTransport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
}

func viaNew() *http.Client {
	c := new(http.Client) // want `new\(http.Client\) has no Timeout`
	c.Jar = nil
	return c
}

// A zero Timeout bounds nothing: http.Get below stays flagged.
func init() { http.DefaultClient.Timeout = 0 }

func get(u string) (*http.Response, error) {
	return http.Get(u) // want `http.Get sends with http.DefaultClient`
}
