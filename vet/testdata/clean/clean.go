// Package clean has no findings.
package clean

import "strings"

// Upper does not touch net/http.
func Upper(s string) string { return strings.ToUpper(s) }
