package ws

import (
	"bytes"
	"strings"
	"testing"
)

// validOnTheWire is §7.4 and the IANA registry written out.
func validOnTheWire(c int) bool {
	switch {
	case c < 1000, c == 1004, c == 1005, c == 1006, c == 1015:
		return false
	case c <= 1014:
		return true
	case c < 3000:
		return false
	}
	return c <= 4999
}

func TestCloseCodeValid(t *testing.T) {
	for c := range 1 << 16 {
		if CloseCode(c).Valid() != validOnTheWire(c) {
			t.Errorf("CloseCode(%d).Valid() = %v", c, !validOnTheWire(c))
		}
	}
}

func TestParseClose(t *testing.T) {
	long := strings.Repeat("r", MaxCloseReason)
	tests := []struct {
		name    string
		payload []byte
		code    CloseCode
		reason  string
		err     *Error
	}{
		{"empty", nil, CloseNoStatus, "", nil},
		{"code only", []byte{0x03, 0xe8}, CloseNormal, "", nil},
		{"code and reason", []byte("\x03\xe9bye"), CloseGoingAway, "bye", nil},
		{"UTF-8 reason", []byte("\x0f\xa0κόσμε"), 4000, "κόσμε", nil},
		{"longest reason", append([]byte{0x0b, 0xb8}, long...), 3000, long, nil},
		{"one byte", []byte{0x03}, 0, "", ErrCloseOneByte},
		{"code 0", []byte{0, 0}, 0, "", ErrCloseCodeInvalid},
		{"code 999", []byte{0x03, 0xe7}, 0, "", ErrCloseCodeInvalid},
		{"code 1004", []byte{0x03, 0xec}, 0, "", ErrCloseCodeInvalid},
		{"code 1005", []byte{0x03, 0xed}, 0, "", ErrCloseCodeInvalid},
		{"code 1006", []byte{0x03, 0xee}, 0, "", ErrCloseCodeInvalid},
		{"code 1015", []byte{0x03, 0xf7}, 0, "", ErrCloseCodeInvalid},
		{"code 1016", []byte{0x03, 0xf8}, 0, "", ErrCloseCodeInvalid},
		{"code 2999", []byte{0x0b, 0xb7}, 0, "", ErrCloseCodeInvalid},
		{"code 5000", []byte{0x13, 0x88}, 0, "", ErrCloseCodeInvalid},
		{"code 65535", []byte{0xff, 0xff}, 0, "", ErrCloseCodeInvalid},
		{"reason not UTF-8", []byte("\x03\xe8\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80edited"), 0, "", ErrCloseReasonUTF8},
		{"reason truncated", []byte("\x03\xe8\xce"), 0, "", ErrCloseReasonUTF8},
		{"over 125 bytes", append([]byte{0x03, 0xe8}, long+"x"...), 0, "", ErrControlTooLong},
	}
	for _, tt := range tests {
		code, reason, err := ParseClose(tt.payload)
		if code != tt.code || string(reason) != tt.reason || err != errOrNil(tt.err) {
			t.Errorf("%s: ParseClose = %d, %q, %v; want %d, %q, %v", tt.name, code, reason, err, tt.code, tt.reason, tt.err)
		}
	}
	if ErrCloseReasonUTF8.Code != 1007 || ErrCloseCodeInvalid.Code != 1002 || ErrCloseOneByte.Code != 1002 {
		t.Error("close payload errors carry the wrong codes")
	}
}

func errOrNil(e *Error) error {
	if e == nil {
		return nil
	}
	return e
}

func TestAppendClose(t *testing.T) {
	if b := AppendClose([]byte("x"), CloseNormal, "bye"); !bytes.Equal(b, []byte("x\x03\xe8bye")) {
		t.Errorf("AppendClose = %q", b)
	}
	if b := AppendClose(nil, CloseNoStatus, ""); len(b) != 0 {
		t.Errorf("AppendClose without a code = %q", b)
	}
	for _, c := range []CloseCode{CloseNormal, CloseMessageTooBig, 3000, 4999} {
		code, reason, err := ParseClose(AppendClose(nil, c, "κόσμε"))
		if code != c || string(reason) != "κόσμε" || err != nil {
			t.Errorf("round trip of %d: %d, %q, %v", c, code, reason, err)
		}
	}
	for name, f := range map[string]func(){
		"code 1006":         func() { AppendClose(nil, CloseAbnormal, "") },
		"code 999":          func() { AppendClose(nil, 999, "") },
		"reason of 124":     func() { AppendClose(nil, CloseNormal, strings.Repeat("r", 124)) },
		"reason, no status": func() { AppendClose(nil, CloseNoStatus, "why") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AppendClose with %s did not panic", name)
				}
			}()
			f()
		}()
	}
}
