package main

import (
	"testing"

	"github.com/hotpathhq/hotpath/load"
)

// --body reads what load.ResponseBody's String writes, and nothing else.
func TestParseResponseBody(t *testing.T) {
	for s, want := range map[string]load.ResponseBody{"drain": {Mode: load.DrainBody}, "close": {Mode: load.CloseBody}, "limit:100": {Mode: load.LimitBody, Limit: 100}} {
		if got, err := parseResponseBody(s); err != nil || got != want || got.String() != s {
			t.Errorf("parseResponseBody(%q) = %v, %v", s, got, err)
		}
	}
	for _, bad := range []string{"limit:", "limit:-1", "keep", "limit:x"} {
		if _, err := parseResponseBody(bad); err == nil {
			t.Errorf("parseResponseBody(%q) accepted", bad)
		}
	}
}
