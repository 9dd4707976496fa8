// Package d holds more must-not-flag cases of HP016.
package d

import (
	"net/http"
	"time"
)

// Two fields set in one assignment after the literal.
func goodMultiAssign(u string) (*http.Response, error) {
	c := http.Client{}
	c.Timeout, c.Jar = 10*time.Second, nil
	return c.Get(u)
}

// Set through the pointer.
func goodThroughPointer(u string) (*http.Response, error) {
	c := &http.Client{}
	(*c).Timeout = time.Second
	return c.Get(u)
}

// A package-level Transport whose ResponseHeaderTimeout init sets.
var tr = &http.Transport{}

func init() { tr.ResponseHeaderTimeout = 5 * time.Second }

var streaming = &http.Client{Transport: tr}

// Reading http.DefaultClient's Timeout sends nothing.
func goodReadTimeout() time.Duration { return http.DefaultClient.Timeout }

// Replacing http.DefaultClient with a bounded client.
func goodReplaceDefault() { http.DefaultClient = &http.Client{Timeout: 30 * time.Second} }

// An inline client with a Timeout.
func goodInline(u string) (*http.Response, error) {
	return (&http.Client{Timeout: time.Second}).Get(u)
}

// A type of its own named Client is not net/http's.
type Client struct{ Retries int }

var own = &Client{}

// Embedding a bounded http.Client.
type wrapped struct{ http.Client }

var w = wrapped{Client: http.Client{Timeout: time.Minute}}

func goodIgnored(u string) (*http.Response, error) {
	//hotpath:ignore HP016 the caller runs this under a deadline of its own
	return http.Get(u)
}
