package wire_test

import (
	"errors"
	"testing"

	"github.com/hotpathhq/hotpath/wire"
)

// ParseContentLength is the module's one Content-Length parser (the
// server, the client and load on both protocols use it): 1*DIGIT, up to
// 18 digits, the same answer for a string and for bytes.
func TestParseContentLength(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int64
		want error
	}{
		{"0", 0, nil},
		{"42", 42, nil},
		{"007", 7, nil},
		{"999999999999999999", 999999999999999999, nil},
		{"1000000000000000000", 0, wire.ErrContentLengthTooBig},
		{"99999999999999999999999", 0, wire.ErrContentLengthTooBig},
		{"", 0, wire.ErrBadContentLength},
		{"+3", 0, wire.ErrBadContentLength},
		{"-1", 0, wire.ErrBadContentLength},
		{" 3", 0, wire.ErrBadContentLength},
		{"3 ", 0, wire.ErrBadContentLength},
		{"5, 5", 0, wire.ErrBadContentLength},
		{"0x10", 0, wire.ErrBadContentLength},
		{"1e3", 0, wire.ErrBadContentLength},
		{"12345678901234567890a", 0, wire.ErrBadContentLength},
	} {
		n, err := wire.ParseContentLength(tc.in)
		nb, errb := wire.ParseContentLength([]byte(tc.in))
		if !errors.Is(err, tc.want) || err == nil && n != tc.n || n != nb || err != errb {
			t.Errorf("%q: %d, %v (bytes: %d, %v); want %d, %v", tc.in, n, err, nb, errb, tc.n, tc.want)
		}
	}
	if a := testing.AllocsPerRun(100, func() { wire.ParseContentLength("12345") }); a != 0 {
		t.Errorf("%v allocations", a)
	}
}
