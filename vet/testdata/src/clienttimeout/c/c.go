// Package c gives http.DefaultClient a Timeout: its uses are bounded.
package c

import (
	"net/http"
	"time"
)

func init() { http.DefaultClient.Timeout = 30 * time.Second }

func get(u string) (*http.Response, error) { return http.Get(u) }

func defaultGet(u string) (*http.Response, error) { return http.DefaultClient.Get(u) }
