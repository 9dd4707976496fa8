package wire

import "testing"

// TestIndexCtlInValueFirst checks the word-at-a-time scan's index (the
// one a parse error names) against a byte-by-byte one, for every length
// a short value, a whole word and the overlapping last word take: a
// bad byte at each position, alone and with a second one after it, on
// both instantiations (string and []byte).
func TestIndexCtlInValueFirst(t *testing.T) {
	naive := func(v []byte) int {
		for i, c := range v {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return i
			}
		}
		return -1
	}
	check := func(v []byte) {
		t.Helper()
		want := naive(v)
		if got := indexCtlInValue(v); got != want {
			t.Fatalf("indexCtlInValue(%q) = %d, want %d", v, got, want)
		}
		if got := indexCtlInValue(string(v)); got != want {
			t.Fatalf("indexCtlInValue(string %q) = %d, want %d", v, got, want)
		}
	}
	for n := 0; n <= 27; n++ {
		v := make([]byte, n)
		fill := func() {
			for i := range v {
				v[i] = "a\t\x80~ \xff\x7e\x20"[i%8]
			}
		}
		fill()
		check(v)
		for pos := 0; pos < n; pos++ {
			for _, c := range []byte{0, '\r', '\n', 0x1f, 0x7f, '\t', 0x80, 0x20} {
				fill()
				v[pos] = c
				check(v)
				for second := pos + 1; second < n; second++ {
					v[second] = '\n'
					check(v)
					v[second] = "a\t\x80~ \xff\x7e\x20"[second%8]
				}
			}
		}
	}
}

// FuzzIndexCtlInValue compares the word-at-a-time scan with the rule
// byte by byte on any input, as bytes and as a string.
func FuzzIndexCtlInValue(f *testing.F) {
	for _, s := range []string{"", "a", "text/plain; charset=utf-8", "127.0.0.1:8080", "a\tb\x7f", "0123456789abcdef\r\n", "\x80\xff\x1f"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		want := -1
		for i, c := range v {
			if ctlInValue(c) {
				want = i
				break
			}
		}
		if got := indexCtlInValue(v); got != want {
			t.Fatalf("indexCtlInValue(%q) = %d, want %d", v, got, want)
		}
		if got := indexCtlInValue(string(v)); got != want {
			t.Fatalf("indexCtlInValue(string %q) = %d, want %d", v, got, want)
		}
	})
}
