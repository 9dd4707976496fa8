package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hotpathhq/hotpath/load"
)

// parseResponseBody parses --body: "drain", "close" or "limit:N" (N
// bytes, N ≥ 0), the text form load.ResponseBody's String writes.
func parseResponseBody(s string) (load.ResponseBody, error) {
	switch {
	case s == "drain" || s == "":
		return load.ResponseBody{Mode: load.DrainBody}, nil
	case s == "close":
		return load.ResponseBody{Mode: load.CloseBody}, nil
	case strings.HasPrefix(s, "limit:"):
		n, err := strconv.ParseInt(s[len("limit:"):], 10, 64)
		if err != nil || n < 0 {
			return load.ResponseBody{}, fmt.Errorf("body mode %q: want limit:N with N a whole number of bytes ≥ 0", s)
		}
		return load.ResponseBody{Mode: load.LimitBody, Limit: n}, nil
	}
	return load.ResponseBody{}, fmt.Errorf("unknown body mode %q: use drain, close or limit:N", s)
}
