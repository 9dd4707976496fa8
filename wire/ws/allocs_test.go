package ws

import (
	"strings"
	"testing"
)

// The hot path allocates nothing: parsing and writing frames, masking,
// validating text, close frames and the handshake's accept key.

func TestAllocs(t *testing.T) {
	buf := make([]byte, 0, 1<<16)
	payload := make([]byte, 4096)
	text := []byte(strings.Repeat("Hello, κόσμε! ", 100))
	closeFrame := AppendClose(nil, CloseGoingAway, "restart")
	key := []byte("dGhlIHNhbXBsZSBub25jZQ==")
	offer := []byte("permessage-deflate; client_max_window_bits; server_max_window_bits=10, permessage-deflate")
	var u UTF8
	var a Assembler
	cases := []struct {
		name string
		f    func()
	}{
		{"ParseHeader", func() {
			for _, b := range [][]byte{rfcMaskHello, rfcHello} {
				ParseHeader(b, Rules{Role: Server})
				ParseHeader(b, Rules{Role: Client})
			}
			ParseHeader(rfc64KHeader, Rules{Role: Client})
			ParseHeader([]byte{0x83, 0}, Rules{}) // an error costs nothing either
		}},
		{"AppendHeader and frames", func() {
			b := AppendHeader(buf[:0], Header{Fin: true, Opcode: OpBinary, Length: 1 << 20, Masked: true})
			b = AppendServerFrame(b, OpText, true, payload)
			AppendClientFrame(b, OpBinary, true, rfcKey, payload)
		}},
		{"Mask", func() { Mask(rfcKey, 3, payload) }},
		{"UTF8", func() {
			u.Reset()
			u.Write(text[:7])
			u.Write(text[7:])
			u.Done()
		}},
		{"Assembler", func() {
			a.Frame(Header{Opcode: OpText, Length: 3})
			a.Frame(Header{Fin: true, Opcode: OpPing})
			a.Frame(Header{Fin: true, Opcode: OpContinuation, Length: 3})
		}},
		{"ParseClose and AppendClose", func() {
			ParseClose(closeFrame)
			ParseClose([]byte{0x03, 0xee})
			AppendClose(buf[:0], CloseNormal, "bye")
		}},
		{"AppendAcceptKey and ValidKey", func() {
			AppendAcceptKey(buf[:0], key)
			ValidKey(key)
		}},
		{"FirstDeflateOffer and AppendDeflate", func() {
			d, _, _ := FirstDeflateOffer(offer)
			AppendDeflate(buf[:0], d)
		}},
	}
	for _, c := range cases {
		if n := testing.AllocsPerRun(100, c.f); n != 0 {
			t.Errorf("%s allocates %v times per run, want 0", c.name, n)
		}
	}
}
