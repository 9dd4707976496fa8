package ws

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// The examples of RFC 6455 §5.7, byte for byte.
var (
	rfcKey        = [4]byte{0x37, 0xfa, 0x21, 0x3d}
	rfcHello      = []byte{0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}
	rfcMaskHello  = []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}
	rfcHel        = []byte{0x01, 0x03, 0x48, 0x65, 0x6c}
	rfcLo         = []byte{0x80, 0x02, 0x6c, 0x6f}
	rfcPing       = []byte{0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f}
	rfcMaskedPong = []byte{0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}
	rfc256Header  = []byte{0x82, 0x7e, 0x01, 0x00}
	rfc64KHeader  = []byte{0x82, 0x7f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00}
)

func TestRFCExamples(t *testing.T) {
	tests := []struct {
		name    string
		frame   []byte
		role    Role // who reads it
		want    Header
		payload string // unmasked; "" when the example gives none
	}{
		{"unmasked text", rfcHello, Client, Header{Fin: true, Opcode: OpText, Length: 5}, "Hello"},
		{"masked text", rfcMaskHello, Server, Header{Fin: true, Opcode: OpText, Masked: true, Mask: rfcKey, Length: 5}, "Hello"},
		{"first fragment", rfcHel, Client, Header{Opcode: OpText, Length: 3}, "Hel"},
		{"last fragment", rfcLo, Client, Header{Fin: true, Opcode: OpContinuation, Length: 2}, "lo"},
		{"unmasked ping", rfcPing, Client, Header{Fin: true, Opcode: OpPing, Length: 5}, "Hello"},
		{"masked pong", rfcMaskedPong, Server, Header{Fin: true, Opcode: OpPong, Masked: true, Mask: rfcKey, Length: 5}, "Hello"},
		{"256 bytes binary", rfc256Header, Client, Header{Fin: true, Opcode: OpBinary, Length: 256}, ""},
		{"64 KiB binary", rfc64KHeader, Client, Header{Fin: true, Opcode: OpBinary, Length: 65536}, ""},
	}
	for _, tt := range tests {
		h, n, err := ParseHeader(tt.frame, Rules{Role: tt.role})
		if err != nil || h != tt.want {
			t.Errorf("%s: ParseHeader = %+v, %d, %v; want %+v", tt.name, h, n, err, tt.want)
			continue
		}
		if n != HeaderLen(h) {
			t.Errorf("%s: n = %d, HeaderLen = %d", tt.name, n, HeaderLen(h))
		}
		if got := AppendHeader(nil, h); !bytes.Equal(got, tt.frame[:n]) {
			t.Errorf("%s: AppendHeader = % x, want % x", tt.name, got, tt.frame[:n])
		}
		if tt.payload == "" {
			continue
		}
		payload := bytes.Clone(tt.frame[n:])
		if int64(len(payload)) != h.Length {
			t.Fatalf("%s: payload of %d bytes, header says %d", tt.name, len(payload), h.Length)
		}
		if h.Masked {
			Mask(h.Mask, 0, payload)
		}
		if string(payload) != tt.payload {
			t.Errorf("%s: payload %q, want %q", tt.name, payload, tt.payload)
		}
		var frame []byte
		if h.Masked {
			frame = AppendClientFrame(nil, h.Opcode, h.Fin, h.Mask, payload)
		} else {
			frame = AppendServerFrame(nil, h.Opcode, h.Fin, payload)
		}
		if !bytes.Equal(frame, tt.frame) {
			t.Errorf("%s: Append frame = % x, want % x", tt.name, frame, tt.frame)
		}
		if string(payload) != tt.payload {
			t.Errorf("%s: AppendClientFrame modified its payload", tt.name)
		}
	}
}

func TestParseHeaderErrors(t *testing.T) {
	server, client := Rules{Role: Server}, Rules{Role: Client}
	deflate := Rules{Role: Client, Deflate: true}
	tests := []struct {
		name  string
		in    []byte
		rules Rules
		err   *Error
		code  CloseCode // the close code to fail the connection with
	}{
		{"reserved data opcode 3", []byte{0x83, 0x00}, client, ErrReservedOpcode, 1002},
		{"reserved data opcode 7", []byte{0x87, 0x00}, client, ErrReservedOpcode, 1002},
		{"reserved control opcode B", []byte{0x8b, 0x00}, client, ErrReservedOpcode, 1002},
		{"reserved control opcode F", []byte{0x8f, 0x00}, client, ErrReservedOpcode, 1002},
		{"ping without FIN", []byte{0x09, 0x00}, client, ErrFragmentedControl, 1002},
		{"close without FIN", []byte{0x08, 0x00}, client, ErrFragmentedControl, 1002},
		{"pong without FIN", []byte{0x0a, 0x00}, client, ErrFragmentedControl, 1002},
		{"ping of 126 bytes", []byte{0x89, 0x7e, 0x00, 0x7e}, client, ErrControlTooLong, 1002},
		{"close with a 64-bit length", []byte{0x88, 0x7f}, client, ErrControlTooLong, 1002},
		{"RSV1 not negotiated", []byte{0xc1, 0x00}, client, ErrReservedBits, 1002},
		{"RSV2", []byte{0xa1, 0x00}, deflate, ErrReservedBits, 1002},
		{"RSV3", []byte{0x91, 0x00}, deflate, ErrReservedBits, 1002},
		{"RSV1 on a ping under deflate", []byte{0xc9, 0x00}, deflate, ErrCompressedControl, 1002},
		{"RSV1 on a continuation under deflate", []byte{0xc0, 0x00}, deflate, ErrCompressedFragment, 1002},
		{"64-bit length, top bit set", []byte{0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0}, client, ErrLengthTopBit, 1002},
		{"64-bit length 2^64-1", []byte{0x82, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, client, ErrLengthTopBit, 1002},
		{"16-bit length of 125", []byte{0x82, 0x7e, 0x00, 0x7d}, client, ErrNonMinimalLength, 1002},
		{"16-bit length of 0", []byte{0x82, 0x7e, 0x00, 0x00}, client, ErrNonMinimalLength, 1002},
		{"64-bit length of 65535", []byte{0x82, 0x7f, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, client, ErrNonMinimalLength, 1002},
		{"64-bit length of 5", []byte{0x82, 0x7f, 0, 0, 0, 0, 0, 0, 0, 5}, client, ErrNonMinimalLength, 1002},
		{"unmasked client frame", rfcHello, server, ErrUnmaskedClientFrame, 1002},
		{"masked server frame", rfcMaskHello, client, ErrMaskedServerFrame, 1002},
		{"over MaxPayload", []byte{0x82, 0x7e, 0x01, 0x00}, Rules{Role: Client, MaxPayload: 255}, ErrFrameTooLarge, 1009},
		{"over DefaultMaxPayload", []byte{0x82, 0x7f, 0, 0, 0, 0, 0x01, 0, 0, 1}, client, ErrFrameTooLarge, 1009},
		{"2^63-1 under the default", []byte{0x82, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, client, ErrFrameTooLarge, 1009},
	}
	for _, tt := range tests {
		h, n, err := ParseHeader(tt.in, tt.rules)
		if err != tt.err || n != 0 || h != (Header{}) {
			t.Errorf("%s: ParseHeader(% x) = %+v, %d, %v; want %v", tt.name, tt.in, h, n, err, tt.err)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code {
			t.Errorf("%s: %v is not an *Error with code %d", tt.name, err, tt.code)
		}
	}
}

func TestParseHeaderAccepts(t *testing.T) {
	tests := []struct {
		name  string
		in    []byte
		rules Rules
		want  Header
	}{
		{"RSV1 on text under deflate", []byte{0xc1, 0x00}, Rules{Role: Client, Deflate: true}, Header{Fin: true, Rsv1: true, Opcode: OpText}},
		{"RSV1 on an unfinished binary under deflate", []byte{0x42, 0x01}, Rules{Role: Client, Deflate: true}, Header{Rsv1: true, Opcode: OpBinary, Length: 1}},
		{"close of 125 bytes", []byte{0x88, 0x7d}, Rules{Role: Client}, Header{Fin: true, Opcode: OpClose, Length: 125}},
		{"2^63-1 without a limit", []byte{0x82, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, Rules{Role: Client, MaxPayload: -1},
			Header{Fin: true, Opcode: OpBinary, Length: 1<<63 - 1}},
		{"exactly MaxPayload", []byte{0x82, 0x7e, 0x01, 0x00}, Rules{Role: Client, MaxPayload: 256}, Header{Fin: true, Opcode: OpBinary, Length: 256}},
		{"exactly the default", []byte{0x82, 0x7f, 0, 0, 0, 0, 0x01, 0, 0, 0}, Rules{Role: Client}, Header{Fin: true, Opcode: OpBinary, Length: DefaultMaxPayload}},
	}
	for _, tt := range tests {
		h, n, err := ParseHeader(tt.in, tt.rules)
		if err != nil || h != tt.want || n != len(tt.in) {
			t.Errorf("%s: ParseHeader = %+v, %d, %v; want %+v, %d", tt.name, h, n, err, tt.want, len(tt.in))
		}
	}
}

// Every proper prefix of a good header needs more; the first two bytes
// decide the errors that they can.
func TestParseHeaderNeedMore(t *testing.T) {
	frames := []struct {
		b []byte
		r Rules
	}{
		{rfcHello[:2], Rules{Role: Client}},
		{rfcMaskHello[:6], Rules{Role: Server}},
		{rfc256Header, Rules{Role: Client}},
		{rfc64KHeader, Rules{Role: Client}},
		{AppendHeader(nil, Header{Fin: true, Opcode: OpBinary, Masked: true, Mask: rfcKey, Length: 1 << 20}), Rules{Role: Server}},
	}
	for _, f := range frames {
		for k := range len(f.b) {
			if h, n, err := ParseHeader(f.b[:k], f.r); err != ErrNeedMore || n != 0 || h != (Header{}) {
				t.Errorf("ParseHeader(% x) = %+v, %d, %v; want ErrNeedMore", f.b[:k], h, n, err)
			}
		}
		if _, n, err := ParseHeader(f.b, f.r); err != nil || n != len(f.b) {
			t.Errorf("ParseHeader(% x) = %d, %v", f.b, n, err)
		}
	}
	// A bad first byte fails at once, before the length arrives.
	if _, _, err := ParseHeader([]byte{0x83, 0x7f}, Rules{Role: Client}); err != ErrReservedOpcode {
		t.Errorf("reserved opcode with the length still to come: %v", err)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	lengths := []int64{0, 1, 125, 126, 127, 0xffff, 0x10000, 1 << 32, 1<<63 - 1}
	for _, l := range lengths {
		for _, op := range []Opcode{OpText, OpBinary, OpContinuation} {
			for _, masked := range []bool{false, true} {
				h := Header{Fin: l%2 == 0, Opcode: op, Length: l, Masked: masked}
				if masked {
					h.Mask = [4]byte{1, 2, 3, byte(l)}
				}
				b := AppendHeader([]byte("prefix"), h)[len("prefix"):]
				role := Client
				if masked {
					role = Server
				}
				got, n, err := ParseHeader(b, Rules{Role: role, MaxPayload: -1})
				if err != nil || got != h || n != len(b) || n != HeaderLen(h) {
					t.Errorf("round trip of %+v: % x → %+v, %d, %v", h, b, got, n, err)
				}
			}
		}
	}
}

func TestAppendHeaderNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AppendHeader with a negative length did not panic")
		}
	}()
	AppendHeader(nil, Header{Length: -1})
}

// Every error's Reason fits in a close frame, so a connection can send it
// as the close reason.
func TestErrorReasonsFitACloseFrame(t *testing.T) {
	all := []*Error{ErrReservedOpcode, ErrFragmentedControl, ErrControlTooLong, ErrReservedBits,
		ErrCompressedControl, ErrCompressedFragment, ErrLengthTopBit, ErrNonMinimalLength,
		ErrUnmaskedClientFrame, ErrMaskedServerFrame, ErrFrameTooLarge, ErrUnexpectedContinuation,
		ErrMessageNotFinished, ErrMessageTooLarge, ErrCloseOneByte, ErrCloseCodeInvalid,
		ErrCloseReasonUTF8, ErrInvalidUTF8}
	for _, e := range all {
		if len(e.Reason) > MaxCloseReason || e.Reason == "" || !e.Code.Valid() {
			t.Errorf("%v: reason of %d bytes, code %d", e, len(e.Reason), e.Code)
		}
		if !strings.HasPrefix(e.Error(), "ws: ") {
			t.Errorf("%q does not name the package", e.Error())
		}
	}
}

func TestOpcodeString(t *testing.T) {
	for op, want := range map[Opcode]string{OpText: "text", OpPong: "pong", 3: "reserved", 0xF: "reserved"} {
		if op.String() != want {
			t.Errorf("Opcode(%d).String() = %q, want %q", op, op.String(), want)
		}
	}
	if !OpPing.IsControl() || OpText.IsControl() || !OpBinary.IsData() || OpContinuation.IsData() {
		t.Error("IsControl or IsData wrong")
	}
}
