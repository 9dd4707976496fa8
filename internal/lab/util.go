package lab

import (
	"strconv"
	"strings"
)

func itoa(n int) string { return strconv.Itoa(n) }

// groupDigits prints n with thousands separators: 3574 → "3,574".
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
